"""Client and AsyncClient offer the same calls with the same signatures (only async-ness
differs), and both retry exactly the idempotent calls; put's options are PutItem's fields and
Fit's are FitRequest's, each documented; Fit's named options are the proto's;
LoopClients keeps one AsyncClient per event loop and closes those of closed loops."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Callable, Iterator
from typing import Any, cast

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from sharedctx import AsyncClient, Client, ResourceExhaustedError, UnavailableError, calls, wire
from sharedctx.loop_clients import LoopClients
from sharedctx.types import FIT_CHOICES, PutItem
from sharedctx.v1 import sharedctx_pb2 as pb

CALLS = {
    "clear", "close", "delete", "fit", "get", "get_many", "keys", "keys_page", "namespaces", "put",
    "put_many", "reembed",
    "stats", "touch", "watch",
}  # fmt: skip


def public_methods(cls: type[Any]) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(cls, name))
        for name in dir(cls)
        if not name.startswith("_") and callable(getattr(cls, name))
    }


def parameters(sig: inspect.Signature) -> list[tuple[str, Any, Any, Any]]:
    return [(p.name, p.kind, p.default, p.annotation) for p in sig.parameters.values()]


def test_both_clients_expose_the_same_methods_with_the_same_parameters() -> None:
    blocking, asyncio = public_methods(Client), public_methods(AsyncClient)
    assert set(blocking) == set(asyncio) == CALLS
    for name in CALLS:
        assert parameters(blocking[name]) == parameters(asyncio[name]), name
    assert parameters(inspect.signature(Client)) == parameters(inspect.signature(AsyncClient))


def test_async_methods_are_coroutines_or_async_iterators_and_keep_their_docs() -> None:
    streams = {"watch", "reembed"}
    for name in CALLS - streams:
        method = getattr(AsyncClient, name)
        assert inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method), name
    for name in CALLS:
        method = getattr(AsyncClient, name)
        assert method.__doc__ and getattr(Client, name).__doc__ == method.__doc__, name
    # Streams are iterators that send nothing before their first reply is asked for.
    for name in streams:
        assert inspect.signature(getattr(Client, name)).return_annotation.startswith("Replies[")
        assert inspect.signature(getattr(AsyncClient, name)).return_annotation.startswith(
            "AsyncReplies["
        )
    with Client("127.0.0.1:1") as blocking:
        assert isinstance(blocking.watch("ns"), Iterator)


def test_reads_and_unconditional_deletes_are_idempotent_writes_are_not() -> None:
    ns = "team-a/s"
    assert calls.get(ns, "k").idempotent and calls.get_many(ns, ["k"]).idempotent
    assert calls.stats(ns).idempotent and calls.fit(ns, "q", 10).idempotent
    assert calls.keys_page(ns).idempotent
    assert calls.namespaces_page("", 0, "", None).idempotent
    assert calls.delete(ns, "k").idempotent and not calls.delete(ns, "k", if_version=3).idempotent
    assert not calls.put(ns, "k", "v").idempotent
    assert not calls.put_many(ns, [{"key": "k", "content": "v"}]).idempotent
    assert not calls.clear(ns).idempotent


def keyword_options(define: Callable[..., Any]) -> list[inspect.Parameter]:
    """A call definition's keyword-only parameters but `timeout`: its options."""
    params = inspect.signature(define).parameters.values()
    return [p for p in params if p.kind is p.KEYWORD_ONLY and p.name != "timeout"]


def test_put_takes_exactly_the_fields_of_put_item() -> None:
    # put's options are written out for help() and type checkers; PutItem (put_many's entries)
    # is the definition they must match, by name, order, default and annotation.
    item_fields = [f for f in dataclasses.fields(PutItem) if f.name not in ("key", "content")]
    assert [(p.name, p.default, p.annotation) for p in keyword_options(calls.put)] == [
        (
            f.name,
            f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default,
            f.type,
        )
        for f in item_fields
    ]
    # Each option reaches the request: a non-default value sets its field.
    samples: dict[str, Any] = {
        "ttl_seconds": 5, "compressed": "c", "kind": "note", "role": "user", "agent_id": "a",
        "tool_name": "t", "tags": ("x",), "importance": 0.5, "event_time": 1.5, "thread": "th",
        "if_version": 0, "embed": "async",
    }  # fmt: skip
    assert set(samples) == {f.name for f in item_fields}
    for name, value in samples.items():
        request = calls.put("ns", "k", "v", **{name: value}).request
        assert {f.name for f, _ in request.ListFields()} == {"namespace", "key", "content", name}


def test_fit_takes_exactly_the_options_of_fit_request() -> None:
    # Every FitRequest field after namespace, query and budget_tokens is an option of the same
    # name, in the proto's order, and a non-default value of it sets that field.
    fields = [f.name for f in pb.FitRequest.DESCRIPTOR.fields]
    assert fields[:3] == ["namespace", "query", "budget_tokens"]
    assert [p.name for p in keyword_options(calls.fit)] == fields[3:]
    samples: dict[str, Any] = {
        "strategy": "recent", "preset": "headroom", "weights": {"recency": 0.0},
        "recency_decay_rate": 0.001, "keep_recent": 0, "max_entries": 3, "adaptive": "moderate",
        "form": "auto", "compress_threshold": 10, "fill": "stop", "filters": {"threads": ["t"]},
        "min_score": 0.25, "include_content": True, "explain": True, "expand_neighbours": False,
        "excerpts": False,
    }  # fmt: skip
    assert list(samples) == fields[3:]
    for name, value in samples.items():
        request = calls.fit("ns", "q", 10, **{name: value}).request
        assert {f.name for f, _ in request.ListFields()} == {*fields[:3], name}
    # Left alone, an option is left out, so the server applies its own default.
    assert {f.name for f, _ in calls.fit("ns", "q", 10).request.ListFields()} == set(fields[:3])


def test_put_and_fit_document_every_option() -> None:
    for define in (calls.put, calls.fit):
        doc = inspect.getdoc(define) or ""
        documented = {line.split(":")[0] for line in doc.splitlines() if ": " in line}
        assert {p.name for p in keyword_options(define)} | {"timeout"} <= documented


def test_fit_refuses_unknown_names_before_sending() -> None:
    with pytest.raises(ValueError, match="unknown factor 'recent'"):
        calls.fit("ns", "q", 10, weights={"recent": 1.0})
    with pytest.raises(ValueError, match="unknown strategy 'best'"):
        calls.fit("ns", "q", 10, strategy="best")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown kind 'notes'"):
        calls.fit("ns", "q", 10, filters={"include_kinds": ["notes"]})
    # A form of replies only: the request's choices say so before the server does.
    with pytest.raises(ValueError, match="unknown form 'excerpt'; use one of compressed, full"):
        calls.fit("ns", "q", 10, form="excerpt")  # type: ignore[arg-type]


@pytest.mark.parametrize("content", [None, 12345, b"bytes"])
def test_put_refuses_content_that_is_not_text_before_sending(content: object) -> None:
    with pytest.raises(TypeError, match=f"content must be a str, not {type(content).__name__}"):
        calls.put("ns", "k", content)  # type: ignore[arg-type]
    if content is not None:  # a compressed form may be absent
        with pytest.raises(TypeError, match="compressed must be a str"):
            calls.put("ns", "k", "text", compressed=content)  # type: ignore[arg-type]


def test_text_without_a_utf8_form_is_refused_naming_the_argument() -> None:
    # Bytes decoded with surrogateescape keep a lone surrogate; protobuf's error named nothing.
    bad = b"ok \xff".decode("utf-8", "surrogateescape")
    with pytest.raises(ValueError, match=r"content: is not valid Unicode text .* at position 3"):
        calls.put("ns", "k", bad)
    with pytest.raises(ValueError, match="compressed: is not valid Unicode text"):
        calls.put("ns", "k", "text", compressed=bad)
    calls.put("ns", "k", "naïve café ✓")  # other text is fine


def test_a_lone_string_where_a_list_belongs_is_refused_not_split_into_letters() -> None:
    # Iterated, "urgent" would be six one-letter tags, and touch(ns, "notes") the keys n, o...
    with pytest.raises(TypeError, match=r"tags must be a list of str, not a str \(did you mean"):
        calls.put("ns", "k", "text", tags="urgent")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keys must be a list of str"):
        calls.touch("ns", "notes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keys must be a list of str"):
        calls.get_many("ns", "notes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="include_tags must be a list of str"):
        calls.fit("ns", "q", 10, filters={"include_tags": "urgent"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="unknown filter 'tags'; use one of include_kinds"):
        calls.fit("ns", "q", 10, filters={"tags": ["urgent"]})
    with pytest.raises(TypeError, match="kind must be a name such as 'tool_output', not int"):
        calls.put("ns", "k", "text", kind=2)  # type: ignore[arg-type]


class Down(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "the server is down"


class CountingStub:
    """Every unary method fails with UNAVAILABLE and counts its calls and their deadlines."""

    def __init__(self, asynchronous: bool) -> None:
        self.calls: list[tuple[str, float]] = []
        self._async = asynchronous

    def __getattr__(self, rpc: str) -> Callable[..., Any]:
        def method(request: Any, *, metadata: Any, timeout: float) -> Any:
            self.calls.append((rpc, timeout))
            if not self._async:
                raise Down()

            async def fail() -> Any:
                raise Down()

            return fail()

        return method


class AtLimit(grpc.RpcError):
    """RESOURCE_EXHAUSTED as a server at its calls-at-once limit sends it: with a retry delay
    (google.rpc.RetryInfo) in the status details."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.RESOURCE_EXHAUSTED

    def details(self) -> str:
        return "the server is at its limit of concurrent calls (1000); retry shortly"

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        info = error_details_pb2.RetryInfo()
        info.retry_delay.FromMilliseconds(10)
        detail = any_pb2.Any()
        detail.Pack(info)
        status = status_pb2.Status(code=8, message=self.details(), details=[detail])
        return (("grpc-status-details-bin", status.SerializeToString()),)


class BusyThenAnswers:
    """Refuses the first `busy` calls as a server at its limit does, then answers Stats."""

    def __init__(self, busy: int) -> None:
        self.busy = busy
        self.calls = 0

    def __getattr__(self, rpc: str) -> Callable[..., Any]:
        def method(request: Any, *, metadata: Any, timeout: float) -> Any:
            self.calls += 1
            if self.calls <= self.busy:
                raise AtLimit()
            return pb.StatsResponse(entries=3)

        return method


def test_a_server_at_its_limit_is_asked_again_after_its_delay() -> None:
    # Idempotent calls come back after the delay the server gave; writes do not.
    with Client("127.0.0.1:1", retries=2) as client:
        client._stub = stub = BusyThenAnswers(busy=2)
        assert client.stats("team-a/s").entries == 3
        assert stub.calls == 3
        client._stub = stub = BusyThenAnswers(busy=3)
        with pytest.raises(ResourceExhaustedError) as info:
            client.stats("team-a/s")
        assert info.value.retry_after == pytest.approx(0.01)
        client._stub = stub = BusyThenAnswers(busy=1)
        with pytest.raises(ResourceExhaustedError):
            client.put("team-a/s", "k", "v")
        assert stub.calls == 1


def test_the_blocking_client_retries_only_idempotent_calls() -> None:
    with Client("127.0.0.1:1", retries=2, timeout=4) as client:
        client._stub = stub = CountingStub(asynchronous=False)
        with pytest.raises(UnavailableError, match="the server is down"):
            client.get("team-a/s", "k", timeout=1.5)
        with pytest.raises(UnavailableError):
            client.put("team-a/s", "k", "v")
        with pytest.raises(UnavailableError):
            client.delete("team-a/s", "k", if_version=1)
        # A batch's default deadline grows with its entries (each is embedded first).
        batch = [{"key": f"k{i}", "content": "v"} for i in range(200)]
        for timeout in (None, 2.0):
            with pytest.raises(UnavailableError):
                client.put_many("team-a/s", batch, timeout=timeout)
    assert stub.calls == [("Get", 1.5)] * 3 + [
        ("Put", 4), ("Delete", 4), ("PutMany", 10.0), ("PutMany", 2.0),
    ]  # fmt: skip


async def test_the_async_client_retries_only_idempotent_calls() -> None:
    async with AsyncClient("127.0.0.1:1", retries=1, timeout=4) as client:
        client._stub = stub = CountingStub(asynchronous=True)
        with pytest.raises(UnavailableError, match="the server is down"):
            await client.stats("team-a/s")
        with pytest.raises(UnavailableError):
            await client.clear("team-a/s")
    assert stub.calls == [("Stats", 4)] * 2 + [("Clear", 4)]


@pytest.mark.parametrize(
    ("option", "enum"),
    [("strategy", pb.Strategy), ("form", pb.Form), ("adaptive", pb.Adaptive), ("fill", pb.Fill)],
)
def test_fit_choices_are_the_request_enums_in_proto_order(option: str, enum: Any) -> None:
    prefix = f"{option.upper()}_"
    names = [n.removeprefix(prefix).lower() for n in enum.keys()][1:]  # after UNSPECIFIED
    # FORM_EXCERPT only ever describes a reply.
    assert FIT_CHOICES[option] == tuple(n for n in names if n != "excerpt")


class _FakeClient:
    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


def test_loop_clients_keep_one_client_per_loop_and_close_those_of_closed_loops() -> None:
    made: list[_FakeClient] = []

    def connect() -> AsyncClient:
        made.append(_FakeClient())
        return cast(AsyncClient, made[-1])

    clients = LoopClients(connect)

    async def use() -> None:
        assert clients.get() is clients.get()
        await asyncio.sleep(0)  # a stale client's closing runs as a task of this loop

    asyncio.run(use())
    asyncio.run(use())
    assert len(made) == 2
    assert made[0].closed and not made[1].closed  # its loop closed: closed on the next get
    asyncio.run(clients.close())
    assert made[1].closed


def test_an_op_a_newer_server_added_reads_as_its_number() -> None:
    assert wire.change(pb.ChangeEvent(op=pb.ChangeEvent.OP_TOUCH)).op == "touch"
    assert wire.change(pb.ChangeEvent(op=99)).op == "op_99"  # type: ignore[arg-type]


def test_a_callers_channel_option_replaces_the_default() -> None:
    # gRPC takes the first of two options of one name: the caller's came after the defaults.
    from sharedctx.client import _channel_options

    options = _channel_options([("grpc.keepalive_time_ms", 60_000), ("grpc.enable_retries", 0)])
    assert [v for k, v in options if k == "grpc.keepalive_time_ms"] == [60_000]
    assert ("grpc.enable_retries", 0) in options and (
        "grpc.keepalive_timeout_ms",
        10_000,
    ) in options
