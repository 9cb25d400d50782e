"""The relevance battery gives the TypeScript kit's own answers on the generated fixture.

RELEVANCE_PARITY_FIXTURE=/path/to/wider.json runs the same checks on a larger generated set
(see fixtures/make_relevance_parity.mjs).

One deliberate difference: when the 200-unit cut of `arg_text` falls inside a surrogate pair,
JavaScript keeps the lone high surrogate and we drop it (a lone surrogate cannot be encoded
as UTF-8 for the token counter); expected texts are compared with that half removed.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from sharedctx_server.fit import (
    Message,
    ToolCall,
    arg_text,
    content_tokens,
    group_history_into_turns,
    relevance_to_query,
    scaled_relevance_floor,
    select_naive_turns,
    select_relevant_turns,
)

FIXTURE = Path(
    os.environ.get(
        "RELEVANCE_PARITY_FIXTURE", Path(__file__).parent / "fixtures/relevance_parity.json"
    )
)


def utf16_estimate(text: str) -> int:
    """The fixture's estimator: ceil(JavaScript length / 4)."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    return 0 if units == 0 else math.ceil(units / 4)


def without_dangling_high_surrogate(text: str) -> str:
    return text[:-1] if text and "\ud800" <= text[-1] <= "\udbff" else text


@pytest.fixture(scope="module")
def parity() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def test_scaled_floor_matches_kit(parity: dict[str, Any]) -> None:
    for case in parity["floor"]:
        assert scaled_relevance_floor(case["u"]) == case["floor"]


def test_content_tokens_match_kit(parity: dict[str, Any]) -> None:
    for case in parity["content_tokens"]:
        assert sorted(content_tokens(case["text"])) == case["tokens"], case["text"]


def test_relevance_matches_kit(parity: dict[str, Any]) -> None:
    for case in parity["relevance"]:
        score = relevance_to_query(case["text"], content_tokens(case["query"]))
        assert score == case["score"], case


def test_arg_text_matches_json_stringify(parity: dict[str, Any]) -> None:
    for case in parity["arg_text"]:
        expected = without_dangling_high_surrogate(case["text"])
        assert arg_text(json.loads(case["json"])) == expected, case["json"]


def _history(case: dict[str, Any]) -> tuple[list[Message], list[ToolCall]]:
    messages = [Message(role, content, created) for role, content, created in case["messages"]]
    calls = [
        ToolCall(
            c["created_at"],
            c.get("tool"),
            json.loads(c["args_json"]) if "args_json" in c else None,
        )
        for c in case["tool_calls"]
    ]
    return messages, calls


def test_grouping_matches_kit(parity: dict[str, Any]) -> None:
    for case in parity["histories"]:
        messages, calls = _history(case)
        turns = group_history_into_turns(messages, calls)
        got = [
            {
                "qa": t.qa,
                "created_at": t.created_at,
                "messages": [_index(messages, m) for m in t.messages],
                "tool_calls": [_index(calls, c) for c in t.tool_calls],
            }
            for t in turns
        ]
        expected = [
            {**t, "qa": without_dangling_high_surrogate_lines(t["qa"])} for t in case["turns"]
        ]
        assert got == expected, case


def without_dangling_high_surrogate_lines(qa: str) -> str:
    # A tool line's args may end in a cut surrogate pair; the line break follows it.
    return "\n".join(without_dangling_high_surrogate(line) for line in qa.split("\n"))


def _index(items: list[Any], item: object) -> int:
    return next(i for i, x in enumerate(items) if x is item)


def test_turn_selection_matches_kit(parity: dict[str, Any]) -> None:
    for case in parity["histories"]:
        messages, calls = _history(case)
        turns = group_history_into_turns(messages, calls)
        floors = {k: v for k, v in case["floors"].items() if v is not None}
        relevant = select_relevant_turns(
            turns,
            case["query"],
            estimate_tokens=utf16_estimate,
            history_budget=case["history_budget"],
            keep_recent=case["keep_recent"],
            **floors,
        )
        assert [_index(turns, t) for t in relevant] == case["relevant"], case
        naive = select_naive_turns(turns, case["naive_budget"], estimate_tokens=utf16_estimate)
        assert [_index(turns, t) for t in naive] == case["naive"], case
