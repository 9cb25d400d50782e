"""Build the Redis client from settings: one place that knows URLs, timeouts and retries."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.asyncio.retry import Retry

from .settings import Settings


def connect(url: str, settings: Settings) -> Any:
    """A redis.asyncio client (or RedisCluster) for `url`; no I/O happens here."""
    common: dict[str, Any] = {
        "socket_timeout": settings.redis_timeout_seconds,
        "socket_connect_timeout": min(settings.redis_timeout_seconds, 2.0),
        # One quick retry on a broken connection: after a Redis restart, pooled connections are
        # dead; the retry reconnects so the first calls after the restart do not fail.
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=3),
        "retry_on_error": [RedisConnectionError],
        "health_check_interval": 10,
    }
    if settings.redis_cluster or url.startswith(("redis+cluster://", "rediss+cluster://")):
        url = url.replace("+cluster", "", 1)
        return RedisCluster.from_url(url, **common)
    return Redis.from_url(url, **common)


def is_cluster(redis: Any) -> bool:
    """True for a Redis Cluster client."""
    return isinstance(redis, RedisCluster)


async def ping(redis: Any) -> bool:
    """PING; on a cluster, every master must answer (a cluster client's own PING asks one node,
    which would keep the server ready while the masters holding other namespaces are down)."""
    if isinstance(redis, RedisCluster):
        return bool(await redis.ping(target_nodes=RedisCluster.PRIMARIES))
    return bool(await redis.ping())
