"""Prometheus metrics, served on their own HTTP port (`--metrics-listen HOST:PORT`).

Each server owns a `Metrics` with its own CollectorRegistry: tests run several servers in one
process, and a module-level registry would mix their numbers (and refuse the second set of
metrics with the same names).

What is measured where:
- RPCs (count, latency, in flight) by the interceptor in `observe.py`, by method and code;
- Fit sizes from each Fit reply (also in the interceptor, which sees every reply);
- embedding batches by `TimedEncoder`, which wraps the model the batcher calls;
- Redis failures by the Store's `on_unavailable` hook, per store operation;
- how RELEVANT/RECENT Fits got their turns by FitService's `on_turn_index` hook;
- cache counters, read from the components' own stats at scrape time (`_ComponentStats`), so
  the hot paths keep plain integer increments.

No metric has a namespace label: namespaces are unbounded (a label per namespace would grow
without end) and naming them would tell whoever scrapes what tenants exist.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIServer

import numpy as np
from numpy.typing import NDArray
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from sharedctx.v1 import sharedctx_pb2 as pb

from ..errors import ConfigError

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from ..embedding import BatcherStats, MicroBatcher, QueryCache, QueryCacheStats
    from ..embedding.embedder import Encoder
    from ..state.nscache import CacheStats, NamespaceCache

log = logging.getLogger(__name__)

# Latency buckets from a cached Get (sub-millisecond) to a long Watch stream.
_RPC_SECONDS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300
)  # fmt: skip
_COUNTS = (0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 100_000, 1_000_000)
_TOKENS = (0, 100, 250, 500, 1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 1_000_000)
_BATCH_TEXTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
# A scrape waits this long for the event loop to read the cache counters.
_SNAPSHOT_TIMEOUT_S = 5.0
_BATCH_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class Metrics:
    """Every metric of one server, in the server's own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        rpc = ("grpc_service", "grpc_method", "grpc_type")
        # Names as go-grpc-prometheus and the Python/Java gRPC exporters use them, so existing
        # dashboards work; the latency histogram also carries the code (errors are often fast).
        self.rpc_started = Counter(
            "grpc_server_started", "RPCs started on the server.", rpc, registry=r
        )
        self.rpc_handled = Counter(
            "grpc_server_handled",
            "RPCs completed on the server, by status code.",
            (*rpc, "grpc_code"),
            registry=r,
        )
        self.rpc_seconds = Histogram(
            "grpc_server_handling_seconds",
            "Time from the start of an RPC to its status (a Watch stream: its whole life).",
            (*rpc, "grpc_code"),
            buckets=_RPC_SECONDS,
            registry=r,
        )
        self.rpc_in_flight = Gauge(
            "sharedctx_rpcs_in_flight", "RPCs being handled now.", ("grpc_method",), registry=r
        )
        self.fit_candidates = Histogram(
            "sharedctx_fit_candidates",
            "Live entries a Fit chose from.",
            buckets=_COUNTS,
            registry=r,
        )
        self.fit_selected = Histogram(
            "sharedctx_fit_selected_entries",
            "Entries a Fit returned.",
            buckets=_COUNTS,
            registry=r,
        )
        self.fit_tokens = Histogram(
            "sharedctx_fit_tokens",
            "Tokens of the entries a Fit returned.",
            buckets=_TOKENS,
            registry=r,
        )
        self.embed_batch_texts = Histogram(
            "sharedctx_embed_batch_texts",
            "Texts per embedding model run (micro-batches).",
            buckets=_BATCH_TEXTS,
            registry=r,
        )
        self.embed_batch_seconds = Histogram(
            "sharedctx_embed_batch_seconds",
            "Time of one embedding model run.",
            buckets=_BATCH_SECONDS,
            registry=r,
        )
        self.redis_errors = Counter(
            "sharedctx_redis_errors",
            "Store operations that failed because Redis was unreachable or timed out.",
            ("operation",),
            registry=r,
        )
        self.turn_indexes = Counter(
            "sharedctx_fit_turn_index",
            "RELEVANT/RECENT Fits by what their grouping into turns took: reused as kept, "
            "updated from the earliest change on, or rebuilt.",
            ("outcome",),
            registry=r,
        )
        # The process's CPU, memory and file descriptors, and the interpreter's GC: the same
        # series the default registry has, which a per-server registry must add itself.
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)

    def observe_fit(self, reply: pb.FitResponse) -> None:
        """Record the size of one Fit's answer."""
        self.fit_candidates.observe(reply.candidates)
        self.fit_selected.observe(len(reply.entries))
        self.fit_tokens.observe(reply.total_tokens)

    def turn_index(self, outcome: str) -> None:
        """Count one turn-strategy Fit by how it got its turns (FitService's hook)."""
        self.turn_indexes.labels(outcome).inc()

    def redis_error(self, operation: str) -> None:
        """Count one store operation that Redis failed (the Store's on_unavailable hook)."""
        self.redis_errors.labels(operation).inc()

    def watch_components(
        self, cache: NamespaceCache, queries: QueryCache, batcher: MicroBatcher
    ) -> None:
        """Export the counters these components keep themselves, read at each scrape."""
        self.registry.register(_ComponentStats(cache, queries, batcher))


class TimedEncoder:
    """Wraps the model the batcher calls, timing each run: one call is one micro-batch."""

    def __init__(self, inner: Encoder, metrics: Metrics) -> None:
        self._inner = inner
        self._metrics = metrics

    @property
    def model_id(self) -> str:
        """The wrapped model's id."""
        return self._inner.model_id

    @property
    def dim(self) -> int:
        """The wrapped model's dimension."""
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed through the wrapped model, recording the batch size and time."""
        started = time.perf_counter()
        try:
            return self._inner.embed(texts)
        finally:
            self._metrics.embed_batch_texts.observe(len(texts))
            self._metrics.embed_batch_seconds.observe(time.perf_counter() - started)


@dataclass(frozen=True)
class _Snapshot:
    cache: CacheStats
    cached_entries: int
    queries: QueryCacheStats
    batcher: BatcherStats


class _ComponentStats(Collector):
    """Reads the components' counters at scrape time, on the event loop they live on.

    Scrapes arrive on the HTTP server's thread, while the loop may be changing the very dicts
    a count walks (the namespace cache); taking the snapshot on the loop makes it consistent.
    """

    def __init__(self, cache: NamespaceCache, queries: QueryCache, batcher: MicroBatcher) -> None:
        self._cache = cache
        self._queries = queries
        self._batcher = batcher
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    def _snapshot(self) -> _Snapshot:
        return _Snapshot(
            replace(self._cache.stats),
            self._cache.cached_entries,
            self._queries.stats(),
            self._batcher.stats(),
        )

    async def _snapshot_on_loop(self) -> _Snapshot:
        return self._snapshot()

    def collect(self) -> Iterable[Metric]:
        if threading.get_ident() == self._loop_thread:
            snap = self._snapshot()
        else:
            try:
                future = asyncio.run_coroutine_threadsafe(self._snapshot_on_loop(), self._loop)
            except RuntimeError:  # the loop is closed: the server is gone
                return
            try:
                snap = future.result(timeout=_SNAPSHOT_TIMEOUT_S)
            except concurrent.futures.TimeoutError:
                future.cancel()
                log.warning("metrics: the event loop did not answer; cache series left out")
                return
        ns, q, b = snap.cache, snap.queries, snap.batcher
        yield _counter(
            "sharedctx_namespace_cache_hits", "Fits served from a cached namespace.", ns.hits
        )
        yield _counter(
            "sharedctx_namespace_cache_loads",
            "Full namespace loads (first use, after eviction, or behind a trimmed change log).",
            ns.loads,
        )
        yield _counter(
            "sharedctx_namespace_cache_evictions",
            "Namespaces evicted from the cache.",
            ns.evictions,
        )
        yield _counter(
            "sharedctx_namespace_cache_changes_applied",
            "Change-log records applied to cached namespaces.",
            ns.applied,
        )
        yield GaugeMetricFamily(
            "sharedctx_namespace_cache_entries",
            "Entries held in the namespace cache.",
            value=snap.cached_entries,
        )
        yield _counter("sharedctx_query_cache_hits", "Fit queries whose vector was cached.", q.hits)
        yield _counter(
            "sharedctx_query_cache_misses", "Fit queries that had to be embedded.", q.misses
        )
        yield GaugeMetricFamily(
            "sharedctx_query_cache_entries", "Query vectors cached.", value=q.entries
        )
        yield _counter("sharedctx_embed_texts", "Texts embedded.", b.texts)
        yield _counter(
            "sharedctx_embed_rejected",
            "Embedding requests refused because the queue was full (RESOURCE_EXHAUSTED).",
            b.rejected,
        )
        yield _counter(
            "sharedctx_embed_failed_batches", "Embedding model runs that failed.", b.failed_batches
        )
        yield GaugeMetricFamily(
            "sharedctx_embed_queued_texts", "Texts waiting to be embedded.", value=b.queued_texts
        )


def _counter(name: str, documentation: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, value=value)


def parse_listen(listen: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 as [::1]:9090) into a bind address and port; ValueError if malformed."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"metrics listen address must be HOST:PORT; got {listen!r}")
    return host.strip("[]"), int(port)


class MetricsServer:
    """The /metrics HTTP endpoint, on a daemon thread of its own."""

    def __init__(self, server: WSGIServer, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread

    @classmethod
    def start(cls, listen: str, registry: CollectorRegistry) -> MetricsServer:
        """Bind `listen` (port 0 picks a free one) and serve `registry` at /metrics.

        ConfigError when the address is malformed or cannot be bound (e.g. already in use).
        """
        try:
            host, port = parse_listen(listen)
            server, thread = start_http_server(port, addr=host, registry=registry)
        except (ValueError, OSError) as exc:
            raise ConfigError(f"cannot serve metrics on {listen!r}: {exc}") from exc
        log.info("metrics on http://%s:%d/metrics", host, server.server_address[1])
        return cls(server, thread)

    @property
    def port(self) -> int:
        """The port actually bound."""
        return int(self._server.server_address[1])

    async def stop(self) -> None:
        """Stop serving and release the port."""
        # shutdown() waits for the serving loop's next poll (up to half a second): off the loop.
        await asyncio.to_thread(self._server.shutdown)
        self._server.server_close()
        await asyncio.to_thread(self._thread.join, 5)


__all__ = ["Metrics", "MetricsServer", "TimedEncoder", "parse_listen"]
