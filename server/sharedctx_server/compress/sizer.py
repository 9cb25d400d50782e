"""The adaptive sizer's answer for items whose SimHash fingerprints are already computed.

`fit.compute_optimal_k` fingerprints its items itself. The compressors have the fingerprints
already (they pick the most distinct items with them), so this gives the same answer (a test
pins the equality) without hashing twice, counting clusters with `fit.count_clusters`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit import SizerProfile, count_clusters, optimal_k_from_clusters

__all__ = ["optimal_k"]

_THRESHOLD = 3  # the sizer's near-duplicate distance (docs/adaptive-sizer.md)


def optimal_k(items: Sequence[str], prints: npt.NDArray[np.uint64], profile: SizerProfile) -> int:
    """`fit.compute_optimal_k(items, profile.bias, profile.min_k)`, given the items' SimHashes."""
    if len(items) <= 8:
        return len(items)
    unique = count_clusters(prints.tolist(), _THRESHOLD)
    return optimal_k_from_clusters(items, unique, profile.bias, profile.min_k, len(items))
