"""SearchOp: ranked by Fit when it has a query, listed like InMemoryStore when it has none.

With a query, each namespace under the prefix gets one Fit that explains every candidate's
score (budget 1: nothing needs to be selected, only scored) with only the semantic and the
lexical factors weighted, no neighbour expansion and no forced recent entries, so the score is
how well the entry answers the query. The namespaces' candidates are merged best score first
(ties: namespace order, then the server's order); entries written unindexed come after them,
unscored. Without a query, items come namespace by namespace in LangGraph's namespace order,
each namespace's in key order. Either way `filter` applies to the values, then `offset` and
`limit`; the entries are read in that order only until `offset + limit` items match (all
of them when the filter may raise, as InMemoryStore raises whatever the page, or when a
bound is negative).
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import SearchItem, SearchOp

from ..types import FitResult
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
_PAGE = 100  # entries read per GetMany while listing, and at least per page when filtering
# A search's candidate: its LangGraph namespace, sharedctx namespace, key, and score (None:
# listed, or unindexed).
Candidate = tuple[tuple[str, ...], str, str, float | None]


def search(
    op: SearchOp, layout: Layout, expiring: set[tuple[str, str]] | None = None
) -> Plan[list[SearchItem]]:
    """The plan of a SearchOp; adds (sharedctx namespace, key) of every item read that has a
    TTL to `expiring` (for the batch's TTL refresh)."""
    if op.query:
        return (yield from _ranked(op, layout, expiring))
    return (yield from _listed(op, layout, expiring))


def _stop(op: SearchOp) -> int | None:
    """How many matches end the search (`offset + limit`), or None when every candidate must be
    tested: as InMemoryStore, a filter that may raise raises whatever the page (so it meets
    every value), and negative bounds slice from the end."""
    if values.may_raise(op.filter) or min(op.offset, op.limit) < 0:
        return None
    return op.offset + op.limit


def _matching(
    candidates: Sequence[Candidate], op: SearchOp, expiring: set[tuple[str, str]] | None
) -> Plan[list[SearchItem]]:
    """The items of `candidates` (read at once) that pass the filter, in their order; those no
    longer live or not the store's are skipped. Those with a TTL go into `expiring`."""
    wanted: dict[str, list[str]] = {}
    for _, name, key, _ in candidates:
        wanted.setdefault(name, []).append(key)
    entries = yield from read_entries(wanted)
    found: list[SearchItem] = []
    for labels, name, key, score in candidates:
        entry = entries.get((name, key))
        item = to_item(entry, labels, score, found=True)
        if isinstance(item, SearchItem) and values.matches(item.value, op.filter):
            found.append(item)
            if expiring is not None and entry is not None and entry.expires_at is not None:
                expiring.add((name, key))
    return found


def _listed(
    op: SearchOp, layout: Layout, expiring: set[tuple[str, str]] | None
) -> Plan[list[SearchItem]]:
    spaces = yield from namespaces_under(op.namespace_prefix, layout)
    stop = _stop(op)
    found: list[SearchItem] = []
    for labels, name in spaces:
        [keys] = yield [Call("keys", (name,), {"page_size": 1000}, listed=True)]
        for page in chunks(keys, _PAGE):
            page_candidates = [(labels, name, key, None) for key in page]
            found += yield from _matching(page_candidates, op, expiring)
            if stop is not None and len(found) >= stop:
                return found[op.offset : stop]
    return found[op.offset : op.offset + op.limit]


def _ranked(
    op: SearchOp, layout: Layout, expiring: set[tuple[str, str]] | None
) -> Plan[list[SearchItem]]:
    spaces = yield from namespaces_under(op.namespace_prefix, layout)
    if not spaces:
        return []
    fits = yield [Call("fit", (name, op.query, 1), FIT_OPTIONS) for _, name in spaces]
    order = _ranking(spaces, fits)
    stop = _stop(op)
    found: list[SearchItem] = []
    start = 0
    # Read best first, only as many entries as matches are missing (one may have expired
    # since the Fit, or not be an item). A filter needs the values to tell a match, so with
    # one the entries are read in pages (of at least _PAGE: it may match few) until enough
    # match, rather than all at once; with no stop, every entry is read, at once.
    while start < len(order) and (stop is None or len(found) < stop):
        size = len(order) if stop is None else stop - len(found)
        if op.filter:
            size = max(size, _PAGE)
        found += yield from _matching(order[start : start + size], op, expiring)
        start += size
    return found[op.offset : op.offset + op.limit]


def _ranking(
    spaces: Sequence[tuple[tuple[str, ...], str]], fits: Sequence[FitResult]
) -> list[Candidate]:
    """The namespaces' candidates, best score first (ties: namespace order, then the server's
    order), then the unscored ones (written unindexed) in namespace and key order."""
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
    order: list[Candidate] = [(labels, name, key, score) for score, labels, name, key in scored]
    order += [(labels, name, key, None) for labels, name, key in unscored]
    return order
