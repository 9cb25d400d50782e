"""How many of N ordered items to keep: information saturation (docs/adaptive-sizer.md).

Same numbers as Headroom's `headroom.transforms.adaptive_sizer` on the same inputs; the
parity fixture in tests/fit/fixtures pins that down.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.simhash import simhash, simhash_many

__all__ = [
    "AGGRESSIVE",
    "CONSERVATIVE",
    "MODERATE",
    "SIZER_PROFILES",
    "SizerProfile",
    "compute_optimal_k",
    "compute_unique_bigram_curve",
    "count_clusters",
    "count_unique_simhash",
    "find_knee",
    "simhash",
    "sizer_profile",
]

# Kana, CJK ideographs (and extension A), Hangul syllables, compatibility ideographs.
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

# Exact integers survive the float64 path of find_knee only up to 2**53.
_FLOAT_EXACT = 2**53


@dataclass(frozen=True)
class SizerProfile:
    """A named bias on the statistically chosen k, with its lower bound."""

    name: str
    bias: float
    min_k: int


CONSERVATIVE = SizerProfile("conservative", 1.5, 5)
MODERATE = SizerProfile("moderate", 1.0, 3)
AGGRESSIVE = SizerProfile("aggressive", 0.7, 3)

SIZER_PROFILES: Mapping[str, SizerProfile] = MappingProxyType(
    {p.name: p for p in (CONSERVATIVE, MODERATE, AGGRESSIVE)}
)


def sizer_profile(name: str) -> SizerProfile:
    """The profile called `name` (conservative, moderate, aggressive; case-insensitive)."""
    try:
        return SIZER_PROFILES[name.strip().lower()]
    except KeyError:
        known = ", ".join(SIZER_PROFILES)
        raise ValueError(f"unknown adaptive profile {name!r}; expected one of {known}") from None


def count_unique_simhash(items: Sequence[str], threshold: int = 3) -> int:
    """Greedy SimHash clusters in item order: Hamming distance <= threshold to a cluster's first."""
    if len(items) == 0:
        return 0
    return count_clusters(simhash_many(items).tolist(), threshold)


# A block of the cluster index: the clusters' firsts by the block's value, its shift and mask.
_Block = tuple[dict[int, list[int]], int, int]


def count_clusters(fingerprints: Sequence[int], threshold: int = 3) -> int:
    """Greedy clusters of 64-bit fingerprints in order: a fingerprint within `threshold` bits
    of an earlier cluster's first joins it, else it opens a cluster of its own.

    For callers that have the fingerprints already (the compressors pick distinct items with
    them). A large output has thousands of distinct lines, so clusters are found through
    exact-match buckets instead of a scan of every cluster so far: cut into threshold + 1
    blocks, two fingerprints within `threshold` bits differ in at most `threshold` blocks and
    so agree exactly on at least one (pigeonhole). Looking a fingerprint up by each of its
    blocks finds every cluster within reach; only those are compared bit by bit.
    """
    if threshold < 0:
        return len(fingerprints)  # not even equal fingerprints are within reach
    if threshold >= 64:
        return min(1, len(fingerprints))  # every fingerprint is within reach of the first
    index: list[_Block] = [({}, shift, mask) for shift, mask in _blocks(threshold + 1)]
    seen: set[int] = set()
    count = 0
    for fp in fingerprints:
        if fp in seen:
            continue  # a repeat matches what its first occurrence matched (or that itself)
        seen.add(fp)
        if not _within_reach(fp, index, threshold):
            count += 1
            for bucket, shift, mask in index:
                bucket.setdefault((fp >> shift) & mask, []).append(fp)
    return count


def _blocks(count: int) -> list[tuple[int, int]]:
    """(shift, mask) of each of `count` blocks that together cover the 64 bits."""
    out: list[tuple[int, int]] = []
    shift = 0
    for b in range(count):
        width = 64 // count + (b < 64 % count)
        out.append((shift, (1 << width) - 1))
        shift += width
    return out


def _within_reach(fp: int, index: list[_Block], threshold: int) -> bool:
    """Whether a cluster's first that shares a block with `fp` is within `threshold` bits."""
    for bucket, shift, mask in index:
        for rep in bucket.get((fp >> shift) & mask, ()):
            if (fp ^ rep).bit_count() <= threshold:
                return True
    return False


def compute_unique_bigram_curve(items: Sequence[str]) -> list[int]:
    """Running count of distinct adjacent word pairs after each item (CJK: character pairs)."""
    seen: set[tuple[str, str]] = set()
    curve: list[int] = []
    for item in items:
        words = item.lower().split()
        if len(words) >= 2:
            seen.update(zip(words, words[1:], strict=False))
        elif words and len(words[0]) >= 2 and _CJK.search(words[0]):
            # Spaceless CJK text is one "word": pair its characters instead.
            word = words[0]
            seen.update(zip(word, word[1:], strict=False))
        else:
            seen.add((words[0] if words else "", ""))
        curve.append(len(seen))
    return curve


def find_knee(curve: Sequence[float]) -> int | None:
    """Kneedle: 1 + the first index furthest above the diagonal, or None if no clear knee."""
    n = len(curve)
    if n < 3:
        return None
    if curve[-1] == curve[0]:
        return 1  # flat (only the ends are compared)
    values = _exact_floats(curve)
    if values is None:
        return _find_knee_loop(curve)
    y_norm = (values - values[0]) / (values[-1] - values[0])
    diff = y_norm - np.arange(n, dtype=np.float64) / (n - 1)
    index = int(np.argmax(diff))  # argmax keeps the first of equal maxima, like a strict '>'
    if diff[index] < 0.05:
        return None
    return index + 1


def _exact_floats(curve: Sequence[float]) -> npt.NDArray[np.float64] | None:
    """`curve` as float64 when that reproduces the reference's Python arithmetic, else None."""
    values = np.asarray(curve)
    # float32 (or other) elements would be computed in their own precision by the reference.
    if values.ndim != 1 or not (values.dtype.kind in "biu" or values.dtype == np.float64):
        return None
    values = values.astype(np.float64)
    # Huge ints subtract exactly in Python but not in float64; NaN and inf compare differently.
    if not np.isfinite(values).all() or np.abs(values).max() >= _FLOAT_EXACT:
        return None
    return values


def _find_knee_loop(curve: Sequence[float]) -> int | None:
    # The reference's own arithmetic, for inputs numpy would round differently (huge ints, NaN).
    n = len(curve)
    y_min, y_range = curve[0], curve[-1] - curve[0]
    max_diff = -1.0
    knee: int | None = None
    for i, value in enumerate(curve):
        diff = (value - y_min) / y_range - i / (n - 1)
        if diff > max_diff:
            max_diff, knee = diff, i
    if max_diff < 0.05 or knee is None:
        return None
    return knee + 1


def compute_optimal_k(
    items: Sequence[str], bias: float = 1.0, min_k: int = 3, max_k: int | None = None
) -> int:
    """How many of `items` (in importance order) to keep before new information runs out."""
    n = len(items)
    eff_max = max_k if max_k is not None else n
    if n <= 8:
        return min(n, eff_max)
    unique = count_clusters(simhash_many(items).tolist(), 3)
    return optimal_k_from_clusters(items, unique, bias, min_k, eff_max)


def optimal_k_from_clusters(
    items: Sequence[str], unique: int, bias: float, min_k: int, eff_max: int
) -> int:
    """compute_optimal_k's answer (for more than 8 items) once their near-duplicate clusters
    are counted: for callers that have fingerprinted the items themselves."""
    if unique <= 3:
        return min(max(min_k, unique), eff_max)
    n = len(items)
    knee = find_knee(compute_unique_bigram_curve(items))
    diversity = unique / n
    floor = max(min_k, int(n * (0.3 + 0.7 * diversity)))
    if knee is None:
        knee = floor
    elif diversity > 0.7:
        # A shallow bend on highly diverse items is a weak signal: don't go below the floor.
        knee = max(knee, floor)
    k = min(max(min_k, int(knee * bias)), eff_max)
    k = _widen_if_unrepresentative(items, k, eff_max)
    return max(min_k, min(k, eff_max))


def _widen_if_unrepresentative(items: Sequence[str], k: int, eff_max: int) -> int:
    """Raise k by 20% when the first k compress very differently from all items."""
    if k >= len(items) or k >= eff_max:
        return k
    full = "\n".join(items).encode("utf-8")
    if len(full) < 200:
        return k  # zlib's fixed overhead dominates tiny inputs
    subset = "\n".join(items[:k]).encode("utf-8")
    full_ratio = len(zlib.compress(full, 1)) / len(full)
    subset_ratio = len(zlib.compress(subset, 1)) / len(subset) if subset else 1.0
    if abs(full_ratio - subset_ratio) > 0.15:
        return min(int(k * 1.2), eff_max)
    return k
