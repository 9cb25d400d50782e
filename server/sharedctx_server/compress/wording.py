"""Small phrases the structural compressors share: counts, sizes, tallies."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

__all__ = ["counted", "human_size", "tally"]

_SIZE_UNITS = ("K", "M", "G", "T", "P")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 file`, `12 files`, `1,204 entries` (`plural` when adding "s" is wrong)."""
    word = noun if n == 1 else (plural or f"{noun}s")
    return f"{n:,} {word}"


def human_size(n: int) -> str:
    """Bytes as `ls -h` prints them: `812`, `4.0K`, `35M`, `1.2G` (powers of 1024)."""
    if n < 1024:
        return str(n)
    value = float(n)
    for unit in _SIZE_UNITS:
        value /= 1024
        if value < 1024 or unit == _SIZE_UNITS[-1]:
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    raise AssertionError("unreachable")


def tally(values: Iterable[str], limit: int = 6) -> str:
    """The commonest values with their counts, most first: `Running 40, Error 2, 3 other`."""
    counts = Counter(values)
    # Most first; ties in first-seen order, so the text is the same on every run.
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    if len(ranked) == limit + 1:
        limit += 1  # one value left: its name costs what `1 other` does, and says more
    shown = [f"{value} {count:,}" for value, count in ranked[:limit]]
    rest = sum(count for _, count in ranked[limit:])
    if rest:
        shown.append(f"{rest:,} other")
    return ", ".join(shown)
