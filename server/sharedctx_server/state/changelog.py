"""A namespace's change log, as Watch and the namespace cache read it.

Every write script appends one record per change to the namespace's capped stream (`log`
key): op, key, version, namespace version and time (records.Change). Readers only read; the
writers are the Lua scripts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from . import keys as K
from .records import Change, text
from .redis_conn import RedisErrors


class ChangeLog:
    """Reads of the namespaces' change logs over the store's client and keys."""

    def __init__(
        self,
        redis: Any,
        keys: Callable[[str], K.NamespaceKeys],
        errors: Callable[[str], RedisErrors],
        redis_now_ms: Callable[[], Awaitable[int]],
    ) -> None:
        self._redis = redis
        self._ns = keys
        self._errors = errors
        self._now_ms = redis_now_ms

    async def position(self, namespace: str) -> tuple[str, int]:
        """The newest record's id and namespace version; when the log holds no record, id
        '0-0' and the namespace's version (0 unless Redis lost the log but kept the counter)."""
        keys = self._ns(namespace)
        async with self._errors("log_position"):
            last = await self._redis.xrevrange(keys.log, count=1)
            if not last:
                return "0-0", int(await self._redis.hget(keys.meta, "version") or 0)
        record_id, fields = last[0]
        return text(record_id), int(fields[b"ns"])

    async def after(self, namespace: str, after: str, count: int) -> tuple[int, list[Change]]:
        """Redis's clock (ms) and up to `count` records after stream id `after`.

        One command (XRANGE) when the clock sample is fresh: a steady-state Fit's only one.
        """
        now = await self._now_ms()
        async with self._errors("changes"):
            records = await self._redis.xrange(
                self._ns(namespace).log, min=f"({after}", max="+", count=count
            )
        return now, [Change.from_record(r) for r in records]

    async def wait(self, namespace: str, after: str, count: int, block_ms: int) -> list[Change]:
        """Wait up to `block_ms` for records after `after` (XREAD BLOCK)."""
        log_key = self._ns(namespace).log
        async with self._errors("read_changes"):
            reply = await self._redis.xread({log_key: after}, count=count, block=block_ms)
        if not reply:
            return []
        return [Change.from_record(r) for r in reply[0][1]]

    async def first(self, namespace: str) -> Change | None:
        """The oldest record the (capped) log still holds."""
        async with self._errors("first_change"):
            first = await self._redis.xrange(self._ns(namespace).log, count=1)
        return Change.from_record(first[0]) if first else None
