"""Build and run the gRPC server: services, health, reflection, graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc

from .cores import cpu_limit, worker_count
from .edge.admission import Admission
from .edge.interceptors import WrappedRegistration, server_layers
from .edge.metrics import Metrics, MetricsServer, TimedEncoder
from .edge.observe import ObserveInterceptor
from .edge.servicer import SharedContextServicer
from .edge.tracing import Tracing
from .embedding import Embedder, MicroBatcher, ModelSpec, QueryCache, check_compute
from .errors import listen_error
from .security import tls
from .security.auth import check_listen_is_safe, jwt_verifier
from .segment import SegmentConfig, Segmenter
from .services.derive import EntryDeriver
from .services.entry_embeddings import EntryEmbeddings
from .services.fit_service import FitService
from .services.reaper import ExpiryReaper
from .services.watch import ChangeFeed
from .services.write_path import WritePath
from .settings import Settings, is_unix_socket
from .state.embedded import EmbeddedRedis
from .state.nscache import NamespaceCache
from .state.quotas import QuotaTable
from .state.redis_conn import connect, reads_connection
from .state.store import Store
from .tokens import TokenCounter

log = logging.getLogger(__name__)
# The most often a client may ping: well under the clients' 30 s, still no flood.
MIN_PING_INTERVAL_MS = 5_000

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
    batcher: MicroBatcher | None = None
    embeddings: EntryEmbeddings | None = None
    cache: NamespaceCache | None = None
    metrics: Metrics | None = None
    metrics_server: MetricsServer | None = None
    tracing: Tracing | None = None
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
        # After the drain: the last scrape and the last spans include the drained calls.
        if self.metrics_server is not None:
            await self.metrics_server.stop()
        if self.tracing is not None:
            await asyncio.to_thread(self.tracing.shutdown)
        if self.embeddings is not None:
            await self.embeddings.aclose()
        if self.batcher is not None:
            await self.batcher.aclose()
        with contextlib.suppress(Exception):
            await self.store.aclose()
        if self.embedded is not None:
            await self.embedded.stop()


async def _watch_redis(
    store: Store,
    servicer: health.aio.HealthServicer,
    every: float,
    stopping: asyncio.Event,
    where: str,
) -> None:
    """Keep the health status in step with whether Redis answers (at `where`, for the log)."""
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
            elif not ok:
                # Otherwise a wrong --redis-url shows only as UNAVAILABLE on every call.
                log.warning(
                    "Redis at %s does not answer: every call fails with UNAVAILABLE until it "
                    "does (check --redis-url / SHAREDCTX_REDIS_URL)",
                    where,
                )
            serving = ok
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stopping.wait(), every)


def _address(url: str) -> str:
    """HOST:PORT of a Redis URL, without the password it may hold."""
    parts = urlsplit(url)
    return f"{parts.hostname or '?'}:{parts.port or 6379}"


def load_embedder(settings: Settings) -> Embedder:
    """The configured embedding model (blocking: loads the ONNX file)."""
    spec = ModelSpec(
        name=settings.embedding_model,
        path=settings.embedding_model_path,
        dim=settings.embedding_dim or None,
        compute=check_compute(settings.embedding_compute),  # checked by Settings: a narrowing
    )
    # The CPUs the process may use, a container's CPU limit included: onnxruntime's own default
    # is every core of the node, which a 2-CPU pod on a 64-core node would throttle on.
    threads = settings.embedding_threads or cpu_limit()
    return Embedder.load(spec, settings.cache_dir, threads=threads)


async def start(
    settings: Settings, tokens: TokenCounter | None = None, embedder: Embedder | None = None
) -> RunningServer:
    """Start serving on settings.listen (port 0 picks a free one); embedded Redis if no URL.

    `tokens` and `embedder` may be passed in to share them between servers of one process.
    """
    # Before anything starts (each value was checked when `settings` was built): an open server
    # on a network address must be asked for explicitly, and a bad quotas file stops the start.
    check_listen_is_safe(settings)
    jwt_verifier(settings)
    quotas = QuotaTable.from_settings(settings)
    embedded = None
    url = settings.redis_url
    if not url:
        embedded = EmbeddedRedis(settings.data_dir)
        await embedded.start()
        url = embedded.url
    try:
        if embedder is None:
            embedder = await asyncio.to_thread(load_embedder, settings)
        return await _start_serving(settings, url, embedded, quotas, tokens, embedder)
    except BaseException:
        if embedded is not None:
            await embedded.stop()
        raise


@dataclass
class _Core:
    """What a server runs on before any network: the store and the services over it."""

    store: Store
    batcher: MicroBatcher
    embeddings: EntryEmbeddings
    cache: NamespaceCache
    fits: FitService
    deriver: EntryDeriver
    metrics: Metrics | None


async def _start_serving(
    settings: Settings,
    url: str,
    embedded: EmbeddedRedis | None,
    quotas: QuotaTable,
    tokens: TokenCounter | None,
    embedder: Embedder,
) -> RunningServer:
    # Read first: bad TLS files stop the start before anything is opened.
    credentials = tls.server_credentials(settings)
    async with contextlib.AsyncExitStack() as opened:
        # Until the server runs, a failure (a taken port) closes what was opened so far.
        core = await _open_core(settings, url, quotas, tokens, embedder, opened)
        stopping = asyncio.Event()
        tracing = Tracing.from_env(os.environ)
        if tracing is not None:
            opened.callback(tracing.shutdown)
        server, health_servicer = await _grpc_server(settings, core, tracing, stopping)
        port = _bind(server, settings, credentials)
        log.info("gRPC port security: %s", tls.describe(settings))
        await server.start()
        opened.pop_all()  # from here on, RunningServer.stop closes them
    running = RunningServer(
        server,
        port,
        core.store,
        health_servicer,
        embedded,
        batcher=core.batcher,
        embeddings=core.embeddings,
        cache=core.cache,
        metrics=core.metrics,
        tracing=tracing,
        stopping=stopping,
    )
    if settings.metrics_listen:
        assert core.metrics is not None
        try:
            running.metrics_server = MetricsServer.start(
                settings.metrics_listen, core.metrics.registry
            )
        except BaseException:
            await running.stop(0)
            raise
    running.tasks.append(
        asyncio.create_task(
            _watch_redis(
                core.store,
                health_servicer,
                settings.health_interval_seconds,
                running.stopping,
                _address(url),
            )
        )
    )
    reaper = ExpiryReaper(core.store, settings.expiry_poll_seconds, running.stopping)
    running.tasks.append(asyncio.create_task(reaper.run()))
    log.info("sharedctx serving on %s", listening_on(settings.listen, port))
    return running


def listening_on(listen: str, port: int) -> str:
    """The address served: `listen` with the port bound (port 0 picks one); a unix socket's
    path as given (gRPC reports port 1 for it)."""
    if is_unix_socket(listen):
        return listen
    return f"{listen.rpartition(':')[0]}:{port}"


async def _open_core(
    settings: Settings,
    url: str,
    quotas: QuotaTable,
    tokens: TokenCounter | None,
    embedder: Embedder,
    opened: contextlib.AsyncExitStack,
) -> _Core:
    """The store and the services over it, each registered on `opened` to be closed."""
    tokens = tokens or TokenCounter(settings.token_encoding)
    metrics = Metrics() if settings.metrics_listen else None
    store = Store(
        connect(url, settings),
        settings,
        embedder.model_id,
        on_unavailable=metrics.redis_error if metrics is not None else None,
        quotas=quotas,
        reads=reads_connection(url, settings),
    )
    opened.push_async_callback(store.aclose)
    segmenter = (
        Segmenter(tokens.count, SegmentConfig(min_tokens=settings.excerpt_min_tokens))
        if settings.excerpts
        else None
    )
    batcher = MicroBatcher(
        TimedEncoder(embedder, metrics) if metrics is not None else embedder,
        max_batch=settings.embed_batch,
        max_wait_ms=settings.embed_wait_ms,
        max_queued=settings.embed_queue,
        max_run_ms=settings.embed_run_ms,
    )
    batcher.start()
    opened.push_async_callback(batcher.aclose)
    embeddings = EntryEmbeddings(store, batcher)
    opened.push_async_callback(embeddings.aclose)
    cache = NamespaceCache(
        store,
        embedder.dim,
        max_entries=settings.cache_max_entries,
        on_missing_vectors=embeddings.schedule,
        segmenter=segmenter,
    )
    queries = QueryCache(batcher, max_entries=settings.query_cache_entries)
    fits = FitService(
        store,
        cache,
        queries,
        tokens,
        on_turn_index=metrics.turn_index if metrics is not None else None,
    )
    if metrics is not None:
        metrics.watch_components(cache, queries, batcher)
    return _Core(store, batcher, embeddings, cache, fits, EntryDeriver(tokens, segmenter), metrics)


async def _grpc_server(
    settings: Settings, core: _Core, tracing: Tracing | None, stopping: asyncio.Event
) -> tuple[grpc.aio.Server, health.aio.HealthServicer]:
    """The gRPC server with every service registered through the layers (not yet bound)."""
    # Outermost: request ids, metrics and spans cover calls the others refuse, too.
    # Then admission: a call beyond the server's limits is refused before any work.
    layers = [
        ObserveInterceptor(core.metrics, tracing),
        Admission(settings),
        *server_layers(settings),
    ]
    # Room for a full batch, or one Put of a content and a compressed form of the largest size,
    # plus framing; gRPC takes a C int.
    limits = settings.limits
    message_bytes = min(
        2**31 - 1, max(limits.max_batch_bytes, 2 * limits.max_content_bytes) + (1 << 20)
    )
    server = grpc.aio.server(
        # A backstop: Admission refuses first, with a message that names the setting (calls
        # it refuses, and health checks, hold a slot here too).
        maximum_concurrent_rpcs=2 * (settings.max_concurrent_rpcs + settings.max_watches),
        options=[
            ("grpc.max_receive_message_length", message_bytes),
            ("grpc.max_send_message_length", message_bytes),
            # `serve --workers N` runs N processes on one port; the kernel spreads connections.
            # Otherwise off, so that a second server started on a taken port fails loudly
            # rather than quietly taking half the connections.
            ("grpc.so_reuseport", int(worker_count(settings.workers) > 1)),
            # Clients ping every 30 s to keep a long Watch alive through NATs and load
            # balancers (sharedctx.client). By default a gRPC server takes a ping on a call
            # that sends nothing as abuse more often than every 5 minutes, and after two
            # closes the connection ("too_many_pings"): an idle watch died after 3 minutes.
            ("grpc.http2.min_ping_interval_without_data_ms", MIN_PING_INTERVAL_MS),
            ("grpc.keepalive_permit_without_calls", 1),
        ],
    )
    servicer = SharedContextServicer(
        core.store,
        WritePath(core.deriver, core.embeddings, core.store),
        core.embeddings,
        core.fits,
        ChangeFeed(core.store, stopping),
        settings,
    )
    # Every service registers through the layers, wrapped once per method.
    registration: Any = WrappedRegistration(server, layers)
    pb_grpc.add_SharedContextServicer_to_server(servicer, registration)  # type: ignore[no-untyped-call]
    health_servicer = health.aio.HealthServicer()
    await health_servicer.set(LIVENESS_NAME, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, registration)
    # What reflection.enable_server_reflection does for an aio server (it cannot tell that
    # `registration` stands in for one).
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
        reflection.aio.ReflectionServicer(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
        ),
        registration,
    )
    return server, health_servicer


def _bind(server: grpc.aio.Server, settings: Settings, credentials: Any) -> int:
    """The port `server` listens on (settings.listen); ConfigError when it cannot."""
    try:
        port: int = (
            server.add_secure_port(settings.listen, credentials)
            if credentials is not None
            else server.add_insecure_port(settings.listen)
        )
    except RuntimeError:
        port = 0  # gRPC says why on stderr (e.g. "Address already in use")
    if port == 0:
        raise listen_error(settings.listen)
    return port


async def serve(settings: Settings) -> None:
    """Run until SIGTERM/SIGINT, then drain gracefully (`--workers N`: workers.py)."""
    running = await start(settings)
    print(f"sharedctx listening on {listening_on(settings.listen, running.port)}", flush=True)
    await run_until_signalled(running, settings)


async def run_until_signalled(running: RunningServer, settings: Settings) -> None:
    """Serve until SIGTERM/SIGINT, then give in-flight calls settings.grace_seconds."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down (grace %.1fs)", settings.grace_seconds)
    await running.stop(settings.grace_seconds)
