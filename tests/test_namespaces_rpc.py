"""The Namespaces RPC: namespaces with live entries, by prefix, page by page, with totals."""

from __future__ import annotations

import grpc
import pytest
import redis
from sharedctx import AsyncClient, InvalidArgumentError, PutItem
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Settings
from sharedctx_server.state import keys as K
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving, wait_until


async def names(client: AsyncClient, prefix: str = "", page_size: int = 0) -> list[str]:
    return [n.namespace async for n in client.namespaces(prefix, page_size=page_size)]


async def test_namespaces_with_live_entries_are_listed_in_byte_order_with_totals(
    client: AsyncClient,
) -> None:
    await client.put("team-b/run", "k", "hello world")
    await client.put_many(
        "team-a/s-2", [PutItem(key="x", content="one two"), PutItem(key="y", content="three")]
    )
    await client.put("team-a/s-1", "k", "alpha")
    found = [n async for n in client.namespaces()]
    assert [n.namespace for n in found] == ["team-a/s-1", "team-a/s-2", "team-b/run"]
    s2 = found[1]
    stats = await client.stats("team-a/s-2")
    assert (s2.entries, s2.original_tokens, s2.compressed_tokens) == (
        2,
        stats.original_tokens,
        stats.compressed_tokens,
    )
    assert await names(client, "team-a/") == ["team-a/s-1", "team-a/s-2"]
    assert await names(client, "team-c") == []


async def test_pages_follow_the_byte_order_without_repeats(client: AsyncClient) -> None:
    spaces = [f"paged/ns-{i:02d}" for i in range(23)]
    for ns in spaces:
        await client.put(ns, "k", "v")
    assert await names(client, "paged/", page_size=5) == spaces


async def test_cleared_deleted_and_expired_namespaces_are_not_listed(client: AsyncClient) -> None:
    await client.put("gone/cleared", "k", "v")
    await client.put("gone/deleted", "k", "v")
    await client.put("gone/expired", "k", "v", ttl_seconds=1)
    await client.put("gone/kept", "k", "v")
    await client.clear("gone/cleared")
    await client.delete("gone/deleted", "k")

    async def only_kept() -> bool:
        return await names(client, "gone/") == ["gone/kept"]

    await wait_until(only_kept, timeout=10)


async def test_a_bad_prefix_or_page_token_is_refused_with_the_field_named(
    server: RunningServer, client: AsyncClient
) -> None:
    with pytest.raises(InvalidArgumentError, match="prefix"):
        await names(client, "no spaces")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.SharedContextStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.Namespaces(pb.NamespacesRequest(prefix="x", page_token="not-a-token"))
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "page_token" in (info.value.details() or "")


async def test_namespaces_written_before_the_registry_are_found(
    settings: Settings, token_counter: TokenCounter, clean_redis: str
) -> None:
    async with serving(settings, token_counter) as (_, client):
        await client.put("old/one", "k", "v")
        await client.put("old/two", "k", "v")
    direct = redis.Redis.from_url(clean_redis)
    direct.delete(K.NAMESPACES, K.NAMESPACES_FILLED)  # as a server before the registry left it
    direct.close()
    async with serving(settings, token_counter) as (_, client):
        assert await names(client, "old/") == ["old/one", "old/two"]
