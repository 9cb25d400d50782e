"""SharedContextStore against LangGraph's own InMemoryStore: the same random batches of
operations (puts, deletes, gets, searches with and without a query, filters, namespace
listings) run on both, and every result must agree.

Where InMemoryStore's answer depends on its dict's history rather than on what it stores,
the reference is normalised after every batch, as docs/integrations.md explains: namespaces
left empty are dropped (InMemoryStore keeps every namespace a get or delete ever named, and
lists them), and its dicts are kept in namespace, then key order (LangGraph defines no order
for a search without a query; InMemoryStore's is insertion order, which sharedctx does not
record). A search with a query is ranked by sharedctx's scoring, where the reference without
an embedding model ignores the query: there the results must be as many as the reference's,
each one an item the reference would match, best score first.
"""

from __future__ import annotations

import json
import random
import time
from collections import defaultdict
from typing import Any

from langgraph.store.base import (
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchItem,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from sharedctx.langgraph import SharedContextStore
from sharedctx_server.server import RunningServer

SEQUENCES = 30
BATCHES = 40  # per sequence; each batch holds 1-3 operations
NAMESPACES = [
    ("users", "alice"),
    ("users", "bob"),
    ("users", "alice", "notes"),
    ("users",),
    ("docs",),
    ("a/b", "c d"),
    ("ünï", "x.y"),
]
PREFIXES = [(), ("users",), ("users", "alice"), ("docs",), ("a/b",), ("nothing",)]
# The item's text is what the server embeds (InMemoryStore's own index settings, unused by the
# reference, which has no embedding model).
INDEX: IndexConfig = {"dims": 384, "embed": "unused", "fields": ["text"]}
KEYS = ["k1", "k2", "k3", "prefs", "note 1", "ключ", "a/b"]
# Few distinct texts and queries: the server embeds each once, which keeps the test quick.
TEXTS = [
    "Alice likes spicy ramen",
    "Bob drinks tea, never coffee",
    "the deploy runs on kubernetes",
    "build failed with a cache error",
    "hiking near Paris in May",
    "prefers dark mode",
    "meeting moved to Thursday",
    "the API key rotates weekly",
]
QUERIES = ["what does Alice eat", "coffee or tea", "why did the build fail", "where to hike"]


def _value(rng: random.Random) -> dict[str, Any]:
    value: dict[str, Any] = {
        "text": rng.choice(TEXTS),
        "n": rng.randint(0, 9),
        "kind": rng.choice(["fact", "pref", "event"]),
    }
    if rng.random() < 0.5:
        value["nested"] = {"a": rng.randint(0, 2), "b": rng.choice(["x", "y"])}
    if rng.random() < 0.3:
        value["tags"] = rng.sample(["red", "green", "blue"], rng.randint(0, 2))
    if rng.random() < 0.3:
        value["f"] = round(rng.uniform(-5, 5), 3)
    return value


def _filter(rng: random.Random) -> dict[str, Any] | None:
    return rng.choice(
        [
            None,
            None,
            {"kind": rng.choice(["fact", "pref", "event"])},
            {"n": {"$gt": rng.randint(0, 9)}},
            {"n": {"$gte": 3, "$lte": 7}},
            {"kind": {"$ne": "fact"}},
            {"nested": {"a": rng.randint(0, 2)}},
            {"tags": ["red"]},
            {"kind": {"$eq": "pref"}, "n": {"$lt": 5}},
            {"f": {"$gt": 0}},  # raises on an item without "f", in both stores
        ]
    )


def _op(rng: random.Random) -> Op:
    roll = rng.random()
    if roll < 0.45:
        return PutOp(rng.choice(NAMESPACES), rng.choice(KEYS), _value(rng))
    if roll < 0.55:
        return PutOp(rng.choice(NAMESPACES), rng.choice(KEYS), None)
    if roll < 0.7:
        return GetOp(rng.choice(NAMESPACES), rng.choice(KEYS))
    if roll < 0.9:
        return SearchOp(
            rng.choice(PREFIXES),
            filter=_filter(rng),
            limit=rng.choice([1, 2, 3, 10]),
            offset=rng.choice([0, 0, 1, 2]),
            query=rng.choice(QUERIES) if rng.random() < 0.35 else None,
        )
    conditions = []
    if rng.random() < 0.5:
        path = rng.choice([("users",), ("users", "*"), ("*", "alice"), ("docs",), ("a/b",)])
        conditions.append(MatchCondition("prefix", path))
    if rng.random() < 0.3:
        path = rng.choice([("alice",), ("notes",), ("*",), ("c d",), ("x.y",)])
        conditions.append(MatchCondition("suffix", path))
    return ListNamespacesOp(
        match_conditions=tuple(conditions),
        max_depth=rng.choice([None, None, 1, 2]),
        limit=rng.choice([1, 3, 100]),
        offset=rng.choice([0, 0, 1]),
    )


class _ItemsOnly(defaultdict[tuple[str, ...], dict[str, Item]]):
    """InMemoryStore's `_data`, whose namespace listing skips namespaces without items (a get
    of a new namespace, earlier in the same batch, adds an empty one)."""

    def keys(self) -> Any:
        return [ns for ns, items in self.items() if items]


def _reference() -> InMemoryStore:
    reference = InMemoryStore()
    reference._data = _ItemsOnly(dict)
    return reference


def _normalise(reference: InMemoryStore) -> None:
    """Drop the reference's empty namespaces; keep its dicts in namespace, then key order."""
    data = reference._data
    kept = sorted((ns, items) for ns, items in data.items() if items)
    data.clear()
    for ns, items in kept:
        data[ns] = dict(sorted(items.items()))


def _view(item: Item | None) -> tuple[Any, ...] | None:
    # Hashable, for the set comparisons of ranked searches.
    return None if item is None else (item.namespace, item.key, json.dumps(item.value))


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "ok", run()
    except Exception as exc:  # the stores must fail alike
        return "error", type(exc).__name__


def _check(op: Op, ours: Any, theirs: Any, everything: list[SearchItem] | None) -> None:
    if isinstance(op, GetOp):
        assert _view(ours) == _view(theirs)
    elif isinstance(op, SearchOp) and op.query:
        assert everything is not None
        assert len(ours) == len(theirs)
        candidates = {_view(i) for i in everything}
        views = [_view(i) for i in ours]
        assert len(set(views)) == len(views) and set(views) <= candidates
        scores = [i.score for i in ours if i.score is not None]
        assert scores == sorted(scores, reverse=True)
    elif isinstance(op, SearchOp):
        assert [_view(i) for i in ours] == [_view(i) for i in theirs]
        assert all(i.score is None for i in ours)
    else:
        assert ours == theirs


async def _run_sequence(
    store: SharedContextStore, rng: random.Random, counts: dict[str, int]
) -> None:
    reference = _reference()
    for step in range(BATCHES):
        ops = [_op(rng) for _ in range(rng.randint(1, 3))]
        # The whole matching set of each ranked search, as the reference holds it before the
        # batch (searches do not change the reference).
        everything = [
            _outcome(
                lambda op=op: reference.batch([op._replace(query=None, limit=10**6, offset=0)])
            )
            if isinstance(op, SearchOp) and op.query
            else None
            for op in ops
        ]
        theirs = _outcome(lambda ops=ops: reference.batch(ops))
        _normalise(reference)
        if rng.random() < 0.5:
            ours = _outcome(lambda ops=ops: store.batch(ops))
        else:
            try:
                ours = "ok", await store.abatch(ops)
            except Exception as exc:
                ours = "error", type(exc).__name__
        context = f"step {step}: {ops}"
        assert ours[0] == theirs[0], f"{context}: ours {ours}, reference {theirs}"
        if ours[0] == "error":
            assert ours[1] == theirs[1], context
            counts["errors"] += 1
            continue
        for op, mine, its, every in zip(ops, ours[1], theirs[1], everything, strict=True):
            try:
                _check(op, mine, its, every[1][0] if every else None)
            except AssertionError as exc:
                raise AssertionError(f"{context}: {op} -> ours {mine}, reference {its}") from exc
        counts["operations"] += len(ops)
        counts["batches"] += 1
    # And the final states agree in full.
    final = [SearchOp((), limit=10**6), ListNamespacesOp(limit=10**6)]
    mine, its = store.batch(final), reference.batch(final)
    assert [_view(i) for i in mine[0]] == [_view(i) for i in its[0]]
    assert mine[1] == its[1]


async def test_the_store_matches_langgraphs_in_memory_store(
    threaded_server: RunningServer,
) -> None:
    counts = {"operations": 0, "batches": 0, "errors": 0}
    started = time.monotonic()
    for seed in range(SEQUENCES):
        # A prefix per sequence: each starts from an empty store.
        store = SharedContextStore(
            f"127.0.0.1:{threaded_server.port}", index=INDEX, prefix=f"diff/{seed}/"
        )
        try:
            await _run_sequence(store, random.Random(seed), counts)
        except AssertionError as exc:
            raise AssertionError(f"sequence {seed}: {exc}") from exc
        finally:
            await store.aclose()
    elapsed = time.monotonic() - started
    print(
        f"\ndifferential: {SEQUENCES} sequences, {counts['batches']} batches, "
        f"{counts['operations']} operations agreed, {counts['errors']} batches failed alike, "
        f"in {elapsed:.1f} s"
    )
    assert counts["operations"] > SEQUENCES * BATCHES
