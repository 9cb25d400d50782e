"""Reading a table's rows into columns, from where its header (or first row) stands.

Two shapes:
- delimited (CSV, TSV, `;` or `|` separated): every row splits (quotes honoured) into as many
  fields as the header;
- aligned (`ps`, `kubectl get`, `docker ps`, `pip list`, `df`, `ss`): a header of labels and
  rows whose values sit under them. Columns are the runs of character positions that some
  line occupies, so a value may hold spaces (`2 hours ago`) as long as the gaps between
  columns are blank in every row; a run holding no header word joins its neighbour, and
  everything from the last header word on is the last column (a command line). A header in
  lower case, and one whose rows shift values out of place (`ps`, vmstat), is read one word
  a column.

A rule of dashes or `=` under the header is recognised and skipped. Where a table stands in a
text is table_parse's to find.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from dataclasses import dataclass

__all__ = [
    "HEADING",
    "MIN_FIT",
    "MIN_ROWS",
    "PROBE_ROWS",
    "RECORD",
    "RULE",
    "Table",
    "labels",
    "read_table",
]

MIN_ROWS = 4
MIN_FIT = 0.8  # share of rows that must fit the header's columns
PROBE_ROWS = 60  # rows read to judge a header candidate
_LABEL = re.compile(r"^[^\W\d_]|^[%#(|+*]")
_CAPITAL = re.compile(r"^[A-Z%#|+*]")
# A number, a size (`12K`), a share (`3%`), a time (`0:05`) or a ratio (kubectl's `1/1`,
# cProfile's `6/1` calls of a recursive function).
_NUMERIC_CELL = re.compile(r"^-?[\d.,:]+(?:/[\d.,:]+)?[KMGTPkmgt%]?$")
HEADING = re.compile(r"^\s*#{1,6} ")  # a Markdown heading is not a header row
_NUMBER_ONLY = re.compile(r"^[\d.,:/-]+$")
RULE = re.compile(r"^[\s+|-]*[-=]{3,}[\s+|=-]*$")
# A log record: a line that starts with a date, a time or a level is a log, not a table row.
RECORD = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}|\[?\d{1,2}:\d{2}:\d{2}"
    r"|(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\b)"
)
_DELIMITERS = (",", "\t", ";", "|")


@dataclass(frozen=True)
class Table:
    """A table found in some lines: header, rows (their line indices and values) and the lines
    around it that are not rows."""

    style: str  # "aligned", "bordered" or the delimiter's name: "csv", "tsv", "semicolon", "pipe"
    columns: tuple[str, ...]
    header: int | None  # line index of the header (None: the rows start at once)
    rule: int | None  # line index of the rule under the header, if any
    rows: tuple[int, ...]  # line indices of the rows
    values: tuple[tuple[str, ...], ...]  # per row, one value per column
    others: tuple[int, ...]  # non-blank lines that are neither header, rule nor rows
    delimiter: str = ""


def labels(words: list[str], capitalised: bool = True) -> bool:
    """Whether `words` read as column names: no numbers, no `key:` first, and mostly labels
    (with `capitalised`, words that start with a capital or a sign: USER, Package, %CPU)."""
    # A word ending in a colon is a key (`Byte Order:  Little Endian`, lscpu's), and one
    # holding `=` a key and its value (`Kx=any`, openssl's): neither is a column's name.
    if len(words) < 2 or len(words) > 40 or any(w.endswith(":") or "=" in w for w in words):
        return False
    if any(_NUMBER_ONLY.match(w) for w in words):
        return False
    label = _CAPITAL if capitalised else _LABEL
    return sum(1 for w in words if label.match(w)) >= 0.6 * len(words)


def _uniform(cells: list[tuple[str, ...]]) -> bool:
    """Whether most rows fill the same number of cells, give or take one (records, not free
    text): a column may be empty in many rows (`strace -c`'s errors, filled in 11 rows of
    46)."""
    if not cells:
        return False
    filled = Counter(sum(1 for c in row if c) for row in cells)
    mode = filled.most_common(1)[0][0]
    alike = filled[mode] + max(filled[mode - 1], filled[mode + 1])
    return alike >= MIN_FIT * len(cells)


# Characters the csv module reads as more than text: quotes, line ends and NUL.
_CSV_SPECIAL = re.compile(r'["\r\n\x00]')


def _split_delimited(line: str, delimiter: str) -> list[str]:
    """The fields of one line (blanks around them are the caller's to strip)."""
    if line and _CSV_SPECIAL.search(line) is None:
        return line.split(delimiter)  # what csv reads from a line it has nothing to unquote in
    return next(csv.reader([line], delimiter=delimiter, skipinitialspace=delimiter != "\t"))


def _delimited(lines: list[str], index: list[int], delimiter: str) -> Table | None:
    head: int | None = index[0]
    columns = [c.strip() for c in _split_delimited(lines[index[0]], delimiter)]
    if len(columns) < 2:
        return None
    body = index[1:]
    names = [c for c in columns if c]
    # Column names are short labels: a few words, digits only in short ones (Q1, 2024).
    short = len(names) >= len(columns) - 1 and all(
        len(c) <= 40 and c.count(" ") < 4 and (len(c) <= 4 or not any(ch.isdigit() for ch in c))
        for c in names
    )
    if not short or not labels(names or ["1"], capitalised=False):
        # No header (dpkg-query -f, git log --format): columns are numbered. Two fields a
        # line is a list of pairs (du's sizes and paths), not a table.
        if len(columns) < 3:
            return None
        head, body = None, index
        columns = [f"#{c + 1}" for c in range(len(columns))]
    rows: list[int] = []
    values: list[tuple[str, ...]] = []
    others: list[int] = []
    for i in body:
        fields = _split_delimited(lines[i], delimiter)
        if len(fields) == len(columns):
            rows.append(i)
            values.append(tuple(f.strip() for f in fields))
        else:
            others.append(i)
    if len(rows) < MIN_ROWS or len(rows) < MIN_FIT * (len(rows) + len(others)):
        return None
    if head is None and not _headerless_columns(values):
        return None
    label = _shared_label([columns[0], *(row[0] for row in values)]) if head is not None else ""
    if label:
        # `import time: self [us] | cumulative | ...` over `import time:   126 |   126 | _io`:
        # the label every line repeats names no column; without it, the first column is
        # `self [us]` and holds numbers.
        columns[0] = columns[0][len(label) :].strip()
        values = [(row[0][len(label) :].strip(), *row[1:]) for row in values]
    if len(set(values)) < 2:
        return None  # one line repeated is not a table
    name = {",": "csv", "\t": "tsv", ";": "semicolon", "|": "pipe"}[delimiter]
    return Table(
        name, tuple(columns), head, None, tuple(rows), tuple(values), tuple(others), delimiter
    )


def _shared_label(cells: list[str]) -> str:
    """The label (words up to a colon and a blank) every one of `cells` opens with and goes
    on after, or "" (a URL's `https:` is no label)."""
    shared = os.path.commonprefix(cells)
    label = shared[: shared.rfind(":") + 1]
    if not _LABEL.match(label):
        return ""
    rest = [cell[len(label) :] for cell in cells]
    return label if all(r[:1].isspace() and r.strip() for r in rest) else ""


def _headerless_columns(values: list[tuple[str, ...]]) -> bool:
    """Whether rows without a header still read as records: every column filled in most
    rows, and one holding numbers in (nearly) all of them."""
    n = len(values)
    for c in range(len(values[0])):
        if sum(1 for row in values if row[c]) < MIN_FIT * n:
            return False
    return any(
        sum(1 for row in values if _NUMERIC_CELL.match(row[c])) >= 0.9 * n
        for c in range(len(values[0]))
    )


def _spans(lines: list[str]) -> list[tuple[int, int]]:
    """Runs of character positions occupied by some line (tabs already expanded)."""
    width = max(len(line) for line in lines)
    edges = [0] * (width + 1)
    for line in lines:
        for m in re.finditer(r"\S+", line):
            edges[m.start()] += 1
            edges[m.end()] -= 1
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for pos in range(width + 1):
        before = depth
        depth += edges[pos]
        if before == 0 and depth > 0:
            start = pos
        elif before > 0 and depth == 0:
            spans.append((start, pos))
    return spans


@dataclass
class _Column:
    start: int
    end: int
    words: list[str]
    valued: bool  # rows have values under it


def _aligned_columns(header: str, rows: list[str]) -> tuple[list[tuple[int, str]], bool]:
    """(start position, name) of each column, from the header words and the occupied runs,
    and whether a name has a word over no values, joined to the word before it.

    A header word over a run of row values names that run (two words over one run name it
    together: "CONTAINER ID"); runs no header word covers join the column to their left.
    A header word over no values joins the word just before it, one space away ("Mounted
    on", "Editable project location", kubectl's "LAST SEEN"), or starts a column of its own.
    """
    spans = _spans(rows) if rows else []
    columns: list[_Column] = []
    label = False
    for m in re.finditer(r"\S+", header):
        start, end, word = m.start(), m.end(), m.group()
        over = [sp for sp in spans if sp[0] < end and start < sp[1]]
        prev = columns[-1] if columns else None
        if over:
            first, last = min(over[0][0], start), max(over[-1][1], end)
            if prev is not None and first <= prev.end and (not prev.valued or first < prev.end):
                prev.words.append(word)
                prev.end, prev.valued = max(prev.end, last), True
            else:
                columns.append(_Column(first, last, [word], True))
        elif prev is not None and start <= prev.end + 1:
            prev.words.append(word)
            prev.end = max(prev.end, end)
            label = True
        else:
            columns.append(_Column(start, end, [word], False))
    return [(c.start, " ".join(c.words)) for c in columns], label


def _word_columns(rows: list[str], n: int) -> int:
    """How many columns of numbers rows make when split on whitespace into `n` columns of
    consistent types (at least three columns, and in every column but the last, numbers in
    (nearly) every row or in (nearly) none); 0 when they make no such columns, as words of
    prose split that way do not."""
    if n < 3:
        return 0
    split = [row.split(None, n - 1) for row in rows]
    if sum(1 for cells in split if len(cells) == n) < MIN_FIT * len(rows):
        return 0
    split = [cells for cells in split if len(cells) == n]
    numeric = 0
    for c in range(n - 1):
        share = sum(1 for cells in split if _NUMERIC_CELL.match(cells[c])) / len(split)
        if 0.1 < share < 0.9:
            return 0
        numeric += share >= 0.9
    return numeric


def _aligned_values(line: str, starts: list[int]) -> tuple[str, ...]:
    cells: list[list[str]] = [[] for _ in starts]
    col = 0
    for m in re.finditer(r"\S+", line):
        while col + 1 < len(starts) and m.start() >= starts[col + 1]:
            col += 1
        cells[col].append(m.group())
    return tuple(" ".join(c) for c in cells)


def _aligned(lines: list[str], index: list[int]) -> Table | None:
    head = index[0]
    header = lines[head]
    rule = index[1] if len(index) > 1 and RULE.match(lines[index[1]]) else None
    # Names in lower case too when a rule underlines them (`sqlite3 -column`, psql's names),
    # or when the rows split into as many words as the header has, most of them numbers
    # (cProfile's `ncalls  tottime  percall  cumtime`, vmstat's): a line of prose above
    # lines of prose makes no such columns.
    words = header.split()
    capitalised = labels(words, capitalised=rule is None)
    if not capitalised and not (rule is None and labels(words, capitalised=False)):
        return None
    if RECORD.match(header) or HEADING.match(header):
        return None
    body = index[2:] if rule is not None else index[1:]
    if len(body) < MIN_ROWS:
        return None
    probe = [lines[i] for i in body[:PROBE_ROWS]]
    if not capitalised and 2 * _word_columns(probe, len(words)) < len(words):
        return None
    if sum(1 for i in body[:PROBE_ROWS] if RECORD.match(lines[i])) >= 0.5 * min(
        len(body), PROBE_ROWS
    ):
        return None
    columns, label = _aligned_columns(header, [lines[i] for i in body])
    # One word a column, and every row at least as many words (the last column takes the
    # rest): split on whitespace. `ps` shifts a row right when a value overflows its column,
    # which would merge columns by position. Not when a name has a word over no values:
    # kubectl's `LAST SEEN` split in two moved every value of its events one column left.
    # A header in lower case is read only so (above): vmstat shifts values as ps does.
    by_words = not capitalised or (
        not label and len(columns) < len(words) and _word_columns(probe, len(words)) > 0
    )
    if by_words:
        columns = [(0, w) for w in words]
    if len(columns) < 2:
        return None
    starts = [c[0] for c in columns]
    # A row whose first cell is empty continues the previous row's last value (a wrapped
    # command line): no table tool prints that, so such lines count against the fit.
    rows: list[int] = []
    values: list[tuple[str, ...]] = []
    others: list[int] = []
    least = max(2, (len(columns) + 1) // 2)
    for i in body:
        if by_words:
            cells = tuple(lines[i].split(None, len(words) - 1))
            cells += ("",) * (len(words) - len(cells))
        else:
            cells = _aligned_values(lines[i], starts)
        if cells[0] and sum(1 for c in cells if c) >= least:
            rows.append(i)
            values.append(cells)
        else:
            others.append(i)
    if len(rows) < MIN_ROWS or len(rows) < MIN_FIT * len(body) or not _uniform(values):
        return None
    names = tuple(c[1] for c in columns)
    if _names_are_values(names, values):
        return None
    return Table("aligned", names, head, rule, tuple(rows), tuple(values), tuple(others))


def _names_are_values(names: tuple[str, ...], values: list[tuple[str, ...]]) -> bool:
    """Whether the header candidate is a row: half or more of its cells are values of their
    columns in other rows (`openssl ciphers`' first line, `TLSv1.3 Kx=any Au=any`, under
    which the counts would have left that row out). A column's name is not one of its values."""
    # Rows that read as names themselves are headers (repeated, or of stacked tables).
    others = [row for row in values if not labels([cell for cell in row if cell])]
    seen = [{row[c] for row in others} for c in range(len(names))]
    return 2 * sum(1 for c, name in enumerate(names) if name in seen[c]) >= len(names)


def _delimiter(lines: list[str], index: list[int]) -> str:
    """The delimiter every probed line holds equally often (at least once), or ""."""
    probe = [lines[i] for i in index[:PROBE_ROWS]]
    for delimiter in _DELIMITERS:
        counts = [line.count(delimiter) for line in probe]
        if counts[0] >= 1 and sum(1 for c in counts if c == counts[0]) >= MIN_FIT * len(counts):
            return delimiter
    return ""


def read_table(raw_lines: list[str], lines: list[str], rest: list[int]) -> Table | None:
    """The table whose header (or first row) is the first of `rest`, the non-blank lines
    from there on, or None; `lines` are `raw_lines` with tabs expanded (aligned columns)."""
    delimiter = _delimiter(raw_lines, rest)
    try:
        return _delimited(raw_lines, rest, delimiter) if delimiter else _aligned(lines, rest)
    except csv.Error:
        return None
