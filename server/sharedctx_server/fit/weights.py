"""The seven SCORED factors and their weight presets (docs/fit.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

__all__ = ["FACTORS", "WEIGHT_PRESETS", "resolve_weights"]

# Column order of every factor matrix and weight vector in this package.
FACTORS: tuple[str, ...] = (
    "recency",
    "semantic_similarity",
    "toin_importance",
    "error_indicator",
    "forward_reference",
    "token_density",
    "lexical_relevance",
)

# `default` was tuned on LoCoMo's development split (benchmarks/tune_fit.py, then checked
# through the API with benchmarks/quality.py): the two similarity signals, fused (scoring's
# HYBRID norm), carry retrieval; the grid around these values is flat (recall within ±0.005),
# so they are not fitted to its questions. Recency keeps real weight for agent work, where
# fresh tool output matters: on month-old conversations it is ~0 for every entry and changes
# no ranking (LoCoMo recall is identical for any recency weight), while over days it lifts
# fresh output over old chat that shares the query's words. 0.55 is what the agent scenario
# of benchmarks/quality.py needs with margin (a fresh failing-test log above a 3-day-old chat
# turn about a failed build; the turn still ranks above unrelated fresh output); 0.45 or
# less loses it under the HYBRID norm, whose spread lets a top similarity match count more.
# `headroom` is the seed's example weights, kept verbatim (the seed: docs/fit.md).
WEIGHT_PRESETS: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        "default": MappingProxyType(
            {
                "recency": 0.55,
                "semantic_similarity": 0.40,
                "toin_importance": 0.07,
                "error_indicator": 0.06,
                "forward_reference": 0.03,
                "token_density": 0.01,
                "lexical_relevance": 0.38,
            }
        ),
        "headroom": MappingProxyType(
            {
                "recency": 0.4,
                "semantic_similarity": 0.3,
                "toin_importance": 0.15,
                "error_indicator": 0.1,
                "forward_reference": 0.05,
                "token_density": 0.0,
                "lexical_relevance": 0.0,
            }
        ),
    }
)


def resolve_weights(
    preset: str = "default", overrides: Mapping[str, float] | None = None
) -> npt.NDArray[np.float64]:
    """The preset's weights with `overrides` applied, normalised to sum 1, in FACTORS order.

    A weight of 0 disables its factor. All-zero weights give an all-zero vector (every
    candidate then scores 0 and ties are broken by recency). ValueError for an unknown preset
    or factor or a weight that is not a finite number >= 0: the server's edge refuses those
    in a request first, naming the field, so only a caller of the Python API sees it.
    """
    name = preset or "default"
    if name not in WEIGHT_PRESETS:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(WEIGHT_PRESETS)}")
    merged = dict(WEIGHT_PRESETS[name])
    for factor, weight in (overrides or {}).items():
        if factor not in merged:
            raise ValueError(f"unknown factor {factor!r}; known: {', '.join(FACTORS)}")
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"weight {factor} must be a finite number >= 0, got {weight}")
        merged[factor] = float(weight)
    vector = np.array([merged[f] for f in FACTORS], dtype=np.float64)
    with np.errstate(over="ignore"):
        total = vector.sum()
    if not math.isfinite(total):  # finite weights near the float maximum sum to inf
        vector = vector / vector.max()
        total = vector.sum()
    return vector / total if total > 0 else vector
