"""The expiry schedule: when each namespace's next entry expires, so that expiries are acted
on when they fall due (services/reaper.py) rather than at the namespace's next write.

One sorted set outside every namespace (`keys.EXPIRIES`: namespace -> next expiry, ms). A
namespace's keys live on its own Redis Cluster slot, so a write cannot update the schedule in
its atomic step; instead, after a write with a TTL, the schedule is lowered to the new expiry
if that is earlier (ZADD LT). A reaper claims due namespaces (claim_due.lua pushes each to the
end of a lease, so one replica reaps it and a dead reaper's claim lapses), sweeps them, and sets
their next time, then reads the namespace's earliest expiry again and lowers the schedule to
it: a write that lands between the sweep and the reschedule is never lost, whichever order its
own lowering and the reschedule happen in.
"""

from __future__ import annotations

from typing import Any

from . import keys as K
from .records import text
from .scripts import Scripts


class ExpirySchedule:
    """Reads and moves the schedule (the store owns the namespace side: sweeps)."""

    def __init__(self, redis: Any, scripts: Scripts) -> None:
        self._redis = redis
        self._scripts = scripts
        self._filled = False

    async def lower(self, namespace: str, when_ms: int) -> None:
        """`namespace` has an entry expiring at `when_ms`: due then at the latest."""
        await self._redis.zadd(K.EXPIRIES, {namespace: when_ms}, lt=True)

    async def claim(self, now_ms: int, lease_until_ms: int, count: int) -> list[str]:
        """Up to `count` namespaces due at `now_ms`, claimed until `lease_until_ms`."""
        claimed = await self._scripts.claim_due(
            self._redis, [K.EXPIRIES], [now_ms, lease_until_ms, count]
        )
        return [text(n) for n in claimed]

    async def settle(self, namespace: str, next_ms: int | None, earliest: int | None) -> None:
        """After a sweep: due at `next_ms` (None: no pending expiry), then lowered to
        `earliest`, the namespace's earliest expiry read after that (see the module doc)."""
        if next_ms is None:
            await self._redis.zrem(K.EXPIRIES, namespace)
        else:
            await self._redis.zadd(K.EXPIRIES, {namespace: next_ms})
        if earliest is not None:
            await self.lower(namespace, earliest)

    async def filled(self) -> bool:
        """Whether the schedule already holds the namespaces written before it existed."""
        if not self._filled:
            self._filled = bool(await self._redis.get(K.EXPIRIES_FILLED))
        return self._filled

    async def mark_filled(self) -> None:
        """Record that the schedule was filled (once per Redis)."""
        await self._redis.set(K.EXPIRIES_FILLED, "1")
        self._filled = True
