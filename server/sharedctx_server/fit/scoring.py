"""SCORED strategy: the seven factors, weighted, vectorised over the candidates (docs/fit.md).

`score = Σ weight_i · factor_i` with every factor in [0, 1] and the weights summing to 1,
then neighbour expansion adds a share of the strongest neighbours' scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.factors import forward_reference_score, token_density_scores
from sharedctx_server.fit.neighbours import Neighbours, neighbour_gain, thread_neighbours
from sharedctx_server.fit.normalise import SimilarityNorm, normalise_similarity
from sharedctx_server.fit.weights import FACTORS, resolve_weights

__all__ = ["Candidates", "Scores", "ScoringOptions", "needs_factor", "score_candidates"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_RECENCY, _SEMANTIC, _TOIN, _ERROR, _FORWARD, _DENSITY, _LEXICAL = range(len(FACTORS))


@dataclass(frozen=True, eq=False)
class Candidates:
    """What scoring and selection need to know about n entries; row i is entry i.

    Rows are in key order: the last tie-break of selection is the lower row. `embeddings`
    rows are L2-normalised (the embedder's output) so a dot product is the cosine; rows with
    `embedded` False (not embedded yet) take no part in the semantic factor. `reference_counts`
    is the entry's forward-reference evidence: its own `{{ref}}` markers plus `{{<key>}}`
    references to it from other entries. `thread_ids` groups entries for neighbour expansion
    (None: one thread); `neighbours` may carry thread_neighbours() precomputed, and `density`
    token_density_scores() of the token columns (both are derived; a namespace cache keeps
    them to save the work per query).
    """

    timestamps: FloatArray
    original_tokens: IntArray
    compressed_tokens: IntArray
    importance: FloatArray
    error_score: FloatArray
    reference_counts: FloatArray
    embeddings: npt.NDArray[np.float32]
    embedded: BoolArray
    thread_ids: IntArray | None = None
    neighbours: Neighbours | None = None
    density: FloatArray | None = None

    def __post_init__(self) -> None:
        n = self.timestamps.shape[0]
        for name in (
            "original_tokens",
            "compressed_tokens",
            "importance",
            "error_score",
            "reference_counts",
            "embedded",
        ):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"Candidates.{name} must have shape ({n},)")
        if self.embeddings.ndim != 2 or self.embeddings.shape[0] != n:
            raise ValueError(f"Candidates.embeddings must have shape ({n}, d)")
        for name in ("thread_ids", "density"):
            column = getattr(self, name)
            if column is not None and column.shape != (n,):
                raise ValueError(f"Candidates.{name} must have shape ({n},)")

    def __len__(self) -> int:
        return int(self.timestamps.shape[0])

    def neighbour_links(self) -> Neighbours:
        """The precomputed neighbours, or computed now from threads and timestamps."""
        if self.neighbours is not None:
            return self.neighbours
        threads = self.thread_ids if self.thread_ids is not None else np.zeros(len(self), np.int64)
        return thread_neighbours(threads, self.timestamps)


def _default_weights() -> tuple[float, ...]:
    return tuple(float(w) for w in resolve_weights("default"))


@dataclass(frozen=True)
class ScoringOptions:
    """Knobs of the SCORED strategy; `weights` are in FACTORS order (see resolve_weights)."""

    weights: tuple[float, ...] = field(default_factory=_default_weights)
    recency_decay_rate: float = 1e-4  # per second, in exp(-Δt · rate)
    # HYBRID beat RANK (reciprocal-rank fusion) on every budget of the LoCoMo development
    # split (+1.1/+0.5/+0.2/+0.7 points of recall at 500/1000/2000/4000 tokens, no
    # conversation worse) and MINMAX at all but 2000; rank_share anywhere in 0.4-0.6 with
    # k in 3-10 scores within 0.3 points of these, so no sharp optimum is being fitted.
    similarity_norm: SimilarityNorm = SimilarityNorm.HYBRID
    # k in k / (k + rank): a small k keeps the top matches well apart (tuned on LoCoMo).
    rank_constant: float = 5.0
    rank_share: float = 0.5  # HYBRID: weight of the rank mapping beside min-max
    expand_neighbours: bool = True
    neighbour_share: float = 0.3  # share of a strong neighbour's score an entry gains
    neighbour_sources: int = 16  # how many of the top entries pass score to their neighbours
    # How many steps along the thread score travels, and what each further step keeps of it:
    # second neighbours gain 2/3 of what direct ones do (tuned on LoCoMo: +1.5 to +2.5 points
    # of recall at every budget over direct neighbours alone; a third step added nothing).
    neighbour_reach: int = 2
    neighbour_decay: float = 2 / 3

    def __post_init__(self) -> None:
        # Invariants for callers of the Python API: the server's edge (edge/requests/)
        # checks the fields a request sets (weights, recency_decay_rate), naming each; the
        # others are not settable over the API.
        if len(self.weights) != len(FACTORS):
            raise ValueError(f"weights: expected {len(FACTORS)} weights in FACTORS order")
        if not np.isfinite(self.recency_decay_rate) or self.recency_decay_rate < 0:
            raise ValueError("recency_decay_rate must be a finite number >= 0")
        if not self.rank_constant > 0:
            raise ValueError("rank_constant must be > 0")
        if not 0 <= self.rank_share <= 1:
            raise ValueError("rank_share must be in [0, 1]")
        if not 0 <= self.neighbour_share <= 1:
            raise ValueError("neighbour_share must be in [0, 1]")
        if self.neighbour_reach < 1:
            raise ValueError("neighbour_reach must be >= 1")
        if not 0 <= self.neighbour_decay <= 1:
            raise ValueError("neighbour_decay must be in [0, 1]")


def needs_factor(options: ScoringOptions, name: str, explain: bool) -> bool:
    """Whether scoring computes factor `name`: it has weight, or explain shows every factor.
    A caller can skip the factor's query-side inputs (the query's embedding, its BM25, the
    keys it names) when this is False."""
    return explain or options.weights[FACTORS.index(name)] > 0


@dataclass(frozen=True, eq=False)
class Scores:
    """Final scores, and on request each factor's value (n x 7, FACTORS order) and the
    score each entry gained from its neighbours."""

    scores: FloatArray
    factors: FloatArray | None = None
    neighbour_gain: FloatArray | None = None


def score_candidates(
    candidates: Candidates,
    *,
    now: float,
    query_embedding: npt.ArrayLike | None = None,
    lexical: FloatArray | None = None,
    query_references: BoolArray | None = None,
    eligible: BoolArray | None = None,
    options: ScoringOptions | None = None,
    explain: bool = False,
    lexical_floor: FloatArray | None = None,
) -> Scores:
    """Score every candidate for one query.

    `lexical`: raw BM25 per candidate (TermStats.bm25_scores), None when there is no query
    text; `query_references`: entries the query names through `{{<key>}}`; `eligible`: the
    candidates left after filters (the similarity ranks and neighbour sources are taken among
    them; the others still get a score). `explain` also returns the factor matrix.
    `lexical_floor`: a least value of the normalised lexical factor per candidate (an entry
    cut into segments is as lexically relevant as its best segment, docs/excerpts.md).
    """
    opts = options or ScoringOptions()
    weights = np.asarray(opts.weights, dtype=np.float64)
    n = len(candidates)
    columns: dict[int, FloatArray] = {}
    needed = [i for i, name in enumerate(FACTORS) if needs_factor(opts, name, explain)]
    for i in needed:
        columns[i] = _factor(
            i, candidates, now, query_embedding, lexical, query_references, eligible, opts
        )
    if lexical_floor is not None and _LEXICAL in columns:
        columns[_LEXICAL] = np.maximum(columns[_LEXICAL], lexical_floor)
    scores = np.zeros(n, dtype=np.float64)
    scratch = np.empty(n, dtype=np.float64)
    for i in needed:
        if weights[i] > 0:
            scores += np.multiply(columns[i], weights[i], out=scratch)
    gain: FloatArray | None = None
    if opts.expand_neighbours and opts.neighbour_share > 0 and n > 1:
        gain = neighbour_gain(
            scores,
            candidates.neighbour_links(),
            sources=opts.neighbour_sources,
            eligible=eligible,
            reach=opts.neighbour_reach,
            decay=opts.neighbour_decay,
        )
        scores = scores + opts.neighbour_share * gain
    if not explain:
        return Scores(scores)
    factors = (
        np.column_stack([columns[i] for i in range(len(FACTORS))])
        if n
        else np.zeros((0, len(FACTORS)))
    )
    return Scores(scores, factors, gain if gain is not None else np.zeros(n))


def _factor(
    index: int,
    c: Candidates,
    now: float,
    query_embedding: npt.ArrayLike | None,
    lexical: FloatArray | None,
    query_references: BoolArray | None,
    eligible: BoolArray | None,
    opts: ScoringOptions,
) -> FloatArray:
    n = len(c)
    if index == _RECENCY:
        decay = np.subtract(now, c.timestamps, dtype=np.float64)
        np.maximum(decay, 0.0, out=decay)  # a clock ahead of ours is "now", not the future
        # A huge rate overflows to -inf, whose exp is the 0 it means: no warning to the log.
        with np.errstate(over="ignore"):
            decay *= -opts.recency_decay_rate
        return np.exp(decay, out=decay)
    if index == _SEMANTIC:
        return _semantic(c, query_embedding, eligible, opts)
    # Columns written at put time are in [0, 1] already; clip guards against a bad writer.
    if index in (_TOIN, _ERROR):
        column = c.importance if index == _TOIN else c.error_score
        clipped: FloatArray = np.clip(column, 0.0, 1.0, dtype=np.float64)
        return clipped
    if index == _FORWARD:
        counts = c.reference_counts.astype(np.float64)
        if query_references is not None:
            counts = counts + query_references  # the query naming an entry is one more reference
        return forward_reference_score(counts)
    if index == _DENSITY:
        if c.density is not None:
            return c.density
        return token_density_scores(c.original_tokens, c.compressed_tokens)
    if lexical is None:
        return np.zeros(n, dtype=np.float64)
    if lexical.shape != (n,):
        raise ValueError(f"lexical must have shape ({n},)")
    return _normalised(lexical, eligible, opts, cosine=False)


def _semantic(
    c: Candidates,
    query_embedding: npt.ArrayLike | None,
    eligible: BoolArray | None,
    opts: ScoringOptions,
) -> FloatArray:
    n = len(c)
    if query_embedding is None or n == 0:
        return np.zeros(n, dtype=np.float64)
    query = np.asarray(query_embedding, dtype=np.float32).ravel()
    if query.shape[0] != c.embeddings.shape[1]:
        # Not the caller's mistake: the server embeds both sides with one model.
        raise ValueError(
            f"query_embedding has {query.shape[0]} dimensions, entries have {c.embeddings.shape[1]}"
        )
    norm = float(np.linalg.norm(query))
    if norm == 0 or not np.isfinite(norm):
        return np.zeros(n, dtype=np.float64)
    cosines = c.embeddings @ (query / np.float32(norm))
    valid = c.embedded if eligible is None else (c.embedded & eligible)
    return _normalised(cosines, valid, opts, cosine=True)


def _normalised(
    values: npt.NDArray[np.floating],
    valid: BoolArray | None,
    opts: ScoringOptions,
    *,
    cosine: bool,
) -> FloatArray:
    return normalise_similarity(
        values,
        valid,
        opts.similarity_norm,
        rank_constant=opts.rank_constant,
        cosine=cosine,
        rank_share=opts.rank_share,
    )
