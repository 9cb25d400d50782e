"""Acting on expiries when they fall due: which namespaces are due (the schedule in
expiries.py) and the sweep that removes their expired entries. services/reaper.py runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import keys as K
from .expiries import ExpirySchedule
from .records import text
from .redis_conn import RedisErrors
from .registry import NamespaceRegistry
from .scripts import Scripts


class Reaping:
    """Due namespaces, claimed for one replica, and their sweeps."""

    def __init__(
        self,
        redis: Any,
        scripts: Scripts,
        registry: NamespaceRegistry,
        schedule: ExpirySchedule,
        keys: Callable[[str], K.NamespaceKeys],
        errors: Callable[[str], RedisErrors],
        change_log_max: int,
    ) -> None:
        self._redis = redis
        self._scripts = scripts
        self._registry = registry
        self._schedule = schedule
        self._ns = keys
        self._errors = errors
        self._change_log_max = change_log_max

    async def due(self, now_ms: int, lease_ms: int, count: int) -> list[str]:
        """Namespaces with entries due to expire at `now_ms`, claimed for `lease_ms` (one
        replica reaps each)."""
        async with self._errors("reap"):
            if not await self._schedule.filled():
                await self._fill()
            return await self._schedule.claim(now_ms, now_ms + lease_ms, count)

    async def reap(self, namespace: str, limit: int) -> None:
        """Remove every expired entry of the namespace (each logged as an expiry, exactly
        once whoever else sweeps) and schedule its next expiry."""
        async with self._errors("reap"):
            while True:
                dropped, pending = await self.sweep(namespace, limit)
                if dropped < limit:
                    break
            first = await self._redis.zrange(self._ns(namespace).exp, 0, 0, withscores=True)
            earliest = int(first[0][1]) if first else None
            await self._schedule.settle(namespace, pending, earliest)

    async def sweep(self, namespace: str, limit: int) -> tuple[int, int | None]:
        """Remove up to `limit` expired entries (sweep.lua): how many went, and when the next
        one expires (None: none left with a TTL)."""
        args = [self._change_log_max, limit]
        dropped, pending = await self._scripts.sweep(
            self._redis, self._ns(namespace).as_list(), args
        )
        return int(dropped), int(float(pending)) if text(pending) else None

    async def _fill(self) -> None:
        """Schedule the namespaces written before the schedule existed (once per Redis)."""
        await self._registry.fill()
        for chunk in await self._registry.all_names():
            pipe = self._redis.pipeline(transaction=False)
            for name in chunk:
                pipe.zrange(self._ns(name).exp, 0, 0, withscores=True)
            for name, first in zip(chunk, await pipe.execute(), strict=True):
                if first:
                    await self._schedule.lower(name, int(first[0][1]))
        await self._schedule.mark_filled()
