"""The lines of a run of similar lines whose numbers stand out from the run's.

A folded run keeps its templates and its last line; what the other lines say differently is
in their numbers, and the few that stand out are often what the output is read for: the GPU
of eight in `nvidia-smi` at 80,123 of 81,559 MiB and 0% busy, the one with 3 ECC errors.
Numbers are compared slot by slot among lines of one template (the k-th number of each line
with as many numbers); a value stands out when it is far from the median of a slot whose
values otherwise sit close together, in units of its median absolute deviation, or, in a
slot where nearly every line holds the same value, when it is one of the few that do not.
Slots that vary at random (ids, ports, sizes, times of day) spread out and have no such
values.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

__all__ = ["MAX_OUTLIERS", "standing_out"]

# A number standing alone or before its unit (`80123MiB`, `0%`, `4500ms`): not the digits
# inside a hash or an id (`8a3f9c`), nor a part of an address, version, date or time after
# its first (`10.0.3.17`, `2024-05-01`, `12:00:05`).
_NUMBER = re.compile(r"(?<![\w.:/-])\d+(?:\.\d+)?(?=[A-Za-z%]*(?![\w.:]))")
# Lines of one run kept for their numbers, at most.
MAX_OUTLIERS = 3
# How far from the median, in (scaled) median absolute deviations, a value stands out.
_FAR = 6.0
# ... and at least this share of the median away from it: a slot whose values all sit close
# together (temperatures of 58 to 71 degrees) has no outlier in a value a few units off.
_RELATIVE = 0.2
# Only in a slot whose values sit this close to its median (its median absolute deviation
# over the median): memory in use on eight alike GPUs. Where they spread (response sizes,
# durations), a far value is one of many and says little; an access log kept 57% more.
_TIGHT = 0.1
# In a slot where all but a few lines hold the same value, those few stand out (at most
# this many of them; more are a second common value, such as a date after midnight).
_FEW = 2
# The fewest lines of one template worth comparing.
_MIN_LINES = 5


def standing_out(lines: Sequence[str], groups: Sequence[int]) -> list[int]:
    """The indices of at most MAX_OUTLIERS `lines` whose numbers stand out among the lines of
    their group (`groups`: each line's template), the farthest first."""
    found: dict[int, float] = {}
    by_group: dict[int, list[int]] = {}
    for i, group in enumerate(groups):
        by_group.setdefault(group, []).append(i)
    for members in by_group.values():
        if len(members) < _MIN_LINES:
            continue
        numbers = [_NUMBER.findall(lines[i]) for i in members]
        counts = Counter(map(len, numbers))
        width = max(counts, key=lambda w: (counts[w], -w))  # the commonest (ties: the fewest)
        alike = [(i, n) for i, n in zip(members, numbers, strict=True) if len(n) == width]
        if width == 0 or len(alike) < _MIN_LINES:
            continue
        rows = [i for i, _ in alike]
        # numpy reads the digits as float() would, in C: twice as fast as a comprehension.
        values = np.array([n for _, n in alike], dtype=np.float64)
        farthest = _farthest(values)
        for at in np.flatnonzero(farthest > 0).tolist():
            found[rows[at]] = float(farthest[at])
    ranked = sorted(found, key=lambda i: (-found[i], i))
    return sorted(ranked[:MAX_OUTLIERS])


def _farthest(values: np.ndarray) -> np.ndarray:
    """Per row of `values` (lines by slots), how far its farthest value that stands out in
    its slot is (infinite: one of the few off a slot's one value), 0 where none does. All
    slots at once: one slot at a time, the calls cost more than the arithmetic."""
    median = _column_medians(values)
    deviation = np.abs(values - median)
    mad = _column_medians(deviation)
    spread = np.abs(median)
    odd = deviation > 0
    odd_count = odd.sum(axis=0)
    few = (mad == 0.0) & (odd_count > 0) & (odd_count <= _FEW)
    tight = (mad != 0.0) & (mad <= _TIGHT * spread)
    if not (few | tight).any():
        # Most runs: every slot varies at random (ids, durations), none can hold an outlier.
        return np.zeros(len(values))
    with np.errstate(divide="ignore", invalid="ignore"):
        far = deviation / (1.4826 * mad)
    stands = tight & (far > _FAR) & (deviation > _RELATIVE * spread)
    score = np.where(stands, far, 0.0)
    score = np.where(few & odd, np.inf, score)
    farthest: np.ndarray = score.max(axis=1)
    return farthest


def _column_medians(values: np.ndarray) -> np.ndarray:
    """`np.median(values, axis=0)`, the same numbers (NaN where a column holds one): one sort
    instead of np.median's checks and partitions, four times faster on the small matrices of
    a run (a log of short lines asks this of thousands of runs)."""
    ordered = np.sort(values, axis=0)  # NaN sorts last
    n = len(ordered)
    middle = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    return np.where(np.isnan(ordered[-1]), np.nan, middle)
