"""The auth interceptor on its own: principal exposed to handlers; streaming RPCs authorised too.

A bare grpc.aio server with stand-in SharedContext methods (a unary Get and a server-streaming
Watch, as the Watch RPC will be) so the interceptor is tested without the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx_server.edge.interceptors import (
    AuthInterceptor,
    DecodeGuard,
    WrappedRegistration,
    current_principal,
)
from sharedctx_server.security.auth import Authenticator
from sharedctx_server.security.tokens import TokenTable

from .conftest import READER, WRITER

SERVICE = "sharedctx.v1.SharedContext"


async def _get(request: pb.GetRequest, context: grpc.aio.ServicerContext) -> pb.GetResponse:
    await asyncio.sleep(0)  # let other calls interleave: the principal must not leak across
    return pb.GetResponse(entry=pb.Entry(key=request.key, agent_id=current_principal() or ""))


async def _watch(
    request: pb.GetRequest, context: grpc.aio.ServicerContext
) -> AsyncIterator[pb.Entry]:
    for i in range(3):
        yield pb.Entry(key=f"{request.key}-{i}", agent_id=current_principal() or "")


async def _watch_by_write(request: pb.GetRequest, context: grpc.aio.ServicerContext) -> None:
    # The other streaming style: a coroutine that writes.
    await context.write(pb.Entry(key="written", agent_id=current_principal() or ""))


def _handlers() -> grpc.GenericRpcHandler:
    des, ser = pb.GetRequest.FromString, pb.GetResponse.SerializeToString
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Get": grpc.unary_unary_rpc_method_handler(_get, des, ser),
            "Watch": grpc.unary_stream_rpc_method_handler(_watch, des, pb.Entry.SerializeToString),
            "Reembed": grpc.unary_stream_rpc_method_handler(
                _watch_by_write, des, pb.Entry.SerializeToString
            ),
            "Unlisted": grpc.unary_unary_rpc_method_handler(_get, des, ser),
        },
    )


@pytest.fixture
async def bare_server(token_file: Path) -> AsyncIterator[grpc.aio.Channel]:
    auth = AuthInterceptor(Authenticator(TokenTable.load(token_file), None))
    server = grpc.aio.server()
    WrappedRegistration(server, [DecodeGuard(), auth]).add_generic_rpc_handlers((_handlers(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield channel
    await server.stop(0)


def _bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def test_handlers_see_the_calling_principal_and_only_theirs(
    bare_server: grpc.aio.Channel,
) -> None:
    get = bare_server.unary_unary(
        f"/{SERVICE}/Get", pb.GetRequest.SerializeToString, pb.GetResponse.FromString
    )
    calls = [
        get(pb.GetRequest(namespace="team-a/x", key=str(i)), metadata=_bearer(token))
        for i, token in enumerate([WRITER, READER] * 20)
    ]
    replies = await asyncio.gather(*calls)
    assert [r.entry.agent_id for r in replies] == ["agent-a", "auditor"] * 20


async def test_server_streaming_calls_are_authorised_by_namespace(
    bare_server: grpc.aio.Channel,
) -> None:
    watch = bare_server.unary_stream(
        f"/{SERVICE}/Watch", pb.GetRequest.SerializeToString, pb.Entry.FromString
    )
    allowed = watch(pb.GetRequest(namespace="team-a/x", key="w"), metadata=_bearer(READER))
    got = [e async for e in allowed]
    assert [(e.key, e.agent_id) for e in got] == [(f"w-{i}", "auditor") for i in range(3)]

    denied = watch(pb.GetRequest(namespace="team-b/x", key="w"), metadata=_bearer(READER))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        _ = [e async for e in denied]
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "'auditor' lacks 'read' permission on namespace 'team-b/x' (needed by Watch)" in (
        info.value.details() or ""
    )

    anonymous = watch(pb.GetRequest(namespace="team-a/x", key="w"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        _ = [e async for e in anonymous]
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_streaming_handlers_that_write_are_wrapped_too(
    bare_server: grpc.aio.Channel,
) -> None:
    reembed = bare_server.unary_stream(
        f"/{SERVICE}/Reembed", pb.GetRequest.SerializeToString, pb.Entry.FromString
    )
    # Reembed needs admin; the writer lacks it.
    with pytest.raises(grpc.aio.AioRpcError) as info:
        call = reembed(pb.GetRequest(namespace="team-a/x"), metadata=_bearer(WRITER))
        _ = [e async for e in call]
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "lacks 'admin'" in (info.value.details() or "")


async def test_an_rpc_missing_from_the_permission_table_needs_admin(
    bare_server: grpc.aio.Channel,
) -> None:
    unlisted = bare_server.unary_unary(
        f"/{SERVICE}/Unlisted", pb.GetRequest.SerializeToString, pb.GetResponse.FromString
    )
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await unlisted(pb.GetRequest(namespace="team-a/x", key="k"), metadata=_bearer(WRITER))
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "lacks 'admin'" in (info.value.details() or "")
