"""Which segments hold a column's largest or smallest value, as mark terms for BM25
(fit.superlatives says which and why; docs/excerpts.md, "Superlatives").

Where columns are found:
- tables with a header: a column is asked for by its name; columns that number rows rather
  than measure them (PID, PORT) are left out, as the table compressor leaves them out of its
  largest rows;
- directory listings (`ls -l`, `ls -lR`, `du`, `find -ls`, `tree -s`), whose sizes have no
  header: the largest and the smallest entry of the whole listing are the rows of a column
  named "size", folders left out (in `ls -l` a folder's size is its own block's; in `du`, where
  leaf folders are what is sized, a folder whose contents are listed is their total); and the
  oldest and the newest file, by their dates, the rows of a column named "age";
- JSON records: a numeric field that many records share (the lines holding `"price": 12.5` at
  one indentation, or on the lines of JSON Lines) is a column named by its key;
- logs, outside tables: a number named by the word before it (`latency_ms=5210`,
  `rows=98000`, `finished in 912.4s`, `took 4821 ms`), on MIN_RECORDS lines or more of one
  statement (that name, as many named numbers before it on the line), is a column named by
  that word, and by "time" or "size" when its unit is one; values in time units are compared
  in seconds, in byte units in bytes. A number that grows on every line (`batch 17`,
  `seq=2041`) counts things rather than measures them, and marks nothing.

A value that more than MAX_TIES rows share marks none of them: a question for the smallest of
a column of zeros has no one row to point at.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from ..compress.listing_parse import Entry
from ..compress.table_parse import Section, Table, find_tables
from ..compress.table_rows import is_id_column, numeric_values
from ..fit.superlatives import LEAST, MOST, column_words
from .date_order import listing_times
from .listing_rows import listed_entries

__all__ = ["MAX_TIES", "extreme_terms"]

MAX_TIES = 3
_MIN_RECORDS = 4  # lines holding a JSON key's or a log's named number: then it is a column
_TIME_UNITS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0,
    "seconds": 1.0, "min": 60.0, "mins": 60.0, "minutes": 60.0, "h": 3600.0, "hours": 3600.0,
}  # fmt: skip
_SIZE_UNITS = {
    "b": 1.0, "bytes": 1.0, "kb": 1e3, "kib": 1024.0, "mb": 1e6, "mib": 1024.0**2,
    "gb": 1e9, "gib": 1024.0**3, "tb": 1e12, "tib": 1024.0**4,
}  # fmt: skip
_UNITS = "|".join(sorted([*_TIME_UNITS, *_SIZE_UNITS, "%"], key=len, reverse=True))
# A number in a log line named by the word before it (`rows=98000`, `in 912.4s`), and its
# unit.
_NAMED_NUMBER = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z][A-Za-z_]{1,40})(?:\s*[=:]\s*|\s+)"
    rf"(?P<number>\d+(?:\.\d+)?)(?:\s?(?P<unit>(?i:{_UNITS})))?(?![\w.:/-])"
)
# Names of a time too short to be asked by a word of the question (an access log's
# `rt=0.212`, `rtt=35`): their numbers are a column named "time" ("the slowest request").
_TIME_NAMES = frozenset({"rt", "rtt", "dur", "lat"})
_DIGIT = re.compile(r"\d")
_TOTAL = re.compile(r"^(?:total|totals|sum|grand total)$", re.IGNORECASE)
# A JSON member whose value is a number; the key is at most 64 characters.
_JSON_NUMBER = re.compile(
    r'"((?:[^"\\]|\\.){1,64})"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?=[,}\]]|$)'
)


def extreme_terms(
    lines: list[str],
    starts: Sequence[int],
    listing: bool = False,
    tables: Sequence[Section] | None = None,
    entries: Sequence[tuple[int, Entry]] | None = None,
) -> dict[int, list[str]]:
    """Per segment (first lines `starts`, ascending) that holds some column's largest or
    smallest value, the mark terms of those columns. `listing`: the text is a directory
    listing (its compressor said so: reading one is too slow to try on every text);
    `tables` and `entries` (listed_entries, when `listing`): the tables and the listing's
    entries of `lines`, when the caller has read them already."""
    found: list[tuple[int, list[str]]] = []
    rows: set[int] = set()
    for section in find_tables(lines) if tables is None else tables:
        table = section.table
        if table is not None and table.header is not None:
            found.extend(_table_marks(table))
            rows.update(table.rows)
    found.extend(_json_marks(lines))
    # A listing's numbers are its sizes, a table's are its columns', read as such; named by
    # the word before them, they would be `root 4096` and `root 1`.
    if listing:
        found.extend(_listing_marks(listed_entries(lines) if entries is None else entries))
    else:
        found.extend(_log_marks(lines, rows))
    marks: dict[int, list[str]] = {}
    for line, terms in found:
        marks.setdefault(bisect_right(starts, line) - 1, []).extend(terms)
    # Once each: a row holding the largest of three columns is no more the answer.
    return {k: list(dict.fromkeys(terms)) for k, terms in marks.items()}


def _marked(rows: Sequence[tuple[int, float]], words: list[str]) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of the rows (line, value) holding the largest and the smallest
    value, each when at most MAX_TIES rows hold it."""
    values = {value for _, value in rows}
    if len(values) < 2:
        return []
    found: list[tuple[int, list[str]]] = []
    for mark, value in ((MOST, max(values)), (LEAST, min(values))):
        at = [line for line, x in rows if x == value]
        if len(at) <= MAX_TIES:
            found.extend((line, [mark, *(mark + word for word in words)]) for line in at)
    return found


def _table_marks(table: Table) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of the rows that hold a measuring column's largest or smallest."""
    found: list[tuple[int, list[str]]] = []
    # A row of totals (`strace -c`'s last, `df --total`'s) is no row among the others: it
    # holds every column's largest value, and answered "which syscall had the most errors?".
    summed = {r for r, row in enumerate(table.values) if any(_TOTAL.match(c) for c in row)}
    for c, name in enumerate(table.columns):
        words = column_words(name, tails=True)
        if not words or is_id_column(name):
            continue
        numbers = numeric_values([row[c] if c < len(row) else "" for row in table.values])
        if numbers is not None:
            rows = [
                (table.rows[r], x)
                for r, x in enumerate(numbers)
                if x is not None and r not in summed
            ]
            found.extend(_marked(rows, words))
    return found


_SIZE_WORDS = column_words("size")
_AGE_WORDS = column_words("age")


def _listing_marks(entries: Sequence[tuple[int, Entry]]) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of a listing's largest and smallest sized entries, and of its oldest
    and newest (`entries`: its entries by line, listed_entries). A folder is neither: in
    `ls -l` its size is a block's, in `du` the total of what it holds, and its time is that of
    the last change among its names."""
    files = [(line, entry) for line, entry in entries if not entry.is_dir]
    sizes = [(line, float(entry.size)) for line, entry in files if entry.size is not None]
    times = listing_times([entry.date for _, entry in files])
    ages = [(line, -when) for (line, _), when in zip(files, times, strict=True) if when]
    return _marked(sizes, _SIZE_WORDS) + _marked(ages, _AGE_WORDS)


def _json_marks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of the records holding a numeric JSON field's largest or smallest
    value: a key at one indentation, on _MIN_RECORDS lines or more, is a column."""
    columns: dict[tuple[int, str], list[tuple[int, float]]] = {}
    for i, line in enumerate(lines):
        if '":' not in line and '" :' not in line:
            continue  # most lines of most texts: no JSON member at all
        indent = len(line) - len(line.lstrip())
        for member in _JSON_NUMBER.finditer(line):
            columns.setdefault((indent, member[1]), []).append((i, float(member[2])))
    found: list[tuple[int, list[str]]] = []
    for (_, key), rows in columns.items():
        words = column_words(key, tails=True)
        if len(rows) >= _MIN_RECORDS and words and not is_id_column(key):
            found.extend(_marked(rows, words))
    return found


def _log_marks(lines: list[str], rows: set[int]) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of the lines holding the largest or smallest of a named number of
    one statement: `finished in 912.4s` among the scheduler's `job ... finished in ...s`.
    `rows`: the lines of tables, whose numbers their columns name."""
    # A statement is told by the number's name, its unit's kind and how many named numbers
    # come before it on the line: `batch 17 rows=98 in 3 ms` holds `in` third, `job x finished
    # in 9.1s` first. (The word before the name told them apart as well, at twice the cost.)
    columns: dict[tuple[str, str, int], list[tuple[int, float]]] = {}
    for i, line in enumerate(lines):
        if i in rows or _DIGIT.search(line) is None:
            continue
        for k, (name, number, unit) in enumerate(_NAMED_NUMBER.findall(line)):
            unit = unit.lower()
            if unit in _TIME_UNITS:
                kind, value = "time", float(number) * _TIME_UNITS[unit]
            elif not unit and name.lower() in _TIME_NAMES:
                kind, value = "time", float(number)
            elif unit in _SIZE_UNITS:
                kind, value = "size", float(number) * _SIZE_UNITS[unit]
            else:
                kind, value = unit, float(number)
            columns.setdefault((name.lower(), kind, k), []).append((i, value))
    found: list[tuple[int, list[str]]] = []
    for (name, kind, _), named in columns.items():
        words = column_words(name) + (column_words(kind) if kind in ("time", "size") else [])
        if len(named) < _MIN_RECORDS or not words or is_id_column(name) or _counts(named):
            continue
        found.extend(_marked(named, words))
    return found


def _counts(rows: list[tuple[int, float]]) -> bool:
    """Whether the values grow on every line: a sequence number, not a measure."""
    return all(b[1] > a[1] for a, b in zip(rows, rows[1:], strict=False))
