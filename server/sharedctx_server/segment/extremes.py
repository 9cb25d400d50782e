"""Which segments hold a table column's largest or smallest value, as mark terms for BM25
(fit.superlatives says which and why; docs/excerpts.md, "Superlatives").

Tables with a header: a column is asked for by its name. Columns that number rows rather than
measure them (PID, PORT) are left out, as the table compressor leaves them out of its largest
rows. And directory listings (`ls -l`, `ls -lR`, `du`, `find -ls`, `tree -s`), whose sizes
have no header: the largest and the smallest entry of the whole listing are marked as the
rows of a column named "size", folders left out (in `ls -l` a folder's size is its own
block's; in `du`, where leaf folders are what is sized, a folder whose contents are listed is
their total).
A value that more than MAX_TIES rows share marks none of them: a question for the smallest of
a column of zeros has no one row to point at.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ..compress.listing_parse import Entry, parse_listing
from ..compress.table_parse import Table, find_tables
from ..compress.table_rows import is_id_column, numeric_values
from ..fit.superlatives import LEAST, MOST, column_words

__all__ = ["MAX_TIES", "extreme_terms"]

MAX_TIES = 3


def extreme_terms(
    lines: list[str], starts: Sequence[int], listing: bool = False
) -> dict[int, list[str]]:
    """Per segment (first lines `starts`, ascending) that holds some column's largest or
    smallest value, the mark terms of those columns. `listing`: the text is a directory
    listing (its compressor said so: reading one is too slow to try on every text)."""
    found: list[tuple[int, list[str]]] = []
    for section in find_tables(lines):
        table = section.table
        if table is not None and table.header is not None:
            found.extend(_table_marks(table))
    if listing:
        found.extend(_listing_marks(lines))
    marks: dict[int, list[str]] = {}
    for line, terms in found:
        marks.setdefault(bisect_right(starts, line) - 1, []).extend(terms)
    # Once each: a row holding the largest of three columns is no more the answer.
    return {k: list(dict.fromkeys(terms)) for k, terms in marks.items()}


def _table_marks(table: Table) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of the rows that hold a measuring column's largest or smallest."""
    found: list[tuple[int, list[str]]] = []
    for c, name in enumerate(table.columns):
        words = column_words(name)
        if not words or is_id_column(name):
            continue
        numbers = numeric_values([row[c] if c < len(row) else "" for row in table.values])
        if numbers is None:
            continue
        present = [x for x in numbers if x is not None]
        if len(set(present)) < 2:
            continue
        for mark, value in ((MOST, max(present)), (LEAST, min(present))):
            rows = [r for r, x in enumerate(numbers) if x == value]
            if len(rows) <= MAX_TIES:
                found.extend(
                    (table.rows[r], [mark, *(mark + word for word in words)]) for r in rows
                )
    return found


_SIZE_WORDS = column_words("size")


def _listing_marks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of a listing's largest and smallest sized entries."""
    listing = parse_listing(lines)
    entries = [
        item
        for folder in listing.folders.values()
        for item in folder.items
        # A folder: in `ls -l` its size is a block's, in `du` the total of what it holds.
        if isinstance(item, Entry) and item.size is not None and not item.is_dir
    ]
    at = _entry_lines(lines, entries)
    sizes = [entry.size for entry in entries if entry.size is not None]
    if at is None or len(set(sizes)) < 2:
        return []
    found: list[tuple[int, list[str]]] = []
    for mark, size in ((MOST, max(sizes)), (LEAST, min(sizes))):
        rows = [k for k, entry in enumerate(entries) if entry.size == size]
        if len(rows) <= MAX_TIES:
            found.extend((at[k], [mark, *(mark + word for word in _SIZE_WORDS)]) for k in rows)
    return found


def _entry_lines(lines: list[str], entries: list[Entry]) -> list[int] | None:
    """The line each entry was read from (entries in reading order), None when one is not
    found as a line of its own (then no mark can be placed)."""
    at: list[int] = []
    i = 0
    for entry in entries:
        wanted = entry.line.strip()
        while i < len(lines) and lines[i].strip() != wanted:
            i += 1
        if i == len(lines):
            return None
        at.append(i)
        i += 1
    return at
