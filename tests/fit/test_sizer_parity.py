"""The adaptive sizer gives Headroom's own answers on the generated parity fixture.

SIZER_PARITY_FIXTURE=/path/to/wider.json runs the same checks on a larger generated set
(see fixtures/make_sizer_parity.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sharedctx_server.fit import (
    compute_optimal_k,
    compute_unique_bigram_curve,
    count_unique_simhash,
    find_knee,
    simhash,
)

DEFAULT_FIXTURE = Path(__file__).parent / "fixtures/sizer_parity.json"
FIXTURE = Path(os.environ.get("SIZER_PARITY_FIXTURE", DEFAULT_FIXTURE))


@pytest.fixture(scope="module")
def parity() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def test_simhash_matches_reference(parity: dict[str, Any]) -> None:
    for case in parity["simhash"]:
        assert format(simhash(case["text"]), "016x") == case["hash"], case["text"]


def test_count_unique_simhash_matches_reference(parity: dict[str, Any]) -> None:
    for case in parity["count_unique_simhash"]:
        items = parity["lists"][case["list"]]
        assert count_unique_simhash(items, case["threshold"]) == case["count"], case


def test_bigram_curve_matches_reference(parity: dict[str, Any]) -> None:
    for case in parity["bigram_curve"]:
        assert compute_unique_bigram_curve(parity["lists"][case["list"]]) == case["curve"], case


def test_find_knee_matches_reference(parity: dict[str, Any]) -> None:
    for case in parity["find_knee"]:
        assert find_knee(case["curve"]) == case["knee"], case["curve"]


def test_compute_optimal_k_matches_reference(parity: dict[str, Any]) -> None:
    for case in parity["compute_optimal_k"]:
        items = parity["lists"][case["list"]]
        k = compute_optimal_k(items, bias=case["bias"], min_k=case["min_k"], max_k=case["max_k"])
        assert k == case["k"], case


def test_fixture_covers_the_interesting_branches(parity: dict[str, Any]) -> None:
    """The fixture exercises no-knee, knee, flat and near-duplicate paths, not just one."""
    knees = [c["knee"] for c in parity["find_knee"]]
    assert None in knees and 1 in knees and any(k is not None and k > 1 for k in knees)
    counts = [c["count"] for c in parity["count_unique_simhash"]]
    assert any(c <= 3 for c in counts) and any(c > 10 for c in counts)
