"""Build the Redis client from settings: one place that knows URLs, timeouts and retries.

Retries, and why there are (almost) none on a single Redis: writes are Lua scripts that are not
idempotent (a Put bumps the version; a compare-and-set Put repeated after it succeeded would
report a conflict), and a command whose connection dies after sending it may or may not have
run. So the server never re-sends a command blindly; the client retries the RPCs that are
idempotent. What a Redis restart leaves behind, pooled connections to the old process, is
caught before anything is sent on them: the pool checks a connection for EOF when handing it
out and reconnects. redis-py skips that check while "maintenance notifications" (a Redis
Enterprise push feature, unused here) are in their default "auto" mode, so they are turned off.
A Redis Cluster client keeps redis-py's retries: it needs them to follow failovers and slot
moves. The price: a write whose connection breaks mid-flight may be sent again, so after a
failover a Put may apply twice (its version bumped twice) or a compare-and-set may report a
conflict with its own first attempt; clients that must know use `if_version` and re-read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ClusterError, ReadOnlyError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.maint_notifications import MaintNotificationsConfig

from ..errors import StoreUnavailable
from ..settings import Settings
from .multiplex import MultiplexedRedis

# Failures that pass: the connection-level ones (LOADING, redis-py's BusyLoadingError, among
# them: a restarted Redis replaying its append-only file), a master that a failover turned
# into a replica, still at its address until clients move (READONLY), and a Redis Cluster's
# own (CLUSTERDOWN and MASTERDOWN while a master is lost, TRYAGAIN during a slot migration,
# slots the client cannot place, redirections exhausted). Cross-slot errors (the server's or
# the client library's own RedisClusterException) are bugs, not outages: not listed.
_UNAVAILABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    ClusterError,
    TryAgainError,
    SlotNotCoveredError,
    ReadOnlyError,
)


class RedisHealth:
    """Whether Redis answered the last health check (Store.ping), for failing fast: a Redis
    that hangs rather than refusing connections would hold every call for the socket timeout
    (and a client's retries for several), while the server already knows it is gone. While
    the last check failed, a call first waits for one quick check (`probe`, shared by every
    call that arrives meanwhile): when Redis answers it, the call goes ahead, so calls work
    again the moment Redis does, not at the next health check."""

    __slots__ = ("_probe", "_probing", "down_since")

    def __init__(self, probe: Callable[[], Awaitable[bool]]) -> None:
        self.down_since: float | None = None  # time.monotonic() of the first failed check
        self._probe = probe
        self._probing: asyncio.Future[bool] | None = None

    def report(self, answered: bool) -> None:
        """The outcome of a health check."""
        if answered:
            self.down_since = None
        elif self.down_since is None:
            self.down_since = time.monotonic()

    async def answers(self) -> bool:
        """True when Redis is not known to be down, or answers a quick check now."""
        if self.down_since is None:
            return True
        if self._probing is None or self._probing.done():
            self._probing = asyncio.ensure_future(self._probe())
        answered = await asyncio.shield(self._probing)
        self.report(answered)
        return answered


class RedisErrors:
    """Around a store operation: Redis failures that pass (connection lost, timed out, cluster
    down) become StoreUnavailable, and `on_unavailable` is told the operation's name; while
    `health` says the last check failed, the operation fails so at once. A class rather than a
    generator-based context manager: it runs around every store call, and a generator costs
    several times as much to enter and leave."""

    __slots__ = ("_health", "_on_unavailable", "_operation")

    def __init__(
        self,
        operation: str,
        on_unavailable: Callable[[str], None] | None = None,
        health: RedisHealth | None = None,
    ) -> None:
        self._operation = operation
        self._on_unavailable = on_unavailable
        self._health = health

    async def __aenter__(self) -> None:
        health = self._health
        # The attribute first: a coroutine per store call would cost more than the check.
        if health is not None and health.down_since is not None and not await health.answers():
            if self._on_unavailable is not None:
                self._on_unavailable(self._operation)
            since = time.monotonic() - (health.down_since or time.monotonic())
            raise StoreUnavailable(
                f"Redis is unavailable: it has not answered the server's health checks for "
                f"{since:.0f}s; calls fail at once until it does"
            )

    async def __aexit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or not isinstance(exc, _UNAVAILABLE):
            return  # nothing to translate; other exceptions pass unchanged
        if self._on_unavailable is not None:
            self._on_unavailable(self._operation)
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc


def connect(url: str, settings: Settings) -> Any:
    """A redis.asyncio client (or RedisCluster) for `url`; no I/O happens here."""
    common: dict[str, Any] = {
        "socket_timeout": settings.redis_timeout_seconds,
        "socket_connect_timeout": _connect_timeout(settings),
        "maint_notifications_config": MaintNotificationsConfig(enabled=False),
        "health_check_interval": 10,
    }
    if _is_cluster(url, settings):
        url = url.replace("+cluster", "", 1)
        return RedisCluster.from_url(
            url,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=3),
            retry_on_error=[RedisConnectionError],
            **common,
        )
    return Redis.from_url(url, retry=Retry(NoBackoff(), retries=0), **common)


def reads_connection(url: str, settings: Settings) -> MultiplexedRedis | None:
    """The multiplexed connection entry reads share (multiplex.py), or None where the pooled
    client must serve them too (a Redis Cluster, a unix socket)."""
    if _is_cluster(url, settings):
        return None
    return MultiplexedRedis.from_url(
        url, settings.redis_timeout_seconds, _connect_timeout(settings)
    )


def _is_cluster(url: str, settings: Settings) -> bool:
    return settings.redis_cluster or url.startswith(("redis+cluster://", "rediss+cluster://"))


def _connect_timeout(settings: Settings) -> float:
    return min(settings.redis_timeout_seconds, 2.0)


async def ping(redis: Any) -> bool:
    """On a cluster, PING every master (a cluster client's own PING asks one node, which would
    keep the server ready while the masters holding other namespaces are down). On a single
    Redis, True without a command: the caller's TIME sample is the liveness check there."""
    if isinstance(redis, RedisCluster):
        return bool(await redis.ping(target_nodes=RedisCluster.PRIMARIES))
    return True
