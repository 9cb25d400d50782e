"""The parts of a batch's plan (store.py assembles it; search.py builds on these): entries as
items, reads by key, the store's namespaces under a prefix, ListNamespacesOp, and the calls of
the TTL refreshes and of the writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from langgraph.store.base import (
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
)

from ..types import Entry, PutItem
from . import names, values
from .plans import Call, Plan, chunks, gather

# Tag of the entries written with index=False (or whose indexed fields hold no text): Fit
# leaves them out of a query's ranking, as InMemoryStore keeps no vector for them.
UNINDEXED_TAG = "langgraph:unindexed"
KIND = "note"
_GET_CHUNK = 500  # keys per GetMany (the server takes up to 1000)
_PUT_CHUNK = 500  # entries per PutMany
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Layout:
    """Where the store's namespaces live and which value fields are embedded."""

    prefix: str = ""
    fields: tuple[str, ...] = (values.WHOLE,)


def to_item(
    entry: Entry | None, namespace: tuple[str, ...], score: float | None = None, *, found: bool
) -> Item | None:
    """The item of an entry (a SearchItem when `found` by a search), or None when there is no
    entry or it is not one the store wrote."""
    if entry is None:
        return None
    value = values.load(entry.content)
    if value is None:
        return None
    created, updated = entry.created_at or _EPOCH, entry.updated_at or _EPOCH
    if found:
        return SearchItem(namespace, entry.key, value, created, updated, score)
    return Item(
        value=value, key=entry.key, namespace=namespace, created_at=created, updated_at=updated
    )


def read_entries(wanted: Mapping[str, Sequence[str]]) -> Plan[dict[tuple[str, str], Entry]]:
    """The live entries (full form) of the keys wanted, by (sharedctx namespace, key)."""
    requests = [
        (name, list(chunk))
        for name, keys in wanted.items()
        for chunk in chunks(list(dict.fromkeys(keys)), _GET_CHUNK)
    ]
    replies = yield from gather(
        Call("get_many", (name, keys), {"full": True}) for name, keys in requests
    )
    return {
        (name, key): entry
        for (name, _), found in zip(requests, replies, strict=True)
        for key, entry in found.items()
    }


def namespaces_under(
    labels: tuple[str, ...], layout: Layout
) -> Plan[list[tuple[tuple[str, ...], str]]]:
    """The store's namespaces with live entries under `labels` (a LangGraph namespace prefix),
    as (labels, sharedctx namespace), in LangGraph's order (tuples of labels, sorted)."""
    start = names.encode_prefix(labels, layout.prefix)
    if len(start) > names.MAX_NAMESPACE:
        return []  # no namespace can be that long
    [infos] = yield [Call("namespaces", (start,), {"page_size": 1000}, listed=True)]
    found = []
    for info in infos:
        decoded = names.decode(info.namespace, layout.prefix)
        if decoded is not None and decoded[: len(labels)] == labels:
            found.append((decoded, info.namespace))
    return sorted(found)


def list_namespaces(op: ListNamespacesOp, layout: Layout) -> Plan[list[tuple[str, ...]]]:
    """A ListNamespacesOp: match conditions, max_depth, offset and limit as InMemoryStore
    applies them, over the namespaces that hold live entries."""
    conditions = op.match_conditions or ()
    lead: tuple[str, ...] = ()
    for condition in conditions:
        if condition.match_type == "prefix":
            # Its labels up to the first wildcard narrow what the server lists.
            for label in condition.path:
                if label == "*":
                    break
                lead += (label,)
            break
    spaces = yield from namespaces_under(lead, layout)
    found = [ns for ns, _ in spaces if all(_does_match(c, ns) for c in conditions)]
    if op.max_depth is not None:
        found = sorted({ns[: op.max_depth] for ns in found})
    return found[op.offset : op.offset + op.limit]


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or label == p for label, p in pairs)


def _put_item(key: str, op: PutOp, layout: Layout) -> PutItem:
    assert op.value is not None
    text = None
    if op.index is False:
        unindexed = True
    else:
        text = values.index_text(op.value, layout.fields if op.index is None else op.index)
        unindexed = text == ""
    return PutItem(
        key=key,
        content=values.dump(op.value),
        ttl_seconds=values.ttl_seconds(op.ttl),
        compressed=text or None,
        kind=KIND,
        tags=(UNINDEXED_TAG,) if unindexed else (),
    )


def touch_calls(keys: Mapping[str, Sequence[str]]) -> list[Call]:
    """The calls that restart the TTLs of `keys` (by sharedctx namespace), each key once."""
    return [
        Call("touch", (name, list(chunk)))
        for name, wanted in keys.items()
        for chunk in chunks(list(dict.fromkeys(wanted)), _GET_CHUNK)
    ]


def write_calls(puts: Mapping[tuple[tuple[str, ...], str], PutOp], layout: Layout) -> list[Call]:
    """The calls of the batch's writes: deletes, and one PutMany per namespace (chunked)."""
    deletes: list[Call] = []
    batches: dict[str, list[PutItem]] = {}
    for (namespace, key), op in puts.items():
        name = names.encode(namespace, layout.prefix)
        if op.value is None:
            deletes.append(Call("delete", (name, key)))
        else:
            batches.setdefault(name, []).append(_put_item(key, op, layout))
    writes = [
        Call("put_many", (name, list(chunk)))
        for name, items in batches.items()
        for chunk in chunks(items, _PUT_CHUNK)
    ]
    return deletes + writes
