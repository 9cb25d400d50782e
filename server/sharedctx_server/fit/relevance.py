"""Relevance-based turn selection, the reference of the RELEVANT and RECENT strategies
(docs/relevance.md): fit.strategies makes the same decisions from an index kept across Fits.

Behaves like the `thrift/relevance` battery of the TypeScript agent kit `@nhtio/adk`, names in
snake_case. The floor constants were calibrated against exactly `content_tokens` and
`relevance_to_query` as written here; changing either invalidates them.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from sharedctx_server.fit.jsjson import UnserializableError, js_stringify, utf16_prefix

__all__ = [
    "KEEP_RECENT",
    "RELEVANCE_FLOOR_CURVE",
    "RELEVANCE_FLOOR_MAX",
    "RELEVANCE_FLOOR_MIN",
    "HistoryTurn",
    "Message",
    "ToolCall",
    "arg_text",
    "content_tokens",
    "group_history_into_turns",
    "relevance_floor",
    "relevance_to_query",
    "scaled_relevance_floor",
    "select_naive_turns",
    "select_relevant_turns",
    "turn_relevance",
]

RELEVANCE_FLOOR_MIN = 0.125
RELEVANCE_FLOOR_MAX = 0.43
RELEVANCE_FLOOR_CURVE = 2
# The newest turns kept whatever their relevance; Fit's keep_recent default (SelectionOptions)
# is this same number, for entries as for turns.
KEEP_RECENT = 2

ARG_TEXT_LIMIT = 200  # UTF-16 code units, as JavaScript's String.prototype.slice counts

# ASCII only on purpose: the kit's regex has no Unicode classes, so non-ASCII letters split words.
_CONTENT_WORD = re.compile(r"[a-z][a-z0-9]{3,}")

EstimateTokens = Callable[[str], int]


@dataclass(frozen=True)
class Message:
    """One conversation message; `created_at` is a sortable string such as ISO-8601."""

    role: str
    content: str
    created_at: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call, attributed to a turn by its `created_at`."""

    created_at: str
    tool: str | None = None
    args: object = None


@dataclass
class HistoryTurn:
    """A user message through the next assistant message, with its tool calls and combined text."""

    qa: str
    created_at: str
    messages: list[Message] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)


def content_tokens(text: str) -> set[str]:
    """The distinct lowercase ASCII words of 4+ characters (a letter, then letters or digits)."""
    return set(_CONTENT_WORD.findall(text.lower()))


def relevance_to_query(text: str, query_tokens: Collection[str]) -> float:
    """The share of the query's content words that appear in `text` (0 for an empty query)."""
    if not query_tokens:
        return 0.0
    words = content_tokens(text)
    return sum(1 for token in query_tokens if token in words) / len(query_tokens)


def _js_pow(base: float, exponent: float) -> float:
    # Math.pow semantics where Python's ** raises or differs (0 ** -1, 1 ** NaN).
    if math.isnan(exponent):
        return math.nan
    if exponent == 0:
        return 1.0
    if base == 0 and exponent < 0:
        return math.inf
    return float(base**exponent)


def _clamp_unit(u: float) -> float:
    if math.isnan(u):
        return u  # Math.min/Math.max propagate NaN; Python's min/max would not
    return min(1.0, max(0.0, u))


def scaled_relevance_floor(
    u: float,
    floor_min: float = RELEVANCE_FLOOR_MIN,
    floor_max: float = RELEVANCE_FLOOR_MAX,
    curve: float = RELEVANCE_FLOOR_CURVE,
) -> float:
    """The relevance floor at utilisation u: convex from floor_min (u=0) to floor_max (u=1)."""
    return floor_min + (floor_max - floor_min) * _js_pow(_clamp_unit(u), curve)


def arg_text(args: object) -> str:
    """`JSON.stringify(args).slice(0, 200)`; "" for None or when args cannot be serialised."""
    if args is None:
        return ""
    try:
        text = js_stringify(args)
    except (UnserializableError, RecursionError):
        return ""
    return utf16_prefix(text, ARG_TEXT_LIMIT)


def group_history_into_turns(
    messages: Sequence[Message], tool_calls: Sequence[ToolCall] = ()
) -> list[HistoryTurn]:
    """Group messages into turns closed by each assistant message; attach tool calls by time."""
    turns: list[HistoryTurn] = []
    current: HistoryTurn | None = None
    for message in messages:
        if current is None:
            current = HistoryTurn(message.content, message.created_at, [message], [])
            turns.append(current)
        else:
            current.messages.append(message)
            current.qa += "\n" + message.content
            current.created_at = message.created_at
        if message.role == "assistant":
            current = None
    starts = [turn.messages[0].created_at for turn in turns]
    in_order = all(a <= b for a, b in zip(starts, starts[1:], strict=False))
    for call in tool_calls:
        target = _turn_for(turns, starts, in_order, call.created_at)
        if target is None:
            continue  # earlier than every turn
        target.tool_calls.append(call)
        if call.tool:
            target.qa += f"\n{call.tool} {arg_text(call.args)}"
    return turns


def _turn_for(
    turns: Sequence[HistoryTurn], starts: Sequence[str], in_order: bool, created_at: str
) -> HistoryTurn | None:
    # The turn before the first one that starts later, as the kit's forward walk finds it: on
    # chronological input that is the latest turn starting at or before the call. Plain
    # string comparison, as docs/relevance.md says; the kit's localeCompare orders uniformly
    # formatted ISO-8601 strings the same way. Starts in order (always, from Fit) allow a
    # binary search: a linear walk per tool call is quadratic in a long history.
    if in_order:
        first_later = bisect.bisect_right(starts, created_at)
    else:
        first_later = next((i for i, s in enumerate(starts) if s > created_at), len(starts))
    return turns[first_later - 1] if first_later else None


def select_naive_turns(
    turns: Sequence[HistoryTurn], history_budget: float, *, estimate_tokens: EstimateTokens
) -> list[HistoryTurn]:
    """Newest-first until the first turn that would exceed the budget (the newest always stays)."""
    kept: list[HistoryTurn] = []
    used = 0
    for turn in reversed(turns):
        cost = estimate_tokens(turn.qa)
        if kept and used + cost > history_budget:
            break
        kept.append(turn)
        used += cost
    kept.reverse()
    return kept


def turn_relevance(
    turns: Sequence[HistoryTurn],
    query: str,
    *,
    estimate_tokens: EstimateTokens,
    history_budget: float,
    keep_recent: int = KEEP_RECENT,
    floor_min: float | None = None,
    floor_max: float | None = None,
    floor_curve: float | None = None,
) -> tuple[list[float], float]:
    """Each turn's relevance to the query, and the scaled floor the turns older than the last
    keep_recent must clear: what select_relevant_turns decides by."""
    older = turns[: max(len(turns) - keep_recent, 0)]
    floor = relevance_floor(
        [estimate_tokens(turn.qa) for turn in older],
        len(turns),
        history_budget,
        keep_recent,
        floor_min,
        floor_max,
        floor_curve,
    )
    query_tokens = content_tokens(query)
    return [relevance_to_query(turn.qa, query_tokens) for turn in turns], floor


def relevance_floor(
    turn_tokens: Sequence[float],
    turn_count: int,
    history_budget: float,
    keep_recent: int = KEEP_RECENT,
    floor_min: float | None = None,
    floor_max: float | None = None,
    floor_curve: float | None = None,
) -> float:
    """turn_relevance's floor for `turn_count` turns from the estimated tokens of each turn,
    of which only the ones older than the last keep_recent count (callers may pass them alone,
    or all: Fit's TurnIndex keeps every turn's estimate between queries)."""
    if keep_recent < 0:
        # The kit reads past the end of the history here and throws; say why instead.
        raise ValueError(f"keep_recent must be >= 0, got {keep_recent}")
    older_tokens = sum(turn_tokens[: max(turn_count - keep_recent, 0)])
    u = older_tokens / history_budget if history_budget > 0 else 0.0
    return scaled_relevance_floor(
        u,
        RELEVANCE_FLOOR_MIN if floor_min is None else floor_min,
        RELEVANCE_FLOOR_MAX if floor_max is None else floor_max,
        RELEVANCE_FLOOR_CURVE if floor_curve is None else floor_curve,
    )


def select_relevant_turns(
    turns: Sequence[HistoryTurn],
    query: str,
    *,
    estimate_tokens: EstimateTokens,
    history_budget: float,
    keep_recent: int = KEEP_RECENT,
    floor_min: float | None = None,
    floor_max: float | None = None,
    floor_curve: float | None = None,
) -> list[HistoryTurn]:
    """The last keep_recent turns plus every older turn whose relevance clears the scaled floor."""
    relevance, floor = turn_relevance(
        turns,
        query,
        estimate_tokens=estimate_tokens,
        history_budget=history_budget,
        keep_recent=keep_recent,
        floor_min=floor_min,
        floor_max=floor_max,
        floor_curve=floor_curve,
    )
    recent_start = len(turns) - keep_recent
    return [turn for i, turn in enumerate(turns) if i >= recent_start or relevance[i] >= floor]
