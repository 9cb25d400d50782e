"""A lost master: the server stops being ready, that master's namespaces are UNAVAILABLE (not
INTERNAL), and everything comes back, data included, when the master does."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sharedctx import SharedCtxError
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from ..support.redis_cluster import LocalCluster
from ..support.servers import serving

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def namespace_on(cluster: LocalCluster, index: int) -> str:
    """A namespace whose slot the master `index` holds."""
    for i in range(200):
        name = f"team-a/outage-{i}"
        if cluster.owner_of(f"{{{name}}}") == index:
            return name
    raise AssertionError("no namespace name found for that master")


async def wait_for_health(port: int, wanted: int, timeout: float = 20.0) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + timeout
        while (await stub.Check(health_pb2.HealthCheckRequest(service=""))).status != wanted:
            assert time.monotonic() < deadline, f"health never became {wanted}"
            await asyncio.sleep(0.05)


async def test_a_lost_master_is_unavailable_and_comes_back_with_its_data(
    redis_cluster: LocalCluster, settings: Settings, token_counter: TokenCounter
) -> None:
    lost = len(redis_cluster.nodes) - 1
    namespace = namespace_on(redis_cluster, lost)
    async with serving(settings, token_counter) as (running, client):
        await client.put(namespace, "k", "kept")
        await wait_for_health(running.port, SERVING)
        redis_cluster.stop_node(lost)
        try:
            await wait_for_health(running.port, NOT_SERVING)
            with pytest.raises(SharedCtxError) as info:
                await client.get(namespace, "k")
            assert info.value.code is not None and info.value.code.name == "UNAVAILABLE"
        finally:
            redis_cluster.restart_node(lost)
        await wait_for_health(running.port, SERVING)
        assert (await client.get(namespace, "k")).content == "kept"
