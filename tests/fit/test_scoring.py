"""SCORED strategy: the seven factors, weights, normalisation and neighbour expansion."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import (
    FACTORS,
    Candidates,
    Neighbours,
    ScoringOptions,
    neighbour_gain,
    resolve_weights,
    score_candidates,
    thread_neighbours,
)
from sharedctx_server.fit.normalise import SimilarityNorm, competition_ranks, normalise_similarity
from sharedctx_server.fit.weights import WEIGHT_PRESETS

NOW = 1_000_000.0


def candidates(n: int, seed: int = 0, d: int = 8, **overrides: Any) -> Candidates:
    rng = np.random.default_rng(seed)
    emb = rng.standard_normal((n, d)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    threads = rng.integers(0, 3, n)
    times = NOW - rng.integers(0, 100_000, n).astype(np.float64)
    fields: dict[str, Any] = {
        "timestamps": times,
        "original_tokens": rng.integers(10, 500, n),
        "compressed_tokens": rng.integers(1, 10, n),
        "importance": rng.random(n),
        "error_score": rng.random(n),
        "reference_counts": rng.integers(0, 3, n).astype(np.float64),
        "embeddings": emb,
        "embedded": rng.random(n) < 0.9,
        "thread_ids": threads,
        "neighbours": thread_neighbours(threads, times),
    }
    fields.update(overrides)
    return Candidates(**fields)


def only(factor: str) -> ScoringOptions:
    weights = resolve_weights("default", {f: (1.0 if f == factor else 0.0) for f in FACTORS})
    return ScoringOptions(weights=tuple(weights.tolist()), expand_neighbours=False)


def test_presets_hold_the_seed_weights_and_a_fusion_default() -> None:
    assert dict(WEIGHT_PRESETS["headroom"]) == {
        "recency": 0.4,
        "semantic_similarity": 0.3,
        "toin_importance": 0.15,
        "error_indicator": 0.1,
        "forward_reference": 0.05,
        "token_density": 0.0,
        "lexical_relevance": 0.0,
    }
    default = WEIGHT_PRESETS["default"]
    fused = default["semantic_similarity"] + default["lexical_relevance"]
    assert fused > 0.5 and all(default[f] > 0 for f in ("recency", "error_indicator"))
    for name in WEIGHT_PRESETS:
        assert resolve_weights(name).sum() == pytest.approx(1.0)


def test_weights_override_the_preset_and_are_normalised() -> None:
    w = resolve_weights("headroom", {"lexical_relevance": 0.5})
    assert w.sum() == pytest.approx(1.0)
    assert w[FACTORS.index("lexical_relevance")] == pytest.approx(0.5 / 1.5)
    assert np.all(resolve_weights("default", {f: 0.0 for f in FACTORS}) == 0)
    # Finite weights whose sum is not: scaled first, not normalised to nothing.
    huge = resolve_weights("headroom", {"recency": 1e308, "semantic_similarity": 1e308})
    assert huge.sum() == pytest.approx(1.0) and huge[FACTORS.index("recency")] == 0.5


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [("nope", None), ("default", {"vibes": 1.0}), ("default", {"recency": -1.0})],
)
def test_bad_weights_are_value_errors(preset: str, overrides: dict[str, float] | None) -> None:
    """The edge refuses these in a request (naming the field); the engine only guards."""
    with pytest.raises(ValueError):
        resolve_weights(preset, overrides)


def test_recency_decays_exponentially_with_age() -> None:
    times = np.array([NOW, NOW - 10_000, NOW + 50.0])  # the last is from a clock ahead of ours
    c = candidates(3, timestamps=times, neighbours=None, thread_ids=None)
    opts = replace(only("recency"), recency_decay_rate=1e-4)
    scores = score_candidates(c, now=NOW, options=opts).scores
    assert scores == pytest.approx([1.0, np.exp(-1.0), 1.0])


def test_semantic_factor_ranks_by_cosine_and_skips_unembedded_rows() -> None:
    emb = np.array([[1, 0], [0.8, 0.6], [0, 1], [1, 0]], dtype=np.float32)
    embedded = np.array([True, True, True, False])
    c = candidates(4, d=2, embeddings=emb, embedded=embedded)
    by_rank = replace(only("semantic_similarity"), similarity_norm=SimilarityNorm.RANK)
    s = score_candidates(c, now=NOW, query_embedding=[2.0, 0.0], options=by_rank)
    k = ScoringOptions().rank_constant
    assert s.scores.tolist() == pytest.approx([1.0, k / (k + 1), k / (k + 2), 0.0])


def test_default_hybrid_norm_averages_rank_and_min_max() -> None:
    """Cosines 1, 0.8, 0: by rank 1, k/(k+1), k/(k+2); by min-max 1, 0.8, 0; the default
    HYBRID takes rank_share of the first and the rest of the second."""
    emb = np.array([[1, 0], [0.8, 0.6], [0, 1], [1, 0]], dtype=np.float32)
    embedded = np.array([True, True, True, False])
    c = candidates(4, d=2, embeddings=emb, embedded=embedded)
    opts = only("semantic_similarity")
    assert opts.similarity_norm is SimilarityNorm.HYBRID
    s = score_candidates(c, now=NOW, query_embedding=[2.0, 0.0], options=opts)
    k, a = opts.rank_constant, opts.rank_share
    expected = [1.0, a * k / (k + 1) + (1 - a) * 0.8, a * k / (k + 2), 0.0]
    assert s.scores.tolist() == pytest.approx(expected)
    lexical = np.array([0.0, 3.0, 1.0, 0.0])
    s = score_candidates(c, now=NOW, lexical=lexical, options=only("lexical_relevance"))
    assert s.scores.tolist() == pytest.approx([0.0, 1.0, a * k / (k + 1) + (1 - a) / 3, 0.0])


def test_rank_normalisation_lifts_a_narrow_cosine_band_to_the_full_scale() -> None:
    """Raw cosines 0.30..0.31 would add almost nothing under (cos+1)/2; by rank the best
    candidate gets the full weight and the spread is real."""
    values = np.array([0.30, 0.305, 0.31], dtype=np.float32)
    by_rank = normalise_similarity(values, None, SimilarityNorm.RANK, rank_constant=1.0)
    raw = normalise_similarity(values, None, SimilarityNorm.RAW)
    assert by_rank.tolist() == pytest.approx([1 / 3, 1 / 2, 1.0])
    assert np.ptp(raw) < 0.01
    minmax = normalise_similarity(values, None, SimilarityNorm.MINMAX)
    assert minmax.tolist() == pytest.approx([0.0, 0.5, 1.0], abs=1e-3)


def test_lexical_factor_gives_nothing_to_candidates_without_a_match() -> None:
    c = candidates(4)
    lexical = np.array([0.0, 3.0, 1.0, 0.0])
    by_rank = replace(only("lexical_relevance"), similarity_norm=SimilarityNorm.RANK)
    s = score_candidates(c, now=NOW, lexical=lexical, options=by_rank)
    k = ScoringOptions().rank_constant
    assert s.scores.tolist() == pytest.approx([0.0, 1.0, k / (k + 1), 0.0])
    minmax = replace(only("lexical_relevance"), similarity_norm=SimilarityNorm.MINMAX)
    s = score_candidates(c, now=NOW, lexical=lexical, options=minmax)
    assert s.scores.tolist() == pytest.approx([0.0, 1.0, 1 / 3, 0.0])


def test_competition_ranks_share_ranks_between_equal_values() -> None:
    assert competition_ranks(np.array([0.5, 0.9, 0.5, 0.1])).tolist() == [1, 0, 1, 3]
    assert competition_ranks(np.array([3.0, 2.0, 1.0])).tolist() == [0, 1, 2]


def test_forward_references_and_the_query_naming_an_entry_raise_its_score() -> None:
    c = candidates(3, reference_counts=np.array([0.0, 1.0, 3.0]))
    s = score_candidates(c, now=NOW, options=only("forward_reference")).scores
    assert s.tolist() == pytest.approx([0.0, 0.5, 0.75])
    named = np.array([True, False, False])
    s = score_candidates(
        c, now=NOW, query_references=named, options=only("forward_reference")
    ).scores
    assert s[0] == pytest.approx(0.5)


def test_token_density_and_importance_and_error_columns() -> None:
    c = candidates(
        2,
        original_tokens=np.array([100, 100]),
        compressed_tokens=np.array([25, 100]),
        importance=np.array([0.7, 2.0]),
        error_score=np.array([0.25, -1.0]),
    )
    assert score_candidates(c, now=NOW, options=only("token_density")).scores.tolist() == [0.75, 0]
    assert score_candidates(c, now=NOW, options=only("toin_importance")).scores.tolist() == [
        0.7,
        1.0,
    ]
    assert score_candidates(c, now=NOW, options=only("error_indicator")).scores.tolist() == [
        0.25,
        0.0,
    ]


def test_explain_breakdown_adds_up_to_the_score() -> None:
    c = candidates(50, seed=3)
    q = np.ones(8, dtype=np.float32)
    lexical = np.where(np.arange(50) % 7 == 0, 2.0, 0.0)
    opts = ScoringOptions()
    s = score_candidates(c, now=NOW, query_embedding=q, lexical=lexical, options=opts, explain=True)
    assert s.factors is not None and s.neighbour_gain is not None
    assert s.factors.shape == (50, len(FACTORS))
    assert ((s.factors >= 0) & (s.factors <= 1)).all()
    rebuilt = s.factors @ np.asarray(opts.weights) + opts.neighbour_share * s.neighbour_gain
    assert s.scores == pytest.approx(rebuilt)
    plain = score_candidates(c, now=NOW, query_embedding=q, lexical=lexical, options=opts)
    assert plain.scores.tolist() == s.scores.tolist()


def test_thread_neighbours_follow_time_within_each_thread() -> None:
    links = thread_neighbours([0, 1, 0, 0, 1], [5.0, 1.0, 1.0, 3.0, 2.0])
    assert links.previous.tolist() == [3, -1, -1, 2, 1]
    assert links.next.tolist() == [-1, 4, 3, 0, -1]


def test_the_reply_to_a_matching_turn_gains_a_share_of_its_score() -> None:
    """A question that matches the query lifts the answer written right after it in the
    same thread, above an unrelated entry with the same base score."""
    scores = np.array([0.9, 0.1, 0.1, 0.1])
    links = thread_neighbours([0, 0, 1, 1], [1.0, 2.0, 1.0, 2.0])
    gain = neighbour_gain(scores, links, sources=1)
    assert gain.tolist() == [0.0, 0.9, 0.0, 0.0]
    c = candidates(4, neighbours=links)
    opts = replace(only("toin_importance"), expand_neighbours=True, neighbour_share=0.5)
    c = replace(c, importance=scores)
    expanded = score_candidates(c, now=NOW, options=opts).scores
    assert expanded[1] > expanded[2]
    assert expanded[1] == pytest.approx(0.1 + 0.5 * 0.9)


def test_only_eligible_candidates_pass_score_to_neighbours() -> None:
    links = Neighbours(np.array([-1, 0]), np.array([1, -1]))
    gain = neighbour_gain(np.array([0.9, 0.1]), links, sources=2, eligible=np.array([False, True]))
    assert gain.tolist() == [0.1, 0.0]


def test_mismatched_query_embedding_is_a_value_error() -> None:
    # A server fault (one model embeds both sides), reported as INTERNAL, not the caller's.
    with pytest.raises(ValueError, match="query_embedding has 5 dimensions, entries have"):
        score_candidates(candidates(3), now=NOW, query_embedding=np.ones(5))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FACTORS), st.integers(1, 40), st.integers(0, 10_000))
def test_a_zero_weight_removes_a_factors_influence(factor: str, n: int, seed: int) -> None:
    """Changing the inputs of a factor whose weight is 0 changes no score (neighbour
    expansion included)."""
    weights = resolve_weights("default", {factor: 0.0})
    opts = ScoringOptions(weights=tuple(weights.tolist()))
    base = candidates(n, seed=seed)
    rng = np.random.default_rng(seed + 1)
    q = rng.standard_normal(8).astype(np.float32)
    lexical = rng.random(n) * (rng.random(n) < 0.5)
    changes: dict[str, dict[str, Any]] = {
        "recency": {"timestamps": base.timestamps - rng.integers(0, 10**6, n)},
        "semantic_similarity": {"embeddings": base.embeddings[rng.permutation(n)]},
        "toin_importance": {"importance": rng.random(n)},
        "error_indicator": {"error_score": rng.random(n)},
        "forward_reference": {"reference_counts": rng.integers(0, 9, n).astype(np.float64)},
        "token_density": {"compressed_tokens": rng.integers(1, 500, n)},
        "lexical_relevance": {},
    }
    changed = changes[factor]
    other_lexical = rng.random(n) if factor == "lexical_relevance" else lexical
    before = score_candidates(base, now=NOW, query_embedding=q, lexical=lexical, options=opts)
    after = score_candidates(
        replace(base, **changed), now=NOW, query_embedding=q, lexical=other_lexical, options=opts
    )
    assert before.scores.tolist() == after.scores.tolist()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.integers(0, 10_000))
def test_scoring_is_deterministic(n: int, seed: int) -> None:
    c = candidates(n, seed=seed)
    q = np.ones(8, dtype=np.float32)
    a = score_candidates(c, now=NOW, query_embedding=q, explain=True)
    b = score_candidates(c, now=NOW, query_embedding=q, explain=True)
    assert a.scores.tolist() == b.scores.tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 120), st.integers(0, 150), st.integers(1, 3), st.integers(0, 10_000))
def test_neighbour_gain_matches_a_plain_loop(n: int, sources: int, reach: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = np.round(rng.random(n), 1)  # ties on purpose
    links = thread_neighbours(rng.integers(0, 4, n), rng.integers(0, 20, n).astype(float))
    eligible = rng.random(n) < 0.8
    base = [s if e else -np.inf for s, e in zip(scores, eligible, strict=True)]
    cut = sorted(base, reverse=True)[min(sources, n) - 1] if sources else np.inf
    passing = [b if b >= cut and np.isfinite(b) and b > 0 else 0.0 for b in base]
    prev, nxt = links.previous.tolist(), links.next.tolist()

    def walk(i: int, step: list[int], times: int) -> int:
        for _ in range(times):
            if i < 0:
                return -1
            i = step[i]
        return i

    decay = 0.5
    expected = []
    for i in range(n):
        total = 0.0
        for d in range(1, reach + 1):
            p, q = walk(i, prev, d), walk(i, nxt, d)
            hop = max(passing[p] if p >= 0 else 0.0, passing[q] if q >= 0 else 0.0)
            total += decay ** (d - 1) * hop
        expected.append(total)
    got = neighbour_gain(
        scores, links, sources=sources, eligible=eligible, reach=reach, decay=decay
    )
    assert got.tolist() == pytest.approx(expected)


def test_second_neighbours_gain_a_decayed_share_and_threads_stay_apart() -> None:
    # Thread 0: entries 0..3 in time order; thread 1: entries 4, 5. Only entry 1 passes score.
    links = thread_neighbours([0, 0, 0, 0, 1, 1], [1.0, 2.0, 3.0, 4.0, 2.5, 3.5])
    scores = np.array([0.0, 0.9, 0.0, 0.0, 0.0, 0.0])
    direct = neighbour_gain(scores, links, sources=1)
    assert direct.tolist() == [0.9, 0.0, 0.9, 0.0, 0.0, 0.0]
    two = neighbour_gain(scores, links, sources=1, reach=2, decay=2 / 3)
    assert two.tolist() == pytest.approx([0.9, 0.0, 0.9, 0.6, 0.0, 0.0])
