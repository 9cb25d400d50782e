"""The namespace registry: which namespaces exist, for the Namespaces RPC.

Every other key of a namespace sits on the namespace's own Redis Cluster slot, so a write
cannot add the namespace to a global registry in the same atomic step. Instead the registry
is added to before a namespace's first write from a process (once per process and namespace,
remembered), so it always holds every namespace that has entries, and may hold some that no
longer do: a listing skips namespaces without a live entry rather than removing them, since a
removal could race a concurrent first write. Namespaces written before the registry existed are
added by one SCAN the first time a process lists namespaces.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ..model import NamespaceTotals
from . import keys as K
from .records import NAMESPACES_LISTING, encode_page_token, text

# Namespaces a process remembers having registered (a bounded LRU: forgetting one costs a ZADD).
_REMEMBERED = 100_000
# Registry members read per round, and rounds per page (bounds the work when many registered
# namespaces are empty).
_BATCH = 256
_ROUNDS = 8
_SCAN_COUNT = 1000


class NamespaceRegistry:
    """Adds namespaces to the registry and pages through those with live entries."""

    def __init__(self, redis: Any) -> None:
        self._redis = redis
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._filled = False

    async def register(self, namespace: str) -> None:
        """Make sure `namespace` is listed (one ZADD the first time this process sees it)."""
        if namespace in self._seen:
            self._seen.move_to_end(namespace)
            return
        await self._redis.zadd(K.NAMESPACES, {namespace: 0}, nx=True)
        self._seen[namespace] = None
        if len(self._seen) > _REMEMBERED:
            self._seen.popitem(last=False)

    async def fill(self) -> None:
        """Add namespaces written before the registry existed (once per Redis, by SCAN)."""
        if self._filled or await self._redis.get(K.NAMESPACES_FILLED):
            self._filled = True
            return
        found: list[str] = []
        async for key in self._redis.scan_iter(match=K.NAMESPACE_META_PATTERN, count=_SCAN_COUNT):
            name = K.namespace_of_meta(text(key))
            if name is not None:
                found.append(name)
        for start in range(0, len(found), _SCAN_COUNT):
            chunk = found[start : start + _SCAN_COUNT]
            await self._redis.zadd(K.NAMESPACES, dict.fromkeys(chunk, 0), nx=True)
        await self._redis.set(K.NAMESPACES_FILLED, "1")
        self._filled = True

    async def all_names(self) -> list[list[str]]:
        """Every registered namespace, in chunks (for a one-time pass over all of them)."""
        names = [text(n) for n in await self._redis.zrange(K.NAMESPACES, 0, -1)]
        return [names[i : i + _SCAN_COUNT] for i in range(0, len(names), _SCAN_COUNT)]

    async def page(
        self,
        prefix: str,
        size: int,
        after: str | None,
        now_ms: int,
        readable: Callable[[str], bool] | None = None,
    ) -> tuple[list[NamespaceTotals], str]:
        """Up to `size` namespaces with `prefix` after the name `after` that hold a live entry
        (and that `readable` allows), in byte order, and the token of the next page ('' at the
        end)."""
        await self.fill()
        start = "(" + after if after is not None else "[" + prefix
        # No valid UTF-8 string contains byte 0xff: prefix + 0xff bounds every name with prefix.
        stop = b"[" + prefix.encode() + b"\xff" if prefix else "+"
        out: list[NamespaceTotals] = []
        last = ""
        for _ in range(_ROUNDS):
            batch = [
                text(n) for n in await self._redis.zrangebylex(K.NAMESPACES, start, stop, 0, _BATCH)
            ]
            names = [n for n in batch if readable is None or readable(n)]
            totals = await self._totals(names, now_ms)
            for name in batch:
                last = name
                found = totals.get(name)
                if found is not None and found.entries > 0:
                    out.append(found)
                    if len(out) == size:
                        return out, encode_page_token(last, NAMESPACES_LISTING)
            if len(batch) < _BATCH:
                return out, ""
            start = "(" + last
        return out, encode_page_token(last, NAMESPACES_LISTING)

    async def _totals(self, names: Sequence[str], now_ms: int) -> dict[str, NamespaceTotals]:
        """Each namespace's live entries (counted entries less those already past their
        expiry, swept or not) and token totals, in one pipelined round trip."""
        if not names:
            return {}
        pipe = self._redis.pipeline(transaction=False)
        for name in names:
            ns = K.namespace(name, "")
            pipe.hmget(ns.stats, "entries", "orig_tokens", "comp_tokens")
            pipe.zcount(ns.exp, "-inf", f"({now_ms}")  # expired: expiry time already past
        replies = await pipe.execute()
        out = {}
        for i, name in enumerate(names):
            entries, orig, comp = (int(v or 0) for v in replies[2 * i])
            live = entries - int(replies[2 * i + 1])
            out[name] = NamespaceTotals(name, live, orig, comp)
        return out
