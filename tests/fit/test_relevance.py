"""Relevance-based turn selection (docs/relevance.md), including the kit's own test cases."""

from __future__ import annotations

import math
from typing import Any

import pytest
from sharedctx_server.fit import (
    RELEVANCE_FLOOR_CURVE,
    RELEVANCE_FLOOR_MAX,
    RELEVANCE_FLOOR_MIN,
    HistoryTurn,
    Message,
    ToolCall,
    content_tokens,
    group_history_into_turns,
    relevance_to_query,
    scaled_relevance_floor,
    select_naive_turns,
    select_relevant_turns,
)


def estimate(text: str) -> int:
    """The kit's test estimator: ceil(length / 4), 0 for empty text."""
    return 0 if not text else math.ceil(len(text) / 4)


def turn(qa: str, created_at: str) -> HistoryTurn:
    return HistoryTurn(qa, created_at, [Message("user", qa, created_at)], [])


def ts(i: int) -> str:
    return f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"


def relevant(turns: list[HistoryTurn], query: str, **kw: Any) -> list[str]:
    kw.setdefault("history_budget", 1000)
    kept = select_relevant_turns(turns, query, estimate_tokens=estimate, **kw)
    return [t.created_at for t in kept]


# --- the behaviour docs/relevance.md describes ------------------------------------------------


def test_a_query_without_content_words_keeps_only_the_recent_turns() -> None:
    turns = [turn(f"deploy the staging database {i}", ts(i)) for i in range(5)]
    assert relevant(turns, "is it on?", keep_recent=2) == [ts(3), ts(4)]


def test_keep_recent_larger_than_the_history_keeps_everything() -> None:
    turns = [turn("unrelated", ts(i)) for i in range(3)]
    assert relevant(turns, "deploy staging", keep_recent=10) == [ts(0), ts(1), ts(2)]


def test_a_zero_floor_keeps_everything() -> None:
    turns = [turn("unrelated", ts(i)) for i in range(3)]
    assert len(relevant(turns, "deploy", keep_recent=0, floor_min=0, floor_max=0)) == 3


def test_keep_recent_zero_keeps_nothing_unconditionally() -> None:
    turns = [turn("unrelated", ts(i)) for i in range(3)]
    assert relevant(turns, "deploy staging", keep_recent=0) == []


def test_a_relevant_turn_far_back_survives_and_an_irrelevant_recent_one_does_not() -> None:
    turns = [turn("deploy staging database plan", ts(0))]
    turns += [turn(f"filler chatter number {i}", ts(i)) for i in range(1, 51)]
    kept = relevant(turns, "deploy staging database", keep_recent=1, history_budget=100_000)
    assert kept == [ts(0), ts(50)]
    assert ts(49) not in kept


def test_the_same_borderline_turn_is_kept_under_a_huge_budget_and_dropped_under_a_tiny_one() -> (
    None
):
    turns = [turn("deploy mentioned once among other words", ts(0)), turn("newest", ts(1))]
    query = "deploy staging database rollback plan"  # 1 of 5 query words: 0.2
    assert ts(0) in relevant(turns, query, keep_recent=1, history_budget=1_000_000)
    assert ts(0) not in relevant(turns, query, keep_recent=1, history_budget=1)


def test_utilisation_counts_only_older_turns() -> None:
    old = turn("deploy " + "x" * 36, ts(0))  # 11 tokens, relevance 1/5 = 0.2
    big_recent = turn("y" * 4000, ts(1))
    query = "deploy staging database rollback plan"
    # Older tokens 11 of a 100-token budget: u = 0.11, floor ~0.129 < 0.2, kept; the big
    # recent turn does not count towards u.
    assert ts(0) in relevant([old, big_recent], query, keep_recent=1, history_budget=100)


def test_negative_keep_recent_is_rejected() -> None:
    with pytest.raises(ValueError):
        relevant([turn("a", ts(0))], "a", keep_recent=-1)


def test_floor_constants_and_curve() -> None:
    assert (RELEVANCE_FLOOR_MIN, RELEVANCE_FLOOR_MAX, RELEVANCE_FLOOR_CURVE) == (0.125, 0.43, 2)
    assert scaled_relevance_floor(0) == RELEVANCE_FLOOR_MIN
    assert scaled_relevance_floor(1) == pytest.approx(RELEVANCE_FLOOR_MAX)
    assert scaled_relevance_floor(-5) == RELEVANCE_FLOOR_MIN
    assert scaled_relevance_floor(5) == pytest.approx(RELEVANCE_FLOOR_MAX)
    assert scaled_relevance_floor(0.5) < (RELEVANCE_FLOOR_MIN + RELEVANCE_FLOOR_MAX) / 2
    assert scaled_relevance_floor(0.5, 0.0, 1.0, 1) == 0.5
    values = [scaled_relevance_floor(u / 10) for u in range(11)]
    assert values == sorted(values)


def test_content_tokens_are_ascii_words_of_four_or_more() -> None:
    assert content_tokens("The Quick Brown fox jumps over 123 lazy dogs") == {
        "quick",
        "brown",
        "jumps",
        "over",
        "lazy",
        "dogs",
    }
    assert content_tokens("apple apple APPLE Apple") == {"apple"}
    assert content_tokens("a b c 1 2 3 ! ? .") == set()
    assert content_tokens("snake_case naïve x1234 1abcd") == {"snake", "case", "x1234", "abcd"}


def test_relevance_is_the_share_of_query_words_present() -> None:
    query = content_tokens("deploy staging database")
    assert relevance_to_query("anything goes here", set()) == 0
    assert relevance_to_query("we need to deploy the staging database tonight", query) == 1
    assert relevance_to_query("please deploy the frontend", query) == pytest.approx(1 / 3)
    assert relevance_to_query("completely unrelated sentence about cats", query) == 0


# --- grouping ---------------------------------------------------------------------------------


def test_a_turn_runs_from_a_message_through_the_next_assistant_message() -> None:
    turns = group_history_into_turns(
        [
            Message("user", "what is the weather", ts(0)),
            Message("assistant", "it is sunny", ts(1)),
            Message("user", "second question", ts(2)),
            Message("tool", "tool says hi", ts(3)),
            Message("assistant", "second answer", ts(4)),
            Message("assistant", "an extra remark", ts(5)),
            Message("user", "still open", ts(6)),
        ]
    )
    assert [t.qa for t in turns] == [
        "what is the weather\nit is sunny",
        "second question\ntool says hi\nsecond answer",
        "an extra remark",
        "still open",
    ]
    assert [t.created_at for t in turns] == [ts(1), ts(4), ts(5), ts(6)]
    assert group_history_into_turns([]) == []


def test_tool_calls_attach_to_the_latest_turn_started_before_them() -> None:
    messages = [
        Message("user", "search for docs", ts(0)),
        Message("assistant", "here is what I found", ts(5)),
        Message("user", "now search for something else", ts(10)),
        Message("assistant", "found that too", ts(15)),
    ]
    calls = [
        ToolCall(ts(2), "search_docs", {"q": "docs"}),
        ToolCall(ts(12), "search_docs", {"q": "else"}),
        ToolCall(ts(10), None, {"x": 1}),  # no name: attached, adds nothing
        ToolCall(ts(11), "noop"),  # args None: a trailing space
        ToolCall("2025-12-31T00:00:00Z", "early", {}),  # before every turn: dropped
    ]
    turns = group_history_into_turns(messages, calls)
    assert [len(t.tool_calls) for t in turns] == [1, 3]
    assert turns[0].qa.endswith('\nsearch_docs {"q":"docs"}')
    assert turns[1].qa.endswith('\nsearch_docs {"q":"else"}\nnoop ')
    assert "None" not in turns[1].qa and "undefined" not in turns[1].qa


# --- naive ------------------------------------------------------------------------------------


def test_naive_keeps_the_newest_and_stops_at_the_first_that_does_not_fit() -> None:
    turns = [turn("x" * 40, ts(i)) for i in range(3)]  # 10 tokens each
    kept = select_naive_turns(turns, 20, estimate_tokens=estimate)
    assert [t.created_at for t in kept] == [ts(1), ts(2)]


def test_naive_stops_rather_than_skips() -> None:
    turns = [turn("x" * 4, ts(0)), turn("x" * 400, ts(1)), turn("x" * 4, ts(2))]
    kept = select_naive_turns(turns, 50, estimate_tokens=estimate)
    assert [t.created_at for t in kept] == [ts(2)]


def test_naive_always_keeps_the_newest_turn() -> None:
    kept = select_naive_turns([turn("x" * 4000, ts(0))], 1, estimate_tokens=estimate)
    assert len(kept) == 1
    assert select_naive_turns([], 1000, estimate_tokens=estimate) == []
