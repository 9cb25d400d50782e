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

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ClusterError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.maint_notifications import MaintNotificationsConfig

from ..errors import StoreUnavailable
from ..settings import Settings

# Failures that pass: the connection-level ones, and a Redis Cluster's own (CLUSTERDOWN and
# MASTERDOWN while a master is lost, TRYAGAIN during a slot migration, slots the client cannot
# place, redirections exhausted). Cross-slot errors (the server's or the client library's own
# RedisClusterException) are bugs, not outages: not listed.
_UNAVAILABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    ClusterError,
    TryAgainError,
    SlotNotCoveredError,
)


@asynccontextmanager
async def redis_errors() -> AsyncIterator[None]:
    """Turn Redis failures that pass (connection lost, cluster down) into StoreUnavailable."""
    try:
        yield
    except _UNAVAILABLE as exc:
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc


def connect(url: str, settings: Settings) -> Any:
    """A redis.asyncio client (or RedisCluster) for `url`; no I/O happens here."""
    common: dict[str, Any] = {
        "socket_timeout": settings.redis_timeout_seconds,
        "socket_connect_timeout": min(settings.redis_timeout_seconds, 2.0),
        "maint_notifications_config": MaintNotificationsConfig(enabled=False),
        "health_check_interval": 10,
    }
    if settings.redis_cluster or url.startswith(("redis+cluster://", "rediss+cluster://")):
        url = url.replace("+cluster", "", 1)
        return RedisCluster.from_url(
            url,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=3),
            retry_on_error=[RedisConnectionError],
            **common,
        )
    return Redis.from_url(url, retry=Retry(NoBackoff(), retries=0), **common)


async def ping(redis: Any) -> bool:
    """On a cluster, PING every master (a cluster client's own PING asks one node, which would
    keep the server ready while the masters holding other namespaces are down). On a single
    Redis, True without a command: the caller's TIME sample is the liveness check there."""
    if isinstance(redis, RedisCluster):
        return bool(await redis.ping(target_nodes=RedisCluster.PRIMARIES))
    return True
