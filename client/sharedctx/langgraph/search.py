"""SearchOp: ranked by Fit when it has a query, listed like InMemoryStore when it has none.

With a query, each namespace under the prefix gets one Fit that explains every candidate's
score (budget 1: nothing needs to be selected, only scored) with only the semantic and the
lexical factors weighted, no neighbour expansion and no forced recent entries, so the score is
how well the entry answers the query. The namespaces' candidates are merged best score first
(ties: namespace order, then the server's order); entries written unindexed come after them,
unscored. Without a query, items come namespace by namespace in LangGraph's namespace order,
each namespace's in key order. Either way `filter` applies to the values, then `offset` and
`limit`.
"""

from __future__ import annotations

from langgraph.store.base import SearchItem, SearchOp

from . import values
from .ops import UNINDEXED_TAG, Layout, namespaces_under, read_entries, to_item
from .plans import Call, Plan, chunks

# Fit's options for ranking: the two query factors at the default preset's weights, every
# query-independent factor off.
FIT_OPTIONS = {
    "weights": {
        "semantic_similarity": 0.40,
        "lexical_relevance": 0.38,
        "recency": 0.0,
        "toin_importance": 0.0,
        "error_indicator": 0.0,
        "forward_reference": 0.0,
        "token_density": 0.0,
    },
    "keep_recent": 0,
    "expand_neighbours": False,
    "excerpts": False,
    "explain": True,
    "filters": {"exclude_tags": [UNINDEXED_TAG]},
}
_PAGE = 100  # entries read per GetMany while listing


def search(op: SearchOp, layout: Layout) -> Plan[list[SearchItem]]:
    """The plan of a SearchOp."""
    if op.query:
        return (yield from _ranked(op, layout))
    return (yield from _listed(op, layout))


def _listed(op: SearchOp, layout: Layout) -> Plan[list[SearchItem]]:
    spaces = yield from namespaces_under(op.namespace_prefix, layout)
    # As InMemoryStore: with a filter every item is tested (a filter that cannot be applied
    # fails whatever the page), and negative bounds slice from the end; otherwise the listing
    # stops once the page is full.
    stop = op.offset + op.limit if not op.filter and min(op.offset, op.limit) >= 0 else None
    found: list[SearchItem] = []
    for labels, name in spaces:
        [keys] = yield [Call("keys", (name,), {"page_size": 1000}, listed=True)]
        for page in chunks(keys, _PAGE):
            entries = yield from read_entries({name: page})
            for key in page:
                item = to_item(entries.get((name, key)), labels, found=True)
                if isinstance(item, SearchItem) and values.matches(item.value, op.filter):
                    found.append(item)
                    if len(found) == stop:
                        return found[op.offset : stop]
    return found[op.offset : op.offset + op.limit]


def _ranked(op: SearchOp, layout: Layout) -> Plan[list[SearchItem]]:
    spaces = yield from namespaces_under(op.namespace_prefix, layout)
    if not spaces:
        return []
    fits = yield [Call("fit", (name, op.query, 1), FIT_OPTIONS) for _, name in spaces]
    scored: list[tuple[float, tuple[str, ...], str, str]] = []
    unscored: list[tuple[tuple[str, ...], str, str]] = []
    for (labels, name), result in zip(spaces, fits, strict=True):
        for candidate in result.explain:
            # "filtered": written unindexed (the only filter asked), or expired meanwhile.
            if candidate.reason == "filtered":
                unscored.append((labels, name, candidate.key))
            else:
                scored.append((candidate.score, labels, name, candidate.key))
    scored.sort(key=lambda s: -s[0])  # stable: ties keep namespace and server order
    unscored.sort()
    order: list[tuple[tuple[str, ...], str, str, float | None]]
    order = [(labels, name, key, score) for score, labels, name, key in scored]
    order += [(labels, name, key, None) for labels, name, key in unscored]
    wanted: dict[str, list[str]] = {}
    for _, name, key, _ in order:
        wanted.setdefault(name, []).append(key)
    entries = yield from read_entries(wanted)
    found: list[SearchItem] = []
    for labels, name, key, score in order:
        item = to_item(entries.get((name, key)), labels, score, found=True)
        if isinstance(item, SearchItem) and values.matches(item.value, op.filter):
            found.append(item)
    return found[op.offset : op.offset + op.limit]
