"""Bad input: INVALID_ARGUMENT (RESOURCE_EXHAUSTED for limits) naming the rule; nothing written."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from sharedctx import AsyncClient, InvalidArgumentError, ResourceExhaustedError
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Limits, Settings
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving

NS = "team-a/session-42"


async def assert_nothing_written(client: AsyncClient, namespace: str = NS) -> None:
    assert [k async for k in client.keys(namespace)] == []
    assert (await client.stats(namespace)).entries == 0


BAD_PUTS: list[tuple[str, dict[str, Any], str]] = [
    ("empty namespace", {"namespace": ""}, "namespace: is required"),
    ("namespace with a space", {"namespace": "team a"}, "namespace: may only hold"),
    ("namespace with a brace", {"namespace": "team{a}"}, "namespace: may only hold"),
    ("namespace too long", {"namespace": "n" * 129}, "at most 128"),
    ("empty key", {"key": ""}, "key: is required"),
    ("key with a newline", {"key": "a\nb"}, "control characters"),
    ("key with NUL", {"key": "a\x00b"}, "control characters"),
    ("key too long", {"key": "k" * 513}, "at most 512"),
    ("multibyte key too long", {"key": "é" * 257}, "514 bytes"),
    ("negative ttl", {"ttl_seconds": -1}, "ttl_seconds: must be >= 0"),
    ("importance above 1", {"importance": 1.5}, "importance: must be between 0 and 1"),
    ("importance NaN", {"importance": float("nan")}, "importance"),
    ("negative if_version", {"if_version": -2}, "if_version: must be >= 0"),
    ("unknown kind", {"kind": 42}, "kind: unknown value 42"),
    ("role with control char", {"role": "us\ter"}, "role: may not contain"),
    ("too many tags", {"tags": [f"t{i}" for i in range(65)]}, "at most 64"),
]


@pytest.mark.parametrize(("case", "fields", "message"), BAD_PUTS, ids=[c[0] for c in BAD_PUTS])
async def test_bad_put_is_invalid_argument_and_writes_nothing(
    server: RunningServer, client: AsyncClient, case: str, fields: dict[str, Any], message: str
) -> None:
    req = pb.PutRequest(namespace=NS, key="k", content="text")
    for name, value in fields.items():
        if name == "tags":
            req.tags.extend(value)
        else:
            setattr(req, name, value)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Put(req)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (info.value.details() or "")
    await assert_nothing_written(client)


async def test_invalid_argument_names_the_field_for_the_client(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        await client.put(NS, "bad\x07key", "x")
    assert info.value.field == "key"


async def test_oversized_content_is_resource_exhausted_naming_the_limit(
    settings: Settings, token_counter: TokenCounter
) -> None:
    small = Limits(max_content_bytes=1000)
    async with serving(settings, token_counter, limits=small) as (_, client):
        with pytest.raises(ResourceExhaustedError) as info:
            await client.put(NS, "big", "x" * 1001)
        assert info.value.limit == "max_content_bytes"
        assert "1001 bytes" in info.value.message
        await client.put(NS, "fits", "x" * 1000)
        assert [k async for k in client.keys(NS)] == ["fits"]


async def test_oversized_batch_is_resource_exhausted_and_writes_nothing(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, limits=Limits(max_batch_entries=3)) as (_, c):
        with pytest.raises(ResourceExhaustedError) as info:
            await c.put_many(NS, [{"key": f"k{i}", "content": "x"} for i in range(4)])
        assert info.value.limit == "max_batch_entries"
        await assert_nothing_written(c)


async def test_put_many_rejects_a_bad_item_and_writes_none(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError, match=r"entries\[1\]\.key"):
        await client.put_many(NS, [{"key": "good", "content": "x"}, {"key": "", "content": "y"}])
    await assert_nothing_written(client)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"key": ""}, "entries[0].key"),
        ({"importance": 2.0}, "entries[0].importance"),
        ({"ttl_seconds": -1}, "entries[0].ttl_seconds"),
        ({"content": "a\x00b"}, "entries[0].content"),
    ],
)
async def test_put_many_names_the_entry_even_when_it_is_the_only_one(
    client: AsyncClient, bad: dict[str, object], field: str
) -> None:
    """A one-entry PutMany is still a batch: its errors say which entry, like any other."""
    with pytest.raises(InvalidArgumentError) as info:
        await client.put_many(NS, [{"key": "k", "content": "x", **bad}])
    assert info.value.field == field
    await assert_nothing_written(client)


async def test_put_many_names_the_entry_of_a_limit_it_breaks(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, limits=Limits(max_content_bytes=10)) as (_, c):
        with pytest.raises(ResourceExhaustedError, match=r"entries\[1\]") as info:
            await c.put_many(NS, [{"key": "a", "content": "x"}, {"key": "b", "content": "y" * 11}])
        assert info.value.limit == "max_content_bytes"
        await assert_nothing_written(c)


async def test_put_many_rejects_duplicate_keys(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError, match="appears twice"):
        await client.put_many(NS, [{"key": "a", "content": "x"}, {"key": "a", "content": "y"}])
    await assert_nothing_written(client)


async def test_put_many_rejects_an_item_of_another_namespace(
    server: RunningServer, client: AsyncClient
) -> None:
    req = pb.PutManyRequest(
        namespace=NS, entries=[pb.PutRequest(namespace="elsewhere", key="a", content="x")]
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).PutMany(req)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    await assert_nothing_written(client)


async def test_empty_put_many_is_invalid(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError, match="at least one"):
        await client.put_many(NS, [])


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"page_token": "%%%"}, "page_token"), ({"page_size": -1}, "page_size")],
)
async def test_keys_rejects_bad_paging(
    server: RunningServer, fields: dict[str, Any], field: str
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Keys(pb.KeysRequest(namespace=NS, **fields))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (info.value.details() or "").startswith(field)


async def test_bad_namespace_on_reads_is_invalid(client: AsyncClient) -> None:
    for call in (
        client.get("", "k"),
        client.stats("bad ns"),
        client.clear("x" * 200),
        client.delete("a b", "k"),
    ):
        with pytest.raises(InvalidArgumentError, match="namespace"):
            await call
