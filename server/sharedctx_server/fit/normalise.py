"""Normalising the similarity factors across the candidate set (docs/fit.md).

Raw cosines sit in a narrow band and BM25 is unbounded, so a fixed mapping lets recency swamp
them; normalising across the candidates (by rank or min-max) is what makes them count. With
rank normalisation, semantic + lexical is reciprocal-rank fusion.
"""

from __future__ import annotations

import enum

import numpy as np
import numpy.typing as npt

__all__ = ["SimilarityNorm", "competition_ranks", "normalise_similarity"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class SimilarityNorm(enum.Enum):
    """How the two similarity factors are mapped to [0, 1] across the candidates."""

    RANK = "rank"  # k / (k + rank), rank 0 for the best: reciprocal-rank fusion
    MINMAX = "minmax"  # (v - min) / (max - min); BM25: v / max
    RAW = "raw"  # the seed's (docs/fit.md) fixed mapping: (cos + 1) / 2; BM25: v / max
    # rank_share · RANK + (1 - rank_share) · MINMAX. Reciprocal ranks keep the best few
    # matches well apart but flatten everything past the top dozens to nearly the same value;
    # min-max keeps how close those deeper candidates really are, which is what decides the
    # fill of a large budget.
    HYBRID = "hybrid"


def competition_ranks(values: npt.NDArray[np.floating]) -> npt.NDArray[np.int64]:
    """For each value, how many values are strictly greater (equal values share a rank)."""
    m = values.size
    ranks = np.empty(m, dtype=np.int64)
    if m == 0:
        return ranks
    order = np.argsort(values)[::-1]  # descending; the order among equals does not matter
    ordered = values[order]
    ties = ordered[1:] == ordered[:-1]
    if not ties.any():
        ranks[order] = np.arange(m)  # the common case for float scores: a permutation
        return ranks
    run_start = np.arange(m)
    run_start[1:][ties] = 0
    ranks[order] = np.maximum.accumulate(run_start)
    return ranks


def normalise_similarity(
    values: npt.NDArray[np.floating],
    valid: BoolArray | None,
    method: SimilarityNorm,
    *,
    rank_constant: float = 60.0,
    cosine: bool = True,
    rank_share: float = 0.5,
) -> FloatArray:
    """Map one similarity column to [0, 1] across the valid candidates; invalid rows get 0.

    `cosine` says the values are cosines (semantic) rather than non-negative scores (BM25),
    which decides the RAW and MINMAX mappings. Non-finite values count as invalid.
    `rank_share` is HYBRID's weight on the rank mapping.
    """
    finite = np.isfinite(values)
    ok = finite if valid is None else (valid & finite)
    if not cosine:
        ok &= values > 0  # no lexical match is no evidence, not the lowest rank
    valid_count = int(np.count_nonzero(ok))
    if valid_count == 0:
        return np.zeros(values.shape, dtype=np.float64)
    if method is SimilarityNorm.RANK:
        return _by_rank(values, ok, valid_count, rank_constant)
    if method is SimilarityNorm.HYBRID:
        # Both mappings from one validity mask, summed in place: this runs on every Fit.
        out = _by_rank(values, ok, valid_count, rank_constant)
        out *= rank_share
        by_range = _by_range(values, ok, valid_count, cosine)
        by_range *= 1.0 - rank_share
        out += by_range
        return out
    if method is SimilarityNorm.MINMAX or not cosine:
        return _by_range(values, ok, valid_count, cosine)
    out = np.zeros(values.shape, dtype=np.float64)
    out[ok] = np.clip((values[ok].astype(np.float64) + 1.0) / 2.0, 0.0, 1.0)
    return out


def _by_rank(
    values: npt.NDArray[np.floating], ok: BoolArray, valid_count: int, rank_constant: float
) -> FloatArray:
    """k / (k + rank) over the valid rows, 0 elsewhere."""
    if valid_count * 2 >= values.size:
        # Mostly valid (the semantic column): rank everything with the invalid rows pushed
        # to the bottom, rather than copying the valid ones out and back.
        masked = values if valid_count == values.size else np.where(ok, values, -np.inf)
        mapped_all = rank_constant / (rank_constant + competition_ranks(masked))
        if valid_count < values.size:
            mapped_all = np.where(ok, mapped_all, 0.0)
        return np.asarray(mapped_all, dtype=np.float64)
    out = np.zeros(values.shape, dtype=np.float64)
    out[ok] = rank_constant / (rank_constant + competition_ranks(values[ok]))
    return out


def _by_range(
    values: npt.NDArray[np.floating], ok: BoolArray, valid_count: int, cosine: bool
) -> FloatArray:
    """Cosines: (v - min) / (max - min) over the valid rows; scores: v / max. 0 elsewhere.
    (Measured at 10k rows: gathering the valid cosines beats min/max with `where=`, which
    is several times slower; for the scores, a -inf fill beats gathering a scattered mask.)"""
    if not cosine:
        high = float(np.where(ok, values, -np.inf).max())
        return np.where(ok, values / high, 0.0).astype(np.float64, copy=False)
    picked = values if valid_count == values.size else values[ok]
    low, high = float(picked.min()), float(picked.max())
    out = values.astype(np.float64)
    if high > low:
        out -= low
        out /= high - low
    else:
        out.fill(1.0)  # all equally close: all top
    if valid_count < values.size:
        out[~ok] = 0.0
    return out
