"""Bearer tokens from the token file: who may touch which namespace, with which permission."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from sharedctx import (
    AsyncClient,
    NotFoundError,
    PermissionDeniedError,
    UnauthenticatedError,
)
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.server import RunningServer

from .conftest import ADMIN, HASHED, LOGGER, READER, WRITER, ClientFor

NS = "team-a/session-42"
OTHER = "team-b/session-1"

Call = Callable[[AsyncClient, str], Awaitable[Any]]


async def _keys(c: AsyncClient, ns: str) -> list[str]:
    return [k async for k in c.keys(ns)]


async def _reembed(c: AsyncClient, ns: str) -> list[Any]:
    return [step async for step in c.reembed(ns)]


async def _first_change(c: AsyncClient, ns: str) -> Any:
    async for change in c.watch(ns):
        return change


# Every SharedContext RPC, by the permission it needs.
READS: dict[str, Call] = {
    "Get": lambda c, ns: c.get(ns, "k"),
    "GetMany": lambda c, ns: c.get_many(ns, ["k"]),
    "Keys": _keys,
    "Stats": lambda c, ns: c.stats(ns),
    "Fit": lambda c, ns: c.fit(ns, "what failed in the build?", 500),
}
WRITES: dict[str, Call] = {
    "Put": lambda c, ns: c.put(ns, "k", "text"),
    "PutMany": lambda c, ns: c.put_many(ns, [{"key": "k", "content": "text"}]),
    "Delete": lambda c, ns: c.delete(ns, "k"),
    "Touch": lambda c, ns: c.touch(ns, ["k"]),
}
ADMINS: dict[str, Call] = {"Clear": lambda c, ns: c.clear(ns), "Reembed": _reembed}
# Watch streams until cancelled; denied calls fail on the first read.
ALL = {**READS, **WRITES, **ADMINS, "Watch": _first_change}
NEEDS = {
    **dict.fromkeys(READS, "read"),
    **dict.fromkeys(WRITES, "write"),
    **dict.fromkeys(ADMINS, "admin"),
    "Watch": "read",
}


async def test_a_call_without_a_token_is_unauthenticated_and_says_what_to_send(
    client_for: ClientFor,
) -> None:
    async with client_for(None) as anonymous:
        for call in ALL.values():
            with pytest.raises(UnauthenticatedError, match="authorization: Bearer <token>"):
                await call(anonymous, NS)


async def test_an_unknown_token_is_unauthenticated(client_for: ClientFor) -> None:
    async with client_for("not-a-token-anyone-issued") as stranger:
        with pytest.raises(UnauthenticatedError, match="unknown or revoked bearer token"):
            await stranger.get(NS, "k")


async def test_a_non_bearer_scheme_is_unauthenticated(auth_server: RunningServer) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{auth_server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Stats(
                pb.StatsRequest(namespace=NS), metadata=(("authorization", f"Basic {WRITER}"),)
            )
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "must be 'Bearer <token>'" in (info.value.details() or "")


async def test_read_write_token_works_inside_its_prefix(client_for: ClientFor) -> None:
    async with client_for(WRITER) as agent:
        await agent.put(NS, "k", "hello")
        await agent.put_many(NS, [{"key": "j", "content": "there"}])
        assert (await agent.get(NS, "k", full=True)).content == "hello"
        assert sorted(await _keys(agent, NS)) == ["j", "k"]
        assert (await agent.stats(NS)).entries == 2
        assert await agent.delete(NS, "j")


@pytest.mark.parametrize("rpc", sorted(ALL))
async def test_a_namespace_outside_the_prefix_is_denied_naming_principal_namespace_permission(
    client_for: ClientFor, rpc: str
) -> None:
    async with client_for(WRITER) as agent:
        with pytest.raises(PermissionDeniedError) as info:
            await ALL[rpc](agent, OTHER)
    message = info.value.message
    assert "'agent-a'" in message
    assert repr(OTHER) in message
    assert f"lacks {NEEDS[rpc]!r} permission" in message
    assert rpc in message


async def test_prefixes_match_text_so_a_sibling_namespace_is_not_granted(
    client_for: ClientFor,
) -> None:
    async with client_for(WRITER) as agent:
        with pytest.raises(PermissionDeniedError):
            await agent.put("team-ab/x", "k", "v")
        with pytest.raises(PermissionDeniedError):
            await agent.put("team-a", "k", "v")


@pytest.mark.parametrize("rpc", sorted(WRITES))
async def test_a_read_only_token_cannot_write_and_nothing_is_written(
    client_for: ClientFor, rpc: str
) -> None:
    async with client_for(READER) as auditor, client_for(WRITER) as agent:
        await agent.put(NS, "k", "original")
        with pytest.raises(PermissionDeniedError, match="'auditor' lacks 'write'"):
            await WRITES[rpc](auditor, NS)
        assert (await auditor.get(NS, "k", full=True)).content == "original"
        assert await _keys(auditor, NS) == ["k"]


async def test_write_does_not_imply_read(client_for: ClientFor) -> None:
    async with client_for(LOGGER) as logger:
        await logger.put("team-a/logs/run-1", "line-1", "started")
        with pytest.raises(PermissionDeniedError, match="'logger' lacks 'read'"):
            await logger.get("team-a/logs/run-1", "line-1")
        with pytest.raises(PermissionDeniedError, match="'logger' lacks 'write'"):
            await logger.put(NS, "k", "outside team-a/logs/")


async def test_clear_needs_admin_and_admin_may_do_everything_everywhere(
    client_for: ClientFor,
) -> None:
    async with client_for(WRITER) as agent, client_for(ADMIN) as ops:
        await agent.put(NS, "k", "v")
        with pytest.raises(PermissionDeniedError, match="'agent-a' lacks 'admin'.*Clear"):
            await agent.clear(NS)
        assert (await ops.get(NS, "k", full=True)).content == "v"
        await ops.put(OTHER, "k", "admin writes anywhere")
        assert await ops.clear(NS) == 1
        assert await _keys(ops, NS) == []


async def test_a_token_given_only_as_its_sha256_authenticates(client_for: ClientFor) -> None:
    async with client_for(HASHED) as agent_b:
        await agent_b.put(OTHER, "k", "v")
        with pytest.raises(NotFoundError):
            await agent_b.get(OTHER, "absent")
        with pytest.raises(PermissionDeniedError, match="'agent-b'"):
            await agent_b.get(NS, "k")


async def test_health_and_reflection_stay_open_without_a_token(
    auth_server: RunningServer,
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{auth_server.port}") as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="liveness"), timeout=5
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(timeout=5)
        await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
        await call.done_writing()
        names = {s.name for s in (await call.read()).list_services_response.service}
    assert "sharedctx.v1.SharedContext" in names


@pytest.mark.parametrize(
    "value", ["Bearer", "Bearer ", "bearer", "Bearer a b c", "Token x", "Bearer " + "x" * 2000]
)
async def test_odd_authorization_values_get_a_clean_unauthenticated(
    auth_server: RunningServer, value: str
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{auth_server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Get(
                pb.GetRequest(namespace=NS, key="k"), metadata=(("authorization", value),)
            )
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "Traceback" not in (info.value.details() or "")


async def test_a_reader_watches_and_fits_its_own_namespace(client_for: ClientFor) -> None:
    async with client_for(READER) as auditor, client_for(WRITER) as agent:
        await agent.put(NS, "build-log", "step 3 failed: the cache key changed")
        fitted = await auditor.fit(NS, "why did the build fail?", 500, include_content=True)
        assert [e.key for e in fitted.entries] == ["build-log"]
        watching = asyncio.create_task(_first_change(auditor, NS))
        # Bounded: keep writing until the watcher (which starts from "now") has seen a change.
        for i in range(100):
            await agent.put(NS, f"k{i}", "a change to see")
            done, _ = await asyncio.wait({watching}, timeout=0.1)
            if done:
                break
        change = await asyncio.wait_for(watching, 10)
        assert change.key.startswith("k")


async def test_namespaces_lists_only_what_the_caller_may_read(client_for: ClientFor) -> None:
    async with client_for(ADMIN) as admin:
        for ns in ("team-a/s1", "team-a/logs/run", "team-b/s1", "team-c/s1"):
            await admin.put(ns, "k", "v")
        assert len([n async for n in admin.namespaces()]) == 4
    async with client_for(READER) as reader:
        assert [n.namespace async for n in reader.namespaces()] == ["team-a/logs/run", "team-a/s1"]
    async with client_for(HASHED) as other:
        assert [n.namespace async for n in other.namespaces()] == ["team-b/s1"]
    async with client_for(LOGGER) as writer_only:
        with pytest.raises(PermissionDeniedError, match="read"):
            _ = [n async for n in writer_only.namespaces()]
