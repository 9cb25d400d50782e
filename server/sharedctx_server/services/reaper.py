"""Expiries acted on when they fall due: each server runs a reaper that claims namespaces
whose next entry has expired (state/expiries.py) and sweeps them, so that `expire` records
reach watchers, the namespace cache and the quota totals within about a poll interval of the
TTL, even when nothing else happens in the namespace.

Each expired entry is logged exactly once however many replicas run: the removal is one
atomic script that logs only what it removed, and a claim lets one replica reap a namespace
at a time (a replica that dies mid-reap lets its claim lapse after the lease).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ..errors import StoreUnavailable
from ..state.store import Store

log = logging.getLogger(__name__)

# A claim lasts this long: longer than any reap takes, short enough that a dead replica's
# claims are picked up soon.
_LEASE_MS = 10_000
# Namespaces claimed per poll, and expired entries removed per sweep step.
_CLAIM = 64
_SWEEP = 1000


class ExpiryReaper:
    """Polls the expiry schedule every `interval` seconds until `stopping` is set."""

    def __init__(self, store: Store, interval: float, stopping: asyncio.Event) -> None:
        self._store = store
        self._interval = interval
        self._stopping = stopping

    async def run(self) -> None:
        """Reap due namespaces until the server stops; Redis outages only delay it."""
        while not self._stopping.is_set():
            try:
                now = await self._store.redis_now_ms()
                for namespace in await self._store.expiry.due(now, _LEASE_MS, _CLAIM):
                    await self._store.expiry.reap(namespace, _SWEEP)
            except StoreUnavailable as exc:
                log.debug("expiry reaper waits for Redis: %s", exc)
            except Exception:  # a bug must not end expiries for the server's whole life
                log.exception("expiry reaper failed; trying again")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self._interval)
