"""The adaptive sizer as docs/adaptive-sizer.md states it (parity: test_sizer_parity.py)."""

from __future__ import annotations

import hashlib
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import (
    AGGRESSIVE,
    CONSERVATIVE,
    MODERATE,
    compute_optimal_k,
    compute_unique_bigram_curve,
    count_clusters,
    count_unique_simhash,
    find_knee,
    simhash,
    simhash_many,
    sizer_profile,
)

# Text without lone surrogates (they have no UTF-8 form, in the reference too).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)


def spec_simhash(text: str) -> int:
    """docs/adaptive-sizer.md's bit-by-bit loop, as an oracle for the vectorised version."""
    low = text.lower()
    votes = [0] * 64
    for i in range(max(1, len(low) - 3)):
        h = int(hashlib.md5(low[i : i + 4].encode("utf-8")).hexdigest()[:16], 16)
        for bit in range(64):
            votes[bit] += 1 if h >> bit & 1 else -1
    return sum(1 << bit for bit in range(64) if votes[bit] > 0)


def test_known_fingerprints() -> None:
    assert simhash("") == 0xD41D8CD98F00B204
    assert simhash("abcd") == 0xE2FC714C4727EE93


def test_lowercasing_can_change_the_length() -> None:
    # 'İ'.lower() is two code points: 'İİ' becomes a 4-character text with one 4-gram.
    assert simhash("İİ") == spec_simhash("İİ") == simhash("i̇i̇")


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, max_size=12))
def test_vectorised_simhash_equals_the_bitwise_loop(texts: list[str]) -> None:
    assert simhash_many(texts).tolist() == [spec_simhash(t) for t in texts]


def test_count_unique_simhash_clusters_near_duplicates() -> None:
    assert count_unique_simhash([]) == 0
    base = "the quick brown fox jumps over the lazy dog " * 3
    assert count_unique_simhash([base, base, base.upper()]) == 1
    assert count_unique_simhash([base, "something else entirely, unrelated"]) == 2


def spec_count_clusters(fingerprints: list[int], threshold: int) -> int:
    """docs/adaptive-sizer.md's greedy scan: each fingerprint compared with every cluster's
    first so far."""
    reps: list[int] = []
    for fp in fingerprints:
        if not any((fp ^ rep).bit_count() <= threshold for rep in reps):
            reps.append(fp)
    return len(reps)


# Near-duplicates (a few bits flipped in a few bases) as well as unrelated fingerprints.
FINGERPRINTS = st.lists(
    st.one_of(
        st.integers(0, 2**64 - 1),
        st.builds(
            lambda base, bits: base ^ sum(1 << b for b in bits),
            st.sampled_from([0, 2**64 - 1, 0x0123456789ABCDEF, 0xF0F0F0F0F0F0F0F0]),
            st.lists(st.integers(0, 63), max_size=12),
        ),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(FINGERPRINTS, st.integers(-1, 65))
def test_count_clusters_equals_the_greedy_scan(fingerprints: list[int], threshold: int) -> None:
    assert count_clusters(fingerprints, threshold) == spec_count_clusters(fingerprints, threshold)


def test_bigram_curve() -> None:
    assert compute_unique_bigram_curve(["a b c", "b c d", "", "solo", "東京都"]) == [2, 3, 4, 5, 7]
    # Whitespace is Python's: a no-break space and an ideographic space split words.
    assert compute_unique_bigram_curve(["x\u00a0y\u3000z"]) == [2]


@pytest.mark.parametrize(
    ("curve", "knee"),
    [
        ([], None),
        ([5, 5], None),  # fewer than 3 points is checked before flatness
        ([10, 0, 10], 1),  # flat: only the ends are compared
        ([0, 1, 2, 3], None),  # the diagonal: no knee
        ([0, 8, 9, 10], 2),
        ([0, 5, 5, 10], 2),  # ties keep the earlier index
    ],
)
def test_find_knee(curve: list[int], knee: int | None) -> None:
    assert find_knee(curve) == knee


def test_small_inputs_are_kept_whole_but_capped() -> None:
    assert compute_optimal_k(["a"] * 5) == 5
    assert compute_optimal_k(["x", "y", "z"], max_k=2) == 2


def test_near_duplicates_collapse_to_min_k() -> None:
    items = ["GET /health 200 OK"] * 30
    assert compute_optimal_k(items) == 3
    assert compute_optimal_k(items, min_k=5) == 5


def test_diverse_items_keep_most() -> None:
    items = [f"item {i}: " + " ".join(f"w{i}x{j}" for j in range(8)) for i in range(40)]
    k = compute_optimal_k(items)
    assert 28 <= k <= 40


def test_profiles() -> None:
    assert (CONSERVATIVE.bias, CONSERVATIVE.min_k) == (1.5, 5)
    assert (MODERATE.bias, MODERATE.min_k) == (1.0, 3)
    assert (AGGRESSIVE.bias, AGGRESSIVE.min_k) == (0.7, 3)
    assert sizer_profile("Aggressive") is AGGRESSIVE
    with pytest.raises(ValueError):
        sizer_profile("extreme")


def spec_optimal_k(items: list[str], bias: float, min_k: int, max_k: int | None) -> int:
    """docs/adaptive-sizer.md's seven steps, written out, as an oracle."""
    n = len(items)
    eff_max = max_k if max_k is not None else n
    if n <= 8:
        return min(n, eff_max)
    u = count_unique_simhash(items)
    if u <= 3:
        return min(max(min_k, u), eff_max)
    knee = find_knee(compute_unique_bigram_curve(items))
    diversity = u / n
    floor = max(min_k, int(n * (0.3 + 0.7 * diversity)))
    if knee is None:
        knee = floor
    elif diversity > 0.7:
        knee = max(knee, floor)
    k = min(max(min_k, int(knee * bias)), eff_max)
    data = "\n".join(items).encode()
    if not (k >= n or k >= eff_max or len(data) < 200):
        sub = "\n".join(items[:k]).encode()
        full = len(zlib.compress(data, 1)) / len(data)
        part = len(zlib.compress(sub, 1)) / len(sub) if sub else 1.0
        if abs(full - part) > 0.15:
            k = min(int(k * 1.2), eff_max)
    return max(min_k, min(k, eff_max))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["alpha beta", "alpha beta gamma", "error at line 3", "ok", ""]) | TEXT,
        max_size=40,
    ),
    st.sampled_from([0.7, 1.0, 1.5]),
    st.integers(0, 6),
    st.none() | st.integers(0, 30),
)
def test_compute_optimal_k_follows_the_spec_steps(
    items: list[str], bias: float, min_k: int, max_k: int | None
) -> None:
    assert compute_optimal_k(items, bias, min_k, max_k) == spec_optimal_k(items, bias, min_k, max_k)
