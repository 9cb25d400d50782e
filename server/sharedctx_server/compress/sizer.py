"""The adaptive sizer's answer for items whose SimHash fingerprints are already computed.

`fit.compute_optimal_k` fingerprints its items itself and clusters them by comparing each new
fingerprint with every cluster so far. The compressors have the fingerprints already (they
pick the most distinct items with them), and a large output has thousands of distinct lines,
so this module gives the same answer (a test pins the equality) without hashing twice and
finds clusters through exact-match buckets instead of a scan:

two 64-bit fingerprints within Hamming distance 3 differ in at most 3 of their four 16-bit
blocks, so they agree exactly on at least one block (pigeonhole). Looking a new fingerprint up
by each of its four blocks therefore finds every cluster representative within distance 3;
only those are compared bit by bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit import SizerProfile, optimal_k_from_clusters

__all__ = ["count_clusters", "optimal_k"]

_THRESHOLD = 3  # the sizer's near-duplicate distance (docs/adaptive-sizer.md)
_BLOCK_BITS = 16
_BLOCKS = 64 // _BLOCK_BITS  # more blocks than the threshold: the pigeonhole argument above
_BLOCK_MASK = (1 << _BLOCK_BITS) - 1


def count_clusters(prints: Sequence[int]) -> int:
    """Greedy clusters in order, as `fit.count_unique_simhash` counts them (distance <= 3)."""
    seen: set[int] = set()
    buckets: list[dict[int, list[int]]] = [{} for _ in range(_BLOCKS)]
    count = 0
    for fp in prints:
        if fp in seen:
            continue  # a repeat matches what its first occurrence matched
        seen.add(fp)
        blocks = [(fp >> (b * _BLOCK_BITS)) & _BLOCK_MASK for b in range(_BLOCKS)]
        matched = False
        for b, block in enumerate(blocks):
            for rep in buckets[b].get(block, ()):
                if (fp ^ rep).bit_count() <= _THRESHOLD:
                    matched = True
                    break
            if matched:
                break
        if not matched:
            count += 1
            for b, block in enumerate(blocks):
                buckets[b].setdefault(block, []).append(fp)
    return count


def optimal_k(items: Sequence[str], prints: npt.NDArray[np.uint64], profile: SizerProfile) -> int:
    """`fit.compute_optimal_k(items, profile.bias, profile.min_k)`, given the items' SimHashes."""
    if len(items) <= 8:
        return len(items)
    unique = count_clusters(prints.tolist())
    return optimal_k_from_clusters(items, unique, profile.bias, profile.min_k, len(items))
