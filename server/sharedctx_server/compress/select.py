"""Choosing which items to keep: the required ones, then the most distinct of the rest."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit import simhash_many
from sharedctx_server.fit.simhash import popcount64

__all__ = ["fingerprints", "pick_distinct"]


def fingerprints(texts: Sequence[str]) -> npt.NDArray[np.uint64]:
    """SimHash of each text, computing each distinct text once (masked lines repeat a lot)."""
    distinct = list(dict.fromkeys(texts))
    slot = {text: i for i, text in enumerate(distinct)}
    return simhash_many(distinct)[np.array([slot[t] for t in texts], dtype=np.intp)]


def pick_distinct(
    fingerprints: npt.NDArray[np.uint64], k: int, required: Iterable[int]
) -> list[int]:
    """Sorted indices: `required`, then greedy farthest-point picks by Hamming distance up to k.

    Each pick is the item whose nearest kept item is farthest away, so near-duplicates of what
    is already kept come last. Ties go to the earliest item, which keeps the choice
    deterministic. Required items are all kept even when there are more than k of them.
    """
    n = int(fingerprints.size)
    chosen = np.zeros(n, dtype=np.bool_)
    for i in required:
        chosen[i] = True
    count = int(chosen.sum())
    if count >= k or count == n:
        return np.flatnonzero(chosen).tolist()
    # Distance from each item to its nearest kept item; kept items hold -1 so they never win.
    nearest = np.full(n, 64, dtype=np.int16)
    for i in np.flatnonzero(chosen).tolist():
        np.minimum(nearest, popcount64(fingerprints ^ fingerprints[i]), out=nearest)
    nearest[chosen] = -1
    while count < k:
        j = int(np.argmax(nearest))
        chosen[j] = True
        count += 1
        np.minimum(nearest, popcount64(fingerprints ^ fingerprints[j]), out=nearest)
        nearest[j] = -1
    return np.flatnonzero(chosen).tolist()
