"""Item values as entry contents, LangGraph's search filters, and the text an item is indexed by.

A value (a JSON object) is stored as the entry's full content, JSON text, so that Fit's lexical
score reads it; the text of the indexed fields, when the index names fields, becomes the
entry's compressed form, which is what sharedctx embeds. The filter semantics are those of
LangGraph's InMemoryStore (its `_compare_values` / `_apply_operator`, written again here).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import get_text_at_path

WHOLE = "$"  # LangGraph's path for the whole value
_SAFE_OPERATORS = frozenset({"$eq", "$ne"})  # the operators that compare without float()


def dump(value: Mapping[str, Any]) -> str:
    """The entry content of a value; TypeError or ValueError when it is not JSON."""
    try:
        return json.dumps(dict(value), ensure_ascii=False)
    except RecursionError:  # a ValueError like the others, not a crash of the batch
        raise ValueError("the value is nested too deeply to store as JSON") from None


def load(content: str) -> dict[str, Any] | None:
    """The value an entry's content holds, or None when it is not a JSON object (an entry the
    store did not write)."""
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than json parses
        return None
    return value if isinstance(value, dict) else None


def index_text(value: Mapping[str, Any], fields: Sequence[str]) -> str | None:
    """The text to embed for `fields` of `value`: None for the whole value (the server's own
    compressed form of the JSON, as InMemoryStore embeds the whole object for "$"), "" when
    the fields hold no text (the item is then not indexed, as InMemoryStore leaves it without
    a vector)."""
    if list(fields) == [WHOLE]:
        return None
    texts = [text for path in fields for text in get_text_at_path(value, path)]
    return "\n".join(texts)


def ttl_seconds(minutes: float | None) -> int:
    """A LangGraph TTL (minutes, None = none) as sharedctx's whole seconds (0 = none given)."""
    if minutes is None:
        return 0
    if not minutes > 0 or math.isinf(minutes):
        raise ValueError(f"ttl must be a positive number of minutes or None; got {minutes!r}")
    return max(1, math.ceil(minutes * 60))


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """Whether `value` passes a search filter (exact values, nested objects, $eq/$ne/$gt/$gte/
    $lt/$lte), as InMemoryStore decides it."""
    if not conditions:
        return True
    return all(_compare(value.get(k), wanted) for k, wanted in conditions.items())


def may_raise(conditions: Mapping[str, Any] | None) -> bool:
    """Whether `matches` could raise for some value under `conditions`: an order operator
    raises on a missing or non-numeric field, an unknown operator always. Exact JSON values,
    nested objects, lists, $eq and $ne never raise."""
    return any(_may_raise(wanted) for wanted in (conditions or {}).values())


def _may_raise(wanted: Any) -> bool:
    # Follows _compare's cases; a value that is not JSON might raise when compared.
    if isinstance(wanted, dict):
        if not all(isinstance(k, str) for k in wanted):
            return True  # _compare would call k.startswith
        if any(k.startswith("$") for k in wanted):
            operands_json = all(_is_json(v) for v in wanted.values())
            return not (wanted.keys() <= _SAFE_OPERATORS and operands_json)
        return any(_may_raise(v) for v in wanted.values())
    if isinstance(wanted, (list, tuple)):
        return any(_may_raise(w) for w in wanted)
    return not _is_json(wanted)


def _is_json(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return isinstance(value, (str, int, float, bool, type(None)))


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_apply(actual, op, operand) for op, operand in wanted.items())
        if not isinstance(actual, dict):
            return False
        return all(_compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(wanted)
            and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    # Like InMemoryStore (and PostgreSQL's JSONB casts): order comparisons go through float(),
    # so a missing or non-numeric field raises rather than silently failing to match.
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op == "$gt":
        return float(actual) > float(operand)
    if op == "$gte":
        return float(actual) >= float(operand)
    if op == "$lt":
        return float(actual) < float(operand)
    if op == "$lte":
        return float(actual) <= float(operand)
    raise ValueError(f"Unsupported operator: {op}")
