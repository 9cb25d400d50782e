"""Which rows of a table to keep, over its column names and cell values only: the table
compressor (text tables) and the JSON compressor (arrays of flat records) choose alike.

Kept: the first `head` and last `tail` rows, the notable rows the caller names (errors and
warnings), rows holding a rare value of a categorical column (a status seen in at most 5% of
the rows, when one value holds most), and the rows with the largest values of up to four
numeric columns (`%CPU`, `RSS`, `RESTARTS`, `Size`; ids and ports excluded). Up to three
categorical columns have their values counted, and a narrow table's first column, when it
names each row (`pip list`), is the key whose values a marker may list.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["MAX_KEYS", "RowChoice", "choose_rows", "is_id_column", "numeric_values"]

_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?(?P<unit>[KMGTP]i?B?|%|[kmgt]b|ms|m|s)?$")
_TWO_NUMBERS = re.compile(r"\d\s+\d")
_UNIT_SCALE = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# Units that are no multiple of bytes: milliseconds, and Kubernetes' millicores (`250m`).
_SMALL_UNITS = {"ms": 1e-3, "m": 1e-3, "s": 1.0, "%": 1.0}
# An age or a duration as `kubectl` and `docker` print them: 45s, 6m58s, 3h12m, 2d, 45d.
_DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?$")
_SECONDS = (86400.0, 3600.0, 60.0, 1.0)
# A value only a duration has: hours or days, or two units (6m58s). In a column holding one,
# `5m` is five minutes, not five thousandths.
_ONLY_A_DURATION = re.compile(r"^\d+[dh]|\d[dhm]\d")
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
MAX_KEYS = 300  # names of left-out rows listed in markers (narrow tables only)
_KEY_COLUMNS = 3


def _number(value: str) -> float | None:
    if value.isascii() and value.isdigit():
        return float(value)  # most cells of a numeric column: what the pattern would read
    if _TWO_NUMBERS.search(value):
        return None  # two values in one cell (`2139108 0`: columns a header did not split)
    compact = value.replace(" ", "")  # a unit apart from its number: `12 MB`
    m = _NUMBER.match(compact)
    if m is None:
        return None
    unit = m.group("unit") or ""
    number = float(compact[: m.start("unit")] if unit else compact.replace(",", ""))
    scale = _SMALL_UNITS.get(unit) or _UNIT_SCALE.get(unit[:1].upper(), 1.0)
    return number * scale


def _duration(value: str) -> float | None:
    """`value` (45s, 6m58s, 3h12m, 2d) in seconds, None when it is no duration."""
    m = _DURATION.match(value.strip())
    if m is None or not any(m.groups()):
        return None
    return sum(float(part) * unit for part, unit in zip(m.groups(), _SECONDS, strict=True) if part)


def is_id_column(name: str) -> bool:
    """Whether a column numbers or addresses its rows (PID, PORT) rather than measures them."""
    return _ID_COLUMN.match(name) is not None


def numeric_values(values: list[str]) -> list[float | None] | None:
    """A column's values as numbers (units scaled: 12K is 12,000, 850ms 0.85, 250m 0.25),
    or in seconds when it holds durations (an AGE column: 45s, 6m58s, 3h12m, 2d), None for an
    empty cell or one that is no number; None for the column when under 80% of its filled
    cells are."""
    filled = [v for v in values if v]
    if not filled:
        return None
    read = _duration if any(_ONLY_A_DURATION.search(v) for v in filled) else _number
    numbers = [read(v.replace(",", "")) if v else None for v in values]
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

    def __init__(self, names: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.names = names
        self.rows = rows
        self._values: dict[int, list[str]] = {}
        self._numbers: dict[int, list[float | None] | None] = {}

    def values(self, c: int) -> list[str]:
        """Column `c`'s value in each row."""
        if c not in self._values:
            self._values[c] = [row[c] for row in self.rows]
        return self._values[c]

    def numeric(self, c: int) -> list[float | None] | None:
        """Column `c` as numbers, None when it does not hold numbers (see `numeric_values`)."""
        if c not in self._numbers:
            self._numbers[c] = numeric_values(self.values(c))
        return self._numbers[c]


@dataclass
class RowChoice:
    """The rows to keep (positions), why (beyond first and last), the categorical columns whose
    values are counted, and the key column (None: none to list)."""

    keep: set[int] = field(default_factory=set)
    why: list[str] = field(default_factory=list)
    counted: list[tuple[str, Counter[str]]] = field(default_factory=list)
    key: int | None = None


def choose_rows(
    names: Sequence[str],
    rows: Sequence[Sequence[str]],
    notable: Iterable[int],
    *,
    head: int,
    tail: int,
) -> RowChoice:
    """The rows of the table with column `names` and cells `rows` to keep (module docstring);
    `notable`: the positions of rows with an error or a warning."""
    columns = _Columns(names, rows)
    n = len(rows)
    choice = RowChoice()
    choice.keep.update(range(min(n, head)))
    choice.keep.update(range(max(0, n - tail), n))
    marked = sorted(set(notable))
    if marked:
        choice.keep.update(marked)
        choice.why.append("errors and warnings")
    _rare_and_counted(columns, choice)
    _largest(columns, choice)
    choice.key = _key_column(columns)
    return choice


def _rare_and_counted(columns: _Columns, choice: RowChoice) -> None:
    n = len(columns.rows)
    found: list[tuple[int, int, str, Counter[str]]] = []
    for c, name in enumerate(columns.names):
        counts = _categorical(columns.values(c))
        if counts is None or columns.numeric(c) is not None:
            continue
        # Status-like names first, then the columns with the fewest values.
        found.append((0 if _STATUS_COLUMN.search(name) else 1, len(counts), name, counts))
        top = counts.most_common(1)[0][1]
        if top < _COMMON_SHARE * n:
            continue
        rare = {v for v, k in counts.items() if k <= max(1, _RARE_SHARE * n)}
        rows = [r for r, value in enumerate(columns.values(c)) if value in rare]
        if rows:
            choice.keep.update(rows[:_MAX_RARE_ROWS])
            choice.why.append(f"rare {name}")
    found.sort(key=lambda f: (f[0], f[1]))
    choice.counted = [(name, counts) for _, _, name, counts in found[:_COUNTED_COLUMNS]]


def _largest(columns: _Columns, choice: RowChoice) -> None:
    measured: list[str] = []
    for c, name in enumerate(columns.names):
        if len(measured) == _TOP_COLUMNS or is_id_column(name):
            continue
        numbers = columns.numeric(c)
        if numbers is None or len({x for x in numbers if x is not None}) < 2:
            continue
        ranked = sorted(
            (r for r, x in enumerate(numbers) if x is not None),
            key=lambda r: (-(numbers[r] or 0.0), r),
        )
        choice.keep.update(ranked[:_TOP_ROWS])
        measured.append(name)
    if measured:
        choice.why.append("largest " + "/".join(measured))


def _key_column(columns: _Columns) -> int | None:
    """The column naming each row (package names), when the table is narrow enough to list
    it cheaply: distinct values that stay distinct with their digits masked."""
    if len(columns.names) > _KEY_COLUMNS or not columns.rows:
        return None
    values = columns.values(0)
    shapes = {re.sub(r"\d+", "#", v) for v in values}
    if len(shapes) < 0.9 * len(values) or columns.numeric(0) is not None:
        return None
    return 0
