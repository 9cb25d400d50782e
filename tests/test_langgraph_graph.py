"""A small LangGraph graph that keeps its memories in sharedctx: a node writes what the user
said into the user's namespace, the next recalls the memories that answer the message, and a
later run (a new thread, the same store) finds what an earlier one wrote."""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from sharedctx.langgraph import SharedContextStore
from sharedctx_server.server import RunningServer


class State(TypedDict, total=False):
    user: str
    message: str
    remember: bool
    recalled: list[str]


def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
    if state.get("remember"):
        namespace = ("memories", state["user"])
        key = f"m{len(store.search(namespace, limit=100))}"
        store.put(namespace, key, {"text": state["message"]})
    return {}


def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
    found = store.search(("memories", state["user"]), query=state["message"], limit=2)
    return {"recalled": [item.value["text"] for item in found]}


async def aremember(state: State, *, store: BaseStore) -> dict[str, Any]:
    if state.get("remember"):
        namespace = ("memories", state["user"])
        key = f"m{len(await store.asearch(namespace, limit=100))}"
        await store.aput(namespace, key, {"text": state["message"]})
    return {}


async def arecall(state: State, *, store: BaseStore) -> dict[str, Any]:
    found = await store.asearch(("memories", state["user"]), query=state["message"], limit=2)
    return {"recalled": [item.value["text"] for item in found]}


def build(store: BaseStore, asynchronous: bool) -> Any:
    graph = StateGraph(State)
    graph.add_node("remember", aremember if asynchronous else remember)
    graph.add_node("recall", arecall if asynchronous else recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store)


FACTS = [
    "My favourite food is spicy ramen.",
    "I work on the payments service, deployed with Kubernetes.",
    "My sister lives in Lisbon.",
]


def test_a_graph_writes_and_reads_memories(threaded_server: RunningServer) -> None:
    with SharedContextStore(f"127.0.0.1:{threaded_server.port}") as store:
        app = build(store, asynchronous=False)
        for fact in FACTS:
            app.invoke({"user": "alice", "message": fact, "remember": True})
        out = app.invoke({"user": "alice", "message": "What should I cook tonight? Noodles?"})
        assert out["recalled"][0] == FACTS[0]
        # Another user's memories stay apart.
        assert app.invoke({"user": "bob", "message": "ramen"})["recalled"] == []
        assert store.list_namespaces(prefix=("memories",)) == [("memories", "alice")]


async def test_an_async_graph_writes_and_reads_memories(threaded_server: RunningServer) -> None:
    async with SharedContextStore(f"127.0.0.1:{threaded_server.port}") as store:
        app = build(store, asynchronous=True)
        for fact in FACTS:
            await app.ainvoke({"user": "carol", "message": fact, "remember": True})
        out = await app.ainvoke({"user": "carol", "message": "Where does my sister live?"})
        assert out["recalled"][0] == FACTS[2]
        items = await store.asearch(("memories", "carol"), limit=10)
        assert [i.key for i in items] == ["m0", "m1", "m2"]
