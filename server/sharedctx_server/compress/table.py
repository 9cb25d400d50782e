"""Tables (`ps`, `kubectl get`, `docker ps`, `pip list`, `df`, CSV, TSV): header, notable
rows, counts.

Kept, in their original order: the header, the first `table_head_rows` and last
`table_tail_rows` rows, every row carrying an error or a warning, rows holding a rare value of
a categorical column (a status seen in at most 5% of the rows, when one value holds most),
and the rows with the largest values of up to four numeric columns (`%CPU`, `RSS`,
`RESTARTS`, `Size`; ids and ports excluded). Each run of left-out rows becomes one marker;
tables of at most three columns whose first column names things (`pip list`) also list those
names in it, so the form still says what is there. After the rows, one line per categorical
column counts its values (`STATUS: Running 40, CrashLoopBackOff 2`).

Aligned rows are re-aligned over the kept rows (empty cells stay visible as gaps); delimited
rows are kept as written.
"""

from __future__ import annotations

import re
from collections import Counter

from .markers import form_header, omitted_marker
from .plan import Attempt, Plan
from .source import Source
from .table_parse import Table, find_table
from .whitespace import collapse_ws
from .wording import counted, tally

__all__ = ["plan_table"]

_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?(?P<unit>[KMGTP]i?B?|%|[kmgt]b|ms|s)?$")
_UNIT_SCALE = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# Columns that number or address things rather than measure them.
_ID_COLUMN = re.compile(
    r"^(?:pid|ppid|tid|uid|gid|id|#|port|ports|node|inode|device|lwp|pgid|sid|nlwp|fd|no|num"
    r"|index|line|version|container id)$",
    re.IGNORECASE,
)
_STATUS_COLUMN = re.compile(
    r"status|state|stat|phase|ready|result|level|type|kind|health|condition|reason",
    re.IGNORECASE,
)
_QUANTITY = re.compile(r"^[\d:.,/+-]+[a-zA-Z%]{0,3}$")
_TOP_COLUMNS = 4  # numeric columns whose largest rows are kept
_TOP_ROWS = 3  # rows kept per such column
_COUNTED_COLUMNS = 3  # categorical columns whose values are counted
_RARE_SHARE = 0.05  # a value in at most this share of the rows is rare...
_COMMON_SHARE = 0.5  # ...when one value holds at least this share
_MAX_RARE_ROWS = 20
_MAX_CATEGORIES = 12
_MAX_KEYS = 300  # names of left-out rows listed in markers (narrow tables only)
_KEY_COLUMNS = 3


def _number(value: str) -> float | None:
    m = _NUMBER.match(value.replace(" ", ""))
    if m is None:
        return None
    unit = m.group("unit") or ""
    number = float(value[: m.start("unit")] if unit else value.replace(",", ""))
    return number * _UNIT_SCALE.get(unit[:1].upper(), 1.0)


def _numeric(values: list[str]) -> list[float | None] | None:
    filled = [v for v in values if v]
    if not filled:
        return None
    numbers = [_number(v.replace(",", "")) if v else None for v in values]
    if sum(1 for x in numbers if x is not None) < 0.8 * len(filled):
        return None
    return numbers


def _categorical(values: list[str]) -> Counter[str] | None:
    counts = Counter(v for v in values if v)
    if len(values) < 6 or not counts or len(counts) > _MAX_CATEGORIES:
        return None
    # Times, dates and amounts (START 02:03, AGE 3d) take few values without being a category.
    if sum(k for v, k in counts.items() if _QUANTITY.match(v)) >= 0.5 * sum(counts.values()):
        return None
    if len(counts) > max(2, len(values) // 4) or counts.most_common(1)[0][1] < 2:
        return None
    return counts


class _Columns:
    """A table's columns, each read (and tried as numbers) once: rare values, the largest rows
    and the key column all ask about the same columns."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._values: dict[int, list[str]] = {}
        self._numbers: dict[int, list[float | None] | None] = {}

    def values(self, c: int) -> list[str]:
        """Column `c`'s value in each row."""
        if c not in self._values:
            self._values[c] = [row[c] for row in self.table.values]
        return self._values[c]

    def numeric(self, c: int) -> list[float | None] | None:
        """Column `c` as numbers, None when it does not hold numbers (see `_numeric`)."""
        if c not in self._numbers:
            self._numbers[c] = _numeric(self.values(c))
        return self._numbers[c]


class _Selection:
    def __init__(self, table: Table, columns: _Columns, source: Source) -> None:
        self.table = table
        self.columns = columns
        self.source = source
        self.keep: set[int] = set()  # row positions
        self.why: list[str] = []
        self.counted: list[tuple[str, Counter[str]]] = []

    def select(self) -> None:
        table, config = self.table, self.source.config
        n = len(table.rows)
        self.keep.update(range(min(n, config.table_head_rows)))
        self.keep.update(range(max(0, n - config.table_tail_rows), n))
        lines = self.source.raw_lines
        notable = [r for r, i in enumerate(table.rows) if self.source.judged.is_notable(lines[i])]
        if notable:
            self.keep.update(notable)
            self.why.append("errors and warnings")
        self._rare_and_counted()
        self._largest()

    def _rare_and_counted(self) -> None:
        table = self.table
        n = len(table.rows)
        found: list[tuple[int, int, str, Counter[str]]] = []
        for c, name in enumerate(table.columns):
            counts = _categorical(self.columns.values(c))
            if counts is None or self.columns.numeric(c) is not None:
                continue
            # Status-like names first, then the columns with the fewest values.
            found.append((0 if _STATUS_COLUMN.search(name) else 1, len(counts), name, counts))
            top = counts.most_common(1)[0][1]
            if top < _COMMON_SHARE * n:
                continue
            rare = {v for v, k in counts.items() if k <= max(1, _RARE_SHARE * n)}
            rows = [r for r, row in enumerate(table.values) if row[c] in rare]
            if rows:
                self.keep.update(rows[:_MAX_RARE_ROWS])
                self.why.append(f"rare {name}")
        found.sort(key=lambda f: (f[0], f[1]))
        self.counted = [(name, counts) for _, _, name, counts in found[:_COUNTED_COLUMNS]]

    def _largest(self) -> None:
        table = self.table
        measured: list[str] = []
        for c, name in enumerate(table.columns):
            if len(measured) == _TOP_COLUMNS or _ID_COLUMN.match(name):
                continue
            numbers = self.columns.numeric(c)
            if numbers is None or len({x for x in numbers if x is not None}) < 2:
                continue
            ranked = sorted(
                (r for r, x in enumerate(numbers) if x is not None),
                key=lambda r: (-(numbers[r] or 0.0), r),
            )
            self.keep.update(ranked[:_TOP_ROWS])
            measured.append(name)
        if measured:
            self.why.append("largest " + "/".join(measured))


def _key_column(columns: _Columns) -> int | None:
    """The column naming each row (package names), when the table is narrow enough to list
    it cheaply: distinct values that stay distinct with their digits masked."""
    if len(columns.table.columns) > _KEY_COLUMNS:
        return None
    values = columns.values(0)
    shapes = {re.sub(r"\d+", "#", v) for v in values}
    if len(shapes) < 0.9 * len(values) or columns.numeric(0) is not None:
        return None
    return 0


def _aligned_rows(table: Table, positions: list[int]) -> list[str]:
    rows = [table.columns] + [table.values[r] for r in positions]
    last = len(table.columns) - 1
    widths = [max(len(row[c]) for row in rows) for c in range(last)]
    return [
        "  ".join([*(row[c].ljust(widths[c]) for c in range(last)), row[last]]).rstrip()
        for row in rows
    ]


def _render(table: Table, source: Source) -> Attempt:
    columns = _Columns(table)
    pick = _Selection(table, columns, source)
    pick.select()
    kept = sorted(pick.keep)
    n = len(table.rows)
    raw = source.raw_lines
    start = table.header if table.header is not None else table.rows[0]
    if table.style == "aligned":
        shown = _aligned_rows(table, kept)
        header, rows = shown[0], dict(zip(kept, shown[1:], strict=True))
    else:
        header = raw[start].strip() if table.header is not None else ""
        rows = {r: raw[table.rows[r]].strip() for r in kept}
    key = _key_column(columns)
    body: list[str] = [collapse_ws(raw[i]) for i in table.others if i < start]
    if header:
        body.append(header)
    # Rows and the other lines among them, in their order; each run of left-out rows is one
    # marker, in its place.
    order = sorted(
        [(i, r) for r, i in enumerate(table.rows)] + [(i, -1) for i in table.others if i > start]
    )
    gap: list[int] = []
    for i, r in [*order, (len(raw), -2)]:
        if r >= 0 and r not in rows:
            gap.append(r)
            continue
        if gap:
            detail = ""
            if key is not None and len(gap) <= _MAX_KEYS:
                detail = f"{table.columns[key]}: " + ", ".join(table.values[g][key] for g in gap)
            body.append(omitted_marker(len(gap), "row", detail))
            gap = []
        if r >= 0:
            body.append(rows[r])
        elif r == -1:
            body.append(collapse_ws(raw[i]))
    body += [f"{name}: {tally(counts.elements())}" for name, counts in pick.counted]
    omitted = n - len(kept)
    why = ", ".join(["first and last", *pick.why])
    shape = f"{table.style}, {counted(len(table.columns), 'column')}"
    if table.header is None:
        shape += ", no header"
    summary = (
        f"table ({shape}): {counted(n, 'row')}; kept {'the header and ' if header else ''}"
        f"{counted(len(kept), 'row')} ({why})"
    )
    if omitted:
        summary += f"; {omitted:,} rows omitted"
    if pick.counted:
        summary += "; values counted for " + ", ".join(name for name, _ in pick.counted)
    dropped = (f"{counted(omitted, 'row')}",) if omitted else ()
    return Attempt("\n".join([form_header(summary), *body]), dropped)


def plan_table(source: Source) -> Plan | None:
    """The table compressor, if the content is mostly one table."""
    table = find_table(source.raw_lines)
    if table is None:
        return None
    nonblank = len(source.nonblank_raw)
    understood = nonblank - len(table.others)
    share = understood / nonblank if nonblank else 0.0
    reason = (
        f"{share:.0%} of the non-blank lines are a {table.style} table of "
        f"{counted(len(table.columns), 'column')} under a header"
    )
    return Plan("table", share, reason, lambda: _render(table, source))
