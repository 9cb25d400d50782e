"""Admission: calls beyond --max-concurrent-rpcs and Watch streams beyond --max-watches are
RESOURCE_EXHAUSTED naming the setting; open watchers never shut out other calls."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import pytest
from sharedctx import ResourceExhaustedError
from sharedctx.types import Change
from sharedctx_server.edge.admission import Admission
from sharedctx_server.edge.interceptors import WrappedRegistration
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving

NS = "team/admission"


async def _first(changes: AsyncIterator[Change]) -> Change:
    async for change in changes:
        return change
    raise AssertionError("the watch ended without a change")


async def test_watchers_have_their_own_limit_and_never_block_other_calls(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, max_concurrent_rpcs=1, max_watches=2) as (_, c):
        watches = [c.watch(NS).__aiter__() for _ in range(2)]
        firsts = [asyncio.ensure_future(_first(w)) for w in watches]
        await asyncio.sleep(0.3)  # both streams open on the server
        # With two watchers open and a limit of one call, calls still go through one by one.
        await c.put(NS, "k", "x")
        assert (await c.get(NS, "k")).content == "x"
        assert [change.key for change in await asyncio.gather(*firsts)] == ["k", "k"]
        with pytest.raises(ResourceExhaustedError) as info:
            await _first(c.watch(NS))
        assert info.value.limit == "max_watches"
        assert "at its limit of concurrent Watch streams (2)" in info.value.message
        assert "--max-watches / SHAREDCTX_MAX_WATCHES" in info.value.message
        for w in watches:
            await w.aclose()  # type: ignore[attr-defined]


async def test_a_call_beyond_the_limit_is_refused_naming_the_setting(settings: Settings) -> None:
    # A real gRPC server whose one method waits until released, behind the Admission layer.
    release = asyncio.Event()

    async def hold(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await release.wait()
        return request

    handler = grpc.unary_unary_rpc_method_handler(hold)
    server = grpc.aio.server()
    registration = WrappedRegistration(
        server, [Admission(replace(settings, max_concurrent_rpcs=2))]
    )
    registration.add_registered_method_handlers("test.Held", {"Hold": handler})
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary("/test.Held/Hold", _registered_method=True)
            held = [asyncio.ensure_future(call(b"a")), asyncio.ensure_future(call(b"b"))]
            await asyncio.sleep(0.3)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call(b"c")
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert info.value.details() == (
                "the server is at its limit of concurrent calls (2); retry shortly, or raise "
                "the server's --max-concurrent-rpcs / SHAREDCTX_MAX_CONCURRENT_RPCS"
            )
            release.set()
            assert await asyncio.gather(*held) == [b"a", b"b"]
            assert await call(b"d") == b"d"  # the count went back down
    finally:
        await server.stop(None)
