"""SharedContextStore against a real server: items, values and timestamps, search by Fit and by
listing, filters, namespace listing, TTL, the index, the namespace mapping and its limits; and
the plans' parts that need no server (reads side by side, filters that may raise)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from sharedctx import Client
from sharedctx.langgraph import SharedContextStore, names, values
from sharedctx.langgraph.plans import Call, Plan, parallel
from sharedctx_server.server import RunningServer


@pytest.fixture
def store(threaded_server: RunningServer) -> Iterator[SharedContextStore]:
    with SharedContextStore(f"127.0.0.1:{threaded_server.port}") as s:
        yield s


@pytest.mark.parametrize(
    "namespace",
    [("users", "alice@example.com"), ("a/b", "c d"), ("ünï", "x.y"), ("A", ".41"), ("*",)],
)
def test_namespaces_map_reversibly(namespace: tuple[str, ...]) -> None:
    name = names.encode(namespace, "lg/")
    assert len(name) <= names.MAX_NAMESPACE
    assert all(c.isascii() and (c.isalnum() or c in "._:/-") for c in name)
    assert names.decode(name, "lg/") == namespace


@pytest.mark.parametrize("name", ["a//b", "a/.41", "a/.4", "a/.2e", "a/", "other"])
def test_names_the_store_could_not_have_written_decode_to_none(name: str) -> None:
    assert names.decode(name, "" if name != "other" else "lg/") is None


def test_an_overlong_namespace_is_a_clear_error(store: SharedContextStore) -> None:
    with pytest.raises(InvalidNamespaceError, match="over the limit of 128"):
        store.put(("é" * 30, "x"), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError, match="non-empty"):
        store.batch([PutOp(("a", ""), "k", {"v": 1})])
    # A search prefix that long matches nothing.
    assert store.search(("é" * 50,)) == []


def test_put_get_overwrite_delete(store: SharedContextStore) -> None:
    ns = ("users", "alice")
    store.put(ns, "prefs", {"theme": "dark", "n": 1, "nested": {"a": [1, 2]}})
    first = store.get(ns, "prefs")
    assert first is not None
    assert first.value == {"theme": "dark", "n": 1, "nested": {"a": [1, 2]}}
    assert (first.namespace, first.key) == (ns, "prefs")
    time.sleep(0.01)
    store.put(ns, "prefs", {"theme": "light"})
    second = store.get(ns, "prefs")
    assert second is not None and second.value == {"theme": "light"}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    store.delete(ns, "prefs")
    assert store.get(ns, "prefs") is None
    assert store.get(("nobody",), "prefs") is None


def test_a_value_that_is_not_json_is_refused_before_anything_is_written(
    store: SharedContextStore,
) -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(ValueError, match="nested too deeply"):
        store.put(("refused",), "deep", deep)
    with pytest.raises(TypeError):
        store.put(("refused",), "set", {"s": {1, 2}})
    assert store.list_namespaces(prefix=("refused",)) == []


def test_reads_in_a_batch_see_the_store_before_its_writes(store: SharedContextStore) -> None:
    ns = ("batch",)
    store.put(ns, "k", {"v": 0})
    results = store.batch(
        [PutOp(ns, "k", {"v": 1}), GetOp(ns, "k"), PutOp(ns, "k", {"v": 2}), SearchOp(ns)]
    )
    got, found = results[1], results[3]
    assert got is not None and got.value == {"v": 0}
    assert isinstance(found, list) and [i.value for i in found] == [{"v": 0}]
    item = store.get(ns, "k")
    assert item is not None and item.value == {"v": 2}  # the last write of a key wins


def test_search_with_a_query_ranks_by_fit(store: SharedContextStore) -> None:
    ns = ("memories", "alice")
    store.put(ns, "m1", {"text": "Alice's favourite food is spicy ramen"})
    store.put(ns, "m2", {"text": "The deployment runs on Kubernetes in eu-west-1"})
    store.put(("memories", "bob"), "m3", {"text": "Bob prefers tea over coffee"})
    store.put(ns, "m4", {"text": "unrelated"}, index=False)
    found = store.search(("memories",), query="which noodles does Alice like to eat?")
    assert [i.key for i in found][:1] == ["m1"]
    scores = [i.score for i in found]
    assert all(s is not None for s in scores[:3]) and scores[:3] == sorted(scores[:3])[::-1]
    assert found[-1].key == "m4" and found[-1].score is None  # unindexed: after, unscored
    assert [i.key for i in store.search(("memories",), query="tea", limit=1, offset=3)] == ["m4"]
    assert [i.key for i in store.search(("memories", "bob"), query="ramen")] == ["m3"]


def test_search_without_a_query_lists_in_namespace_then_key_order(
    store: SharedContextStore,
) -> None:
    for ns, key in [(("b",), "y"), (("a", "z"), "k"), (("a",), "x2"), (("a",), "x1")]:
        store.put(ns, key, {"ns": list(ns), "n": len(key)})
    listed = [(i.namespace, i.key, i.score) for i in store.search(())]
    assert listed == [
        (("a",), "x1", None),
        (("a",), "x2", None),
        (("a", "z"), "k", None),
        (("b",), "y", None),
    ]
    assert [i.key for i in store.search(("a",), limit=2, offset=1)] == ["x2", "k"]


def test_filters_follow_langgraph_semantics(store: SharedContextStore) -> None:
    ns = ("docs",)
    store.put(ns, "1", {"type": "report", "score": 4.5, "meta": {"lang": "en", "x": 1}})
    store.put(ns, "2", {"type": "report", "score": 3, "meta": {"lang": "de"}})
    store.put(ns, "3", {"type": "note", "score": 5, "tags": ["a", "b"]})

    def keys(**filter: object) -> list[str]:
        return [i.key for i in store.search(ns, filter=filter)]

    assert keys(type="report") == ["1", "2"]
    assert keys(score={"$gt": 4}) == ["1", "3"]
    assert keys(score={"$gte": 3, "$lt": 5}) == ["1", "2"]
    assert keys(type={"$ne": "report"}) == ["3"]
    assert keys(meta={"lang": "en"}) == ["1"]
    assert keys(tags=["a", "b"]) == ["3"]
    assert keys(tags=["a"]) == []
    with pytest.raises(ValueError, match="Unsupported operator"):
        store.search(ns, filter={"score": {"$in": [1]}})
    # Ranked searches filter the same way.
    assert [i.key for i in store.search(ns, query="report", filter={"score": {"$lte": 3}})] == ["2"]


def test_a_ranked_search_reads_only_the_entries_of_its_page(
    store: SharedContextStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = ("page",)
    for n in range(6):
        store.put(ns, f"k{n}", {"text": f"apples and pears {n}", "n": n})
    store.put(ns, "odd", {"text": "apples without a number"})
    read: list[int] = []
    get_many = store._client.get_many

    def counted(namespace: str, keys: list[str], **kwargs: Any) -> Any:
        read.append(len(keys))
        return get_many(namespace, keys, **kwargs)

    monkeypatch.setattr(store._client, "get_many", counted)
    assert len(store.search(ns, query="apples", limit=2)) == 2
    assert read == [2]
    read.clear()
    # A filter is tested on pages of candidates (of at least 100: here all 7 at once).
    assert len(store.search(ns, query="apples", limit=2, filter={"n": {"$ne": 3}})) == 2
    assert read == [7]
    # One that may raise meets every value whatever the page, as in InMemoryStore.
    with pytest.raises(TypeError):
        store.search(ns, query="apples", limit=1, filter={"n": {"$gte": 0}})


@pytest.mark.parametrize(
    ("conditions", "may_raise"),
    [
        (None, False),
        ({"a": 1, "b": {"c": [1, "x"]}}, False),
        ({"a": {"$eq": 1, "$ne": [2]}}, False),
        ({"a": {"$gt": 1}}, True),
        ({"a": {"b": {"$lte": 1}}}, True),
        ({"a": [1, {"$lt": 2}]}, True),
        ({"a": {"$in": [1]}}, True),
        ({"a": {"x": 1, "$eq": 2}}, True),  # "x" is taken for an (unknown) operator
        ({"a": {"$eq": object()}}, True),
    ],
)
def test_filters_that_may_raise(conditions: dict[str, Any] | None, may_raise: bool) -> None:
    assert values.may_raise(conditions) is may_raise


def _steps(name: str, count: int, fail_at: int | None = None) -> Plan[list[Any]]:
    replies = []
    for step in range(count):
        if step == fail_at:
            raise ValueError(name)
        [reply] = yield [Call("echo", (name, step))]
        replies.append(reply)
    return replies


def _drive(plan: Plan[Any]) -> tuple[list[list[Call]], Any]:
    """The plan's steps (each call answered with its arguments) and its result."""
    steps: list[list[Call]] = []
    try:
        step = next(plan)
        while True:
            steps.append(step)
            step = plan.send([c.args for c in step])
    except StopIteration as done:
        return steps, done.value


def test_parallel_plans_share_steps_and_keep_their_order() -> None:
    steps, results = _drive(parallel([_steps("a", 2), _steps("b", 1), _steps("c", 0)]))
    assert [[c.args for c in step] for step in steps] == [[("a", 0), ("b", 0)], [("a", 1)]]
    assert results == [[("a", 0), ("a", 1)], [("b", 0)], []]
    assert _drive(parallel([])) == ([], [])


def test_parallel_plans_fail_as_they_would_one_after_another() -> None:
    # "b" fails first in time, but "a" comes first: its error is the batch's; "c" is dropped.
    plan = parallel([_steps("a", 3, fail_at=2), _steps("b", 2, fail_at=1), _steps("c", 3)])
    steps: list[list[Call]] = []
    with pytest.raises(ValueError, match="^a$"):
        step = next(plan)
        while True:
            steps.append(step)
            step = plan.send([c.args for c in step])
    assert [[c.args[0] for c in step] for step in steps] == [["a", "b", "c"], ["a"]]


def test_list_namespaces(store: SharedContextStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]:
        store.put(ns, "k", {"v": 1})
    store.put(("a", "c", "f"), "k", {"v": 1})
    store.put(("x", "f"), "k", {"v": 1})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("x", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("x",)]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]
    store.delete(("x", "f"), "k")
    assert ("x", "f") not in store.list_namespaces()


def test_ttl_in_minutes_expires_items(store: SharedContextStore) -> None:
    store.put(("ttl",), "short", {"v": 1}, ttl=1 / 60)  # one second
    store.put(("ttl",), "long", {"v": 2}, ttl=60)
    assert store.get(("ttl",), "short") is not None
    deadline = time.monotonic() + 10
    # Without refresh_ttl=False, each read would restart the TTL it waits out.
    while store.get(("ttl",), "short", refresh_ttl=False) is not None:
        assert time.monotonic() < deadline, "the item did not expire"
        time.sleep(0.1)
    assert [i.key for i in store.search(("ttl",))] == ["long"]
    with pytest.raises(ValueError, match="positive number of minutes"):
        store.put(("ttl",), "bad", {"v": 1}, ttl=0)


def test_reads_restart_the_ttls_of_the_items_they_return(threaded_server: RunningServer) -> None:
    target = f"127.0.0.1:{threaded_server.port}"
    with SharedContextStore(target) as store, Client(target) as client:
        for key, ttl in (("a", 1.0), ("b", 1.0), ("c", 1.0), ("plain", None)):
            store.put(("refresh",), key, {"v": key}, ttl=ttl)

        def expiry(key: str) -> Any:
            return client.get("refresh", key).expires_at

        written = {key: expiry(key) for key in "abc"}
        time.sleep(0.05)
        store.get(("refresh",), "a", refresh_ttl=False)
        store.search(("refresh",), filter={"v": "b"}, refresh_ttl=False)
        assert {key: expiry(key) for key in "abc"} == written
        assert store.get(("refresh",), "a") is not None
        assert [i.key for i in store.search(("refresh",), filter={"v": "b"})] == ["b"]
        assert expiry("a") > written["a"] and expiry("b") > written["b"]
        assert expiry("c") == written["c"]  # not returned, not refreshed
        assert store.get(("refresh",), "plain") is not None
        assert expiry("plain") is None  # an item without a TTL keeps having none
        with SharedContextStore(target, ttl={"refresh_on_read": False}) as no_refresh:
            no_refresh.get(("refresh",), "c")
        assert expiry("c") == written["c"]


def test_the_default_ttl_of_the_ttl_config_applies(threaded_server: RunningServer) -> None:
    target = f"127.0.0.1:{threaded_server.port}"
    with SharedContextStore(target, ttl={"default_ttl": 5}) as store:
        store.put(("ttl",), "k", {"v": 1})
    with Client(target) as client:
        entry = client.get("ttl", "k")
    assert entry.expires_at is not None and entry.created_at is not None
    assert 299 <= (entry.expires_at - entry.created_at).total_seconds() <= 301


def test_index_fields_become_the_embedded_text(threaded_server: RunningServer) -> None:
    target = f"127.0.0.1:{threaded_server.port}"
    with SharedContextStore(target, index={"dims": 384, "embed": "x", "fields": ["text"]}) as store:
        store.put(("idx",), "a", {"text": "likes hiking", "other": "z" * 50})
        store.put(("idx",), "b", {"other": "no text field"})
        store.put(("idx",), "c", {"other": "explicit"}, index=["other"])
    with Client(target) as client:
        assert client.get("idx", "a").content == "likes hiking"
        assert client.get("idx", "b").tags == ("langgraph:unindexed",)
        assert client.get("idx", "c").content == "explicit"


def test_a_prefix_keeps_the_store_to_its_namespaces(threaded_server: RunningServer) -> None:
    target = f"127.0.0.1:{threaded_server.port}"
    with Client(target) as client:
        client.put("team-a/lg/foreign", "plain", "not a JSON object")
        client.put("team-a/lg/foreign", "deep", '{"v":' * 3000 + "1" + "}" * 3000)
        client.put("elsewhere", "k", '{"v": 1}')
    with SharedContextStore(target, prefix="team-a/lg/") as store:
        store.put(("users", "1"), "k", {"v": 1})
        assert store.list_namespaces() == [("foreign",), ("users", "1")]
        assert store.get(("foreign",), "plain") is None  # not one of the store's items
        assert store.get(("foreign",), "deep") is None  # nor is JSON too deep to read
        assert [i.key for i in store.search(())] == ["k"]
        assert [i.key for i in store.search((), query="v")] == ["k"]
    with Client(target) as client:
        assert client.get("team-a/lg/users/1", "k").content == '{"v": 1}'


async def test_abatch_runs_the_same_operations(threaded_server: RunningServer) -> None:
    async with SharedContextStore(f"127.0.0.1:{threaded_server.port}") as store:
        await store.aput(("async", "ns"), "k", {"text": "asynchronous hello"})
        item = await store.aget(("async", "ns"), "k")
        assert item is not None and item.value == {"text": "asynchronous hello"}
        found = await store.asearch(("async",), query="hello")
        assert [i.key for i in found] == ["k"] and found[0].score is not None
        assert await store.alist_namespaces() == [("async", "ns")]
        await store.adelete(("async", "ns"), "k")
        assert await store.aget(("async", "ns"), "k") is None
