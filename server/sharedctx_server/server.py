"""Build and run the gRPC server: services, health, reflection, graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc

from .embedded import EmbeddedRedis
from .redis_conn import connect
from .servicer import SharedContextServicer
from .settings import Settings
from .store import Store
from .tokens import TokenCounter
from .writer import EntryWriter

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["SharedContext"].full_name
# Both track Redis: SERVING only while it answers (readiness).
_HEALTH_NAMES = ("", SERVICE_NAME)
# SERVING while the process runs, whatever Redis does: for liveness probes, so that a Redis
# outage does not make Kubernetes restart every replica.
LIVENESS_NAME = "liveness"


@dataclass
class RunningServer:
    """A started server and everything it owns; `stop()` takes it all down in order."""

    server: grpc.aio.Server
    port: int
    store: Store
    health: health.aio.HealthServicer
    embedded: EmbeddedRedis | None = None
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: bool = False

    async def stop(self, grace: float | None = None) -> None:
        """Go NOT_SERVING, let in-flight RPCs finish within `grace`, then release Redis."""
        if self.stopped:
            return
        self.stopped = True
        # Background loops watch `stopping` rather than being cancelled mid-await.
        self.stopping.set()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=5)
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        with contextlib.suppress(Exception):
            await self.store.redis.aclose()
        if self.embedded is not None:
            await self.embedded.stop()


async def _watch_redis(
    store: Store, servicer: health.aio.HealthServicer, every: float, stopping: asyncio.Event
) -> None:
    """Keep the health status in step with whether Redis answers."""
    serving: bool | None = None
    while not stopping.is_set():
        ok = await store.ping()
        if ok != serving:
            status = (
                health_pb2.HealthCheckResponse.SERVING
                if ok
                else health_pb2.HealthCheckResponse.NOT_SERVING
            )
            for name in _HEALTH_NAMES:
                await servicer.set(name, status)
            if serving is not None:
                log.warning("Redis %s", "is back" if ok else "is unreachable")
            serving = ok
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stopping.wait(), every)


async def start(settings: Settings, tokens: TokenCounter | None = None) -> RunningServer:
    """Start serving on settings.listen (port 0 picks a free one); embedded Redis if no URL."""
    embedded = None
    url = settings.redis_url
    if not url:
        embedded = EmbeddedRedis(settings.data_dir)
        await embedded.start()
        url = embedded.url
    try:
        return await _start_serving(settings, url, embedded, tokens)
    except BaseException:
        if embedded is not None:
            await embedded.stop()
        raise


async def _start_serving(
    settings: Settings, url: str, embedded: EmbeddedRedis | None, tokens: TokenCounter | None
) -> RunningServer:
    store = Store(connect(url, settings), settings)
    writer = EntryWriter(settings, tokens or TokenCounter(settings.token_encoding))

    server = grpc.aio.server(
        maximum_concurrent_rpcs=settings.max_concurrent_rpcs,
        options=[
            # Room for a full batch of maximum-size entries plus framing.
            ("grpc.max_receive_message_length", settings.limits.max_batch_bytes + (1 << 20)),
            ("grpc.max_send_message_length", settings.limits.max_batch_bytes + (1 << 20)),
        ],
    )
    pb_grpc.add_SharedContextServicer_to_server(
        SharedContextServicer(store, writer, settings), server
    )
    health_servicer = health.aio.HealthServicer()
    await health_servicer.set(LIVENESS_NAME, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(settings.listen)
    if port == 0:
        raise RuntimeError(f"could not listen on {settings.listen}")
    await server.start()
    running = RunningServer(server, port, store, health_servicer, embedded)
    running.tasks.append(
        asyncio.create_task(
            _watch_redis(
                store, health_servicer, settings.health_interval_seconds, running.stopping
            )
        )
    )
    log.info("sharedctx serving on %s (port %d)", settings.listen, port)
    return running


async def serve(settings: Settings) -> None:
    """Run until SIGTERM/SIGINT, then drain gracefully."""
    running = await start(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    host = settings.listen.rsplit(":", 1)[0]
    print(f"sharedctx listening on {host}:{running.port}", flush=True)
    await stop.wait()
    log.info("shutting down (grace %.1fs)", settings.grace_seconds)
    await running.stop(settings.grace_seconds)
