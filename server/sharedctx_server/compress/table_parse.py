"""Finding the tables in tool output (table_read reads each one's rows into columns).

The header is looked for among the first lines (a preamble, like dpkg's legend, is kept as
it was), or further down over a rule of dashes (`strace -f -c` under its `Process attached`
lines).

Tables may come stacked, each under its own header (`kubectl get all`: pods, services,
deployments, each table after a blank line; `df -h; df -i`: the second header straight under
the first table): read as one, their rows would mix columns that mean different things and
the later headers would pass for rows. find_tables reads each on its own.

Bordered tables (`mysql`, `sqlite3 -table`, `-box`, `-markdown`, psql with `border 2`) are
read without their borders: rows between vertical bars, rules of dashes and corners.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import pairwise

from .table_read import (
    HEADING,
    MIN_FIT,
    MIN_ROWS,
    PROBE_ROWS,
    RECORD,
    RULE,
    Table,
    labels,
    read_table,
)

__all__ = ["Section", "Table", "find_table", "find_tables"]

_HEADER_SEARCH = 12  # a header must start within this many non-blank lines, or over a rule
_RULED_HEADERS = 4  # headers over a rule tried further down (_header_offsets)
_BARS = "|│┃║"
_TO_PIPE = str.maketrans({"│": "|", "┃": "|", "║": "|"})
_BORDER = re.compile(
    r"^[\s+|:│┃║┌┐└┘├┤┬┴┼╭╮╯╰╞╡╪╔╗╚╝╠╣╦╩╬]*[-─━═=]{3,}[\s+|:│┃║┌┐└┘├┤┬┴┼╭╮╯╰╞╡╪╔╗╚╝╠╣╦╩╬─━═=-]*$"
)


def find_table(raw_lines: list[str]) -> Table | None:
    """The table in `raw_lines` (lines as written), or None."""
    index = [i for i, line in enumerate(raw_lines) if line.strip()]
    if len(index) < MIN_ROWS + 1:
        return None
    lines = [line.expandtabs() if "\t" in line else line for line in raw_lines]
    for offset in _header_offsets(raw_lines, index):
        rest = index[offset:]
        # Judge the header on the first rows; read the whole table only for one that fits.
        if read_table(raw_lines, lines, rest[: PROBE_ROWS + 2]) is None:
            continue
        table = read_table(raw_lines, lines, rest)
        if table is not None:
            if table.header is None and offset:
                continue  # a table without a header must start at the top
            preamble = tuple(index[:offset])
            return replace(table, others=preamble + table.others)
    return None


def _header_offsets(raw_lines: list[str], index: list[int]) -> list[int]:
    """Where a header may stand (positions in `index`, the non-blank lines): among the first
    _HEADER_SEARCH, or further down over a rule (`strace -c`'s `% time  seconds ...` under
    forty `Process 1234 attached` lines; psql's names after its NOTICEs), at most
    _RULED_HEADERS of those. Without a rule, any line of words over lines of words might be
    one, and trying each would cost a read of the text per line."""
    last = len(index) - MIN_ROWS
    offsets = list(range(min(_HEADER_SEARCH, last)))
    for k in range(_HEADER_SEARCH + 1, last + 1):
        line = raw_lines[index[k]]
        if ("---" in line or "===" in line) and RULE.match(line):
            offsets.append(k - 1)
            if len(offsets) >= _HEADER_SEARCH + _RULED_HEADERS:
                break
    return offsets


@dataclass(frozen=True)
class Section:
    """Lines `start` to `end` (exclusive) of stacked tables, and the table read in them (None:
    lines that read as no table, such as a header with too few rows under it)."""

    start: int
    end: int
    table: Table | None


def _shifted(table: Table, by: int) -> Table:
    """`table` with its line indices moved `by` lines down (read in a slice, placed back)."""
    return replace(
        table,
        header=None if table.header is None else table.header + by,
        rule=None if table.rule is None else table.rule + by,
        rows=tuple(i + by for i in table.rows),
        others=tuple(i + by for i in table.others),
    )


def _restarts(lines: list[str], i: int, lead: str) -> bool:
    """Whether line `i` is the header of another table: it reads as column names and follows
    a blank line, or begins with the first header's first word (`Filesystem`, `NAME`)."""
    # The cheap test first: it runs on every line of a table.
    if lines[i - 1].strip() and not lines[i].lstrip().startswith(lead):
        return False
    words = lines[i].split()
    if not words or not labels(words) or RECORD.match(lines[i]) or HEADING.match(lines[i]):
        return False
    return not lines[i - 1].strip() or words[0] == lead


def _unbordered(raw_lines: list[str]) -> list[str] | None:
    """A bordered table's lines without their borders (module docstring), or None when the
    lines are not one: cells apart by `|`, rules blank."""
    probe = [line.strip() for line in raw_lines[: 2 * PROBE_ROWS] if line.strip()]
    barred = sum(1 for line in probe if line[0] in _BARS and line[-1] in _BARS)
    rules = sum(1 for line in probe if _BORDER.match(line))
    if barred - rules < MIN_ROWS + 1 or barred + rules < MIN_FIT * len(probe):
        return None
    out = []
    for line in raw_lines:
        cut = line.strip()
        if cut and _BORDER.match(cut):
            out.append("")
        elif len(cut) > 1 and cut[0] in _BARS and cut[-1] in _BARS:
            out.append(cut[1:-1].translate(_TO_PIPE))
        else:
            out.append(line)
    return out


def find_tables(raw_lines: list[str]) -> list[Section]:
    """The tables in `raw_lines`: one section for one table, several for stacked tables
    (module docstring), none when there is no table."""
    unbordered = _unbordered(raw_lines)
    if unbordered is not None:
        return [
            Section(s.start, s.end, s.table and replace(s.table, style="bordered"))
            for s in _find_tables(unbordered)
        ]
    return _find_tables(raw_lines)


def _find_tables(raw_lines: list[str]) -> list[Section]:
    first = find_table(raw_lines)
    if first is None:
        return []
    whole = [Section(0, len(raw_lines), first)]
    if first.header is None:
        return whole
    lead = raw_lines[first.header].split()[0]
    cuts = [i for i in range(first.header + 2, len(raw_lines)) if _restarts(raw_lines, i, lead)]
    if not cuts:
        return whole
    sections: list[Section] = []
    for start, end in pairwise([0, *cuts, len(raw_lines)]):
        table = find_table(raw_lines[start:end])
        if table is not None and (
            table.header is None or any(i > table.header for i in table.others)
        ):
            table = None  # each stacked table is a header and rows, nothing else
        sections.append(Section(start, end, table and _shifted(table, start)))
    return sections if sum(1 for s in sections if s.table) >= 2 else whole
