"""The Redis-backed entry store. Every write is one atomic Lua step; keys come from `keys`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import NotFound, StoreUnavailable, VersionConflict
from ..model import (
    NamespacesPage,
    NamespaceStats,
    NamespaceTotals,
    NewEntry,
    Renewed,
    Stamp,
    StoredEntry,
)
from ..settings import Settings
from . import keys as K
from .changelog import ChangeLog
from .expiries import ExpirySchedule
from .multiplex import MultiplexedRedis
from .quotas import Quota, QuotaTable
from .reaping import Reaping
from .records import (
    ENTRY_FIELDS,
    encode_page_token,
    entry_from_fields,
    entry_from_row,
    keys_listing,
    text,
)
from .redis_clock import RedisClock
from .redis_conn import RedisErrors, RedisHealth, ping
from .registry import NamespaceRegistry
from .scripts import Scripts

# Keys' page scans stop after this many rounds of expired members and hand back a cursor.
_KEYS_SCAN_ROUNDS = 8
# Clear removes entries in chunks of this many keys per atomic step.
_CLEAR_CHUNK = 500
# evict_oldest: a write first passes its script this many of the namespace's oldest entries
# beyond its batch size as eviction candidates (more under a byte limit, where one large entry
# may displace many small ones), doubling while the script asks for more, at most this often.
_EVICT_CANDIDATES = 16
_EVICT_CANDIDATES_BYTES = 128
_EVICT_ROUNDS = 5


class VectorsGone(Exception):
    """put_many wrote nothing: a vector counted on as stored is gone. The write path computes
    the vectors and writes again; never a reply."""


# While Redis is down, how long a call waits for it to answer before failing.
_QUICK_CHECK = 0.25


class Store:
    """Entries of many namespaces in one Redis (or Redis Cluster)."""

    def __init__(
        self,
        redis: Any,
        settings: Settings,
        model_id: str,
        scripts: Scripts | None = None,
        on_unavailable: Callable[[str], None] | None = None,
        quotas: QuotaTable | None = None,
        reads: MultiplexedRedis | None = None,
    ) -> None:
        self._redis = redis
        # Entry reads go over one multiplexed connection where there is one (a single Redis):
        # see multiplex.py. Writes, scans and streams keep the pooled client.
        self._reads = reads if reads is not None else redis
        self._clock = RedisClock()
        self._clock_lock = asyncio.Lock()
        self._settings = settings
        self._model_id = model_id
        self._scripts = scripts or Scripts.load()
        self._quotas = quotas or QuotaTable(Quota())
        self._registry = NamespaceRegistry(redis)
        self._expiries = ExpirySchedule(redis, self._scripts)
        # The change log as Watch and the namespace cache read it, and the reaping of due
        # expiries (services/reaper.py): their own rooms, over the same client and keys.
        self.log = ChangeLog(redis, self._ns, self._errors, self.redis_now_ms)
        self.expiry = Reaping(
            redis, self._scripts, self._registry, self._expiries, self._ns, self._errors,
            settings.change_log_max,
        )  # fmt: skip
        # Told the operation's name each time Redis fails one (the Redis-errors metric).
        self._on_unavailable = on_unavailable
        # Set by ping (the health service's check): while it fails, operations fail at once
        # unless Redis answers a quick check.
        self.health = RedisHealth(self._answers_quickly)

    def _errors(self, operation: str) -> RedisErrors:
        """Redis failures of `operation` become StoreUnavailable (and the Redis-errors metric),
        at once while the last health check failed."""
        return RedisErrors(operation, self._on_unavailable, self.health)

    def _ns(self, namespace: str) -> K.NamespaceKeys:
        return K.namespace(namespace, self._model_id)

    @property
    def redis(self) -> Any:
        """The underlying client (for health checks and the change-log readers)."""
        return self._redis

    @property
    def model_id(self) -> str:
        """The embedding model whose vectors this store keeps (part of the `emb` key)."""
        return self._model_id

    async def ping(self) -> bool:
        """True when Redis answers (on a Redis Cluster: every master); also samples Redis's
        clock, so that Fit can read it without a round trip (see redis_clock.py)."""
        answered = await self._answers()
        self.health.report(answered)
        return answered

    async def _answers(self) -> bool:
        # Not through _errors: the check itself must reach Redis to see it come back.
        try:
            async with RedisErrors("ping", self._on_unavailable):
                if await ping(self._redis):
                    await self._sample_clock()
                    return True
        except StoreUnavailable:
            pass
        return False

    async def _answers_quickly(self) -> bool:
        """_answers within _QUICK_CHECK seconds (what a call waits for while Redis is down)."""
        try:
            return await asyncio.wait_for(self._answers(), _QUICK_CHECK)
        except TimeoutError:
            return False

    async def _sample_clock(self) -> None:
        # On a single Redis, TIME doubles as the liveness check.
        sent = self._clock.local()
        seconds, micros = await self._redis.time()
        self._clock.observe(seconds * 1000 + micros / 1000, sent, self._clock.local())

    async def redis_now_ms(self) -> int:
        """Redis's clock in ms: from the latest sample, taking one first if it is stale."""
        if not self._clock.fresh:
            # One TIME for all the Fits that find the sample stale at once, not one each.
            async with self._clock_lock, self._errors("time"):
                if not self._clock.fresh:
                    await self._sample_clock()
        return self._clock.now_ms()

    async def put_many(
        self,
        namespace: str,
        entries: Sequence[NewEntry],
        vectors: Sequence[bytes | None] | None = None,
        stored: Sequence[bool] | None = None,
    ) -> list[Stamp]:
        """Write all entries (and any new embedding vectors) atomically, within the quota.

        `stored[i]`: entry i comes without a vector because the caller found its text's vector
        stored; the write checks that it still is, atomically with it.

        Raises VersionConflict, writing nothing, when a compare-and-set check fails,
        LimitExceeded, writing nothing, when the namespace's quota rejects the write, and
        VectorsGone, writing nothing, when a vector the caller counted on has gone.
        """
        quota = self._quotas.for_namespace(namespace)
        if quota.limited:
            # What cannot fit even in an empty namespace fails here, without a round trip.
            self._quotas.check_batch(namespace, [e.stored_bytes for e in entries])
        ns = self._ns(namespace)
        vectors = vectors or [None] * len(entries)
        stored = stored or [False] * len(entries)
        keys = ns.as_list() + [K.entry(namespace, e.key) for e in entries]
        head: list[Any] = [
            self._settings.change_log_max,
            self._settings.sweep_batch,
            len(entries),
            quota.max_entries,
            quota.max_bytes,
            quota.policy,
        ]
        items: list[Any] = []
        for e, vector, on_file in zip(entries, vectors, stored, strict=True):
            has_comp = e.compressed is not None
            items += [
                e.key,
                "" if e.if_version is None else e.if_version,
                e.ttl_ms,
                "" if e.event_ms is None else e.event_ms,
                e.meta.pack(),
                e.content,
                e.compressed if has_comp else "",
                "1" if has_comp else "0",
                e.meta.original_tokens,
                e.meta.compressed_tokens,
                e.meta.content_hash or "-",
                vector or ("?" if on_file else ""),
            ]
        wanted = 0
        if quota.evicts:
            extra = _EVICT_CANDIDATES_BYTES if quota.max_bytes > 0 else _EVICT_CANDIDATES
            wanted = len(entries) + extra
        async with self._errors("put_many"):
            # Listed before the first write, so every namespace with entries is listed.
            await self._registry.register(namespace)
            for _ in range(_EVICT_ROUNDS):
                # Read outside the script, so a race can make them stale; the script checks
                # them against `age` and asks again rather than evict the wrong entries.
                candidates = await self._oldest(ns, wanted) if wanted else []
                reply = await self._scripts.put_many(
                    self._redis,
                    keys + [K.entry(namespace, c) for c in candidates],
                    [*head, len(candidates), *items, *candidates],
                )
                if text(reply[0]) != "need_more":
                    break
                wanted = max(2 * wanted, int(reply[1]) + len(entries))
            else:
                raise self._quotas.eviction_failed(namespace, len(candidates))
        status = text(reply[0])
        if status == "need_vectors":
            raise VectorsGone()
        if status == "conflict":
            item = entries[int(reply[1]) - 1]
            raise VersionConflict(item.key, item.if_version or 0, int(reply[2]))
        if status == "quota":
            raise self._quotas.exceeded(namespace, text(reply[1]), int(reply[2]))
        stamps = [Stamp(*(int(x) for x in row)) for row in reply[1]]
        expiring = [s.expires_ms for s in stamps if s.expires_ms]
        if expiring:
            async with self._errors("put_many"):
                await self._expiries.lower(namespace, min(expiring))
        return stamps

    async def _oldest(self, ns: K.NamespaceKeys, count: int) -> list[str]:
        """The `count` least recently written keys of the namespace, oldest first."""
        return [text(k) for k in await self._redis.zrange(ns.age, 0, count - 1)]

    async def get_many(
        self, namespace: str, keys: Sequence[str], full: bool | Sequence[bool]
    ) -> list[StoredEntry | None]:
        """Entries in `keys` order (full or compressed form, per key or for all); None where
        absent or expired."""
        if not keys:
            return []
        redis_keys = [K.entry(namespace, k) for k in keys]
        flags = [full] * len(keys) if isinstance(full, bool) else list(full)
        async with self._errors("get_many"):
            rows = await self._scripts.get_many(
                self._reads, redis_keys, ["1" if f else "0" for f in flags]
            )
        return [
            None if not row else entry_from_row(k, row) for k, row in zip(keys, rows, strict=True)
        ]

    async def get(self, namespace: str, key: str, full: bool) -> StoredEntry:
        """One entry, or NotFound: one HMGET (atomic, and lighter for Redis than the script
        get_many runs), since either form sits in a field that exists (keys.py)."""
        async with self._errors("get"):
            row = await self._reads.hmget(
                K.entry(namespace, key), *ENTRY_FIELDS, "f" if full else "z", "o"
            )
        if row[0] is None:
            raise NotFound(namespace, key)
        found = entry_from_fields(key, row, full)
        if found is None:  # an entry written before o existed, read in its compressed form
            (found,) = await self.get_many(namespace, [key], full)
            if found is None:
                raise NotFound(namespace, key)
        return found

    async def aclose(self) -> None:
        """Close the connections to Redis."""
        if self._reads is not self._redis:
            await self._reads.aclose()
        await self._redis.aclose()

    async def keys(
        self, namespace: str, prefix: str, page_size: int, after: str | None = None
    ) -> tuple[list[str], str]:
        """One page of live keys with `prefix` (after the key `after`, which starts with it),
        and the token of the next page ('' at the end)."""
        # The edge refuses a page token of another prefix; this only guards the Python API.
        assert after is None or after.startswith(prefix), "the cursor is outside the prefix"
        ns = self._ns(namespace)
        start = b"(" + after.encode() if after is not None else b"[" + prefix.encode()
        # No valid UTF-8 string contains byte 0xff, so prefix + 0xff bounds every key with prefix.
        stop = b"[" + prefix.encode() + b"\xff" if prefix else b"+"
        async with self._errors("keys"):
            reply = await self._scripts.keys_page(
                self._redis, [ns.idx, ns.exp], [start, stop, page_size, _KEYS_SCAN_ROUNDS]
            )
        # The reply is the page's keys, then the last key examined ('' at the end).
        return [text(k) for k in reply[:-1]], encode_page_token(
            text(reply[-1]) or None, keys_listing(namespace)
        )

    async def delete(self, namespace: str, key: str, if_version: int | None) -> bool:
        """Remove the entry; True if a live one went. VersionConflict on a CAS miss."""
        ns = self._ns(namespace)
        args = [
            self._settings.change_log_max,
            self._settings.sweep_batch,
            key,
            "" if if_version is None else if_version,
        ]
        async with self._errors("delete"):
            reply = await self._scripts.delete(
                self._redis, ns.as_list() + [K.entry(namespace, key)], args
            )
        if text(reply[0]) == "conflict":
            raise VersionConflict(key, if_version or 0, int(reply[2]))
        return bool(int(reply[1]))

    async def touch(self, namespace: str, keys: Sequence[str]) -> list[Renewed | None]:
        """Restart the TTL of each entry that has one (touch.lua); per key, the live entry's
        version and expiry, None when absent or expired. One atomic step for all keys."""
        ns = self._ns(namespace)
        args = [self._settings.change_log_max, self._settings.sweep_batch, *keys]
        async with self._errors("touch"):
            reply = await self._scripts.touch(
                self._redis, ns.as_list() + [K.entry(namespace, k) for k in keys], args
            )
        return [
            Renewed(key, int(version), int(expires)) if int(version) else None
            for key, (version, expires) in zip(keys, reply, strict=True)
        ]

    async def stats(self, namespace: str) -> NamespaceStats:
        """Totals over live entries (expired ones are swept first so they do not count)."""
        ns = self._ns(namespace)
        limit = max(self._settings.sweep_batch, 1000)
        async with self._errors("stats"):
            while (await self.expiry.sweep(namespace, limit))[0] >= limit:
                pass
            raw = await self._redis.hgetall(ns.stats)
        values = {text(k): int(v) for k, v in raw.items()}
        return NamespaceStats(
            entries=values.get("entries", 0),
            original_tokens=values.get("orig_tokens", 0),
            compressed_tokens=values.get("comp_tokens", 0),
            bytes_stored=values.get("bytes", 0),
        )

    async def clear(self, namespace: str) -> int:
        """Remove every entry of the namespace, chunk by atomic chunk; returns how many lived."""
        ns = self._ns(namespace)
        removed = 0
        async with self._errors("clear"):
            # Bounded: writers racing with Clear cannot keep it looping forever.
            rounds = int(await self._redis.hlen(ns.sizes)) // _CLEAR_CHUNK + 2
            for _ in range(rounds):
                _, found = await self._redis.hscan(ns.sizes, 0, count=_CLEAR_CHUNK)
                chunk = [text(k) for k in found][:_CLEAR_CHUNK]
                if not chunk:
                    break
                removed += int(
                    await self._scripts.clear_chunk(
                        self._redis,
                        ns.as_list() + [K.entry(namespace, k) for k in chunk],
                        [self._settings.change_log_max, len(chunk), *chunk],
                    )
                )
        return removed

    async def missing_embeddings(self, namespace: str, hashes: Sequence[str]) -> list[bool]:
        """For each content hash, True when no vector of the current model is stored."""
        if not hashes:
            return []
        async with self._errors("missing_embeddings"):
            flags = await self._scripts.emb_missing(
                self._redis, [self._ns(namespace).emb], list(hashes)
            )
        return [bool(int(f)) for f in flags]

    async def embeddings(self, namespace: str, hashes: Sequence[str]) -> list[bytes | None]:
        """Stored vectors (float32 bytes) of the current model, None where missing."""
        if not hashes:
            return []
        async with self._errors("embeddings"):
            return list(await self._redis.hmget(self._ns(namespace).emb, list(hashes)))

    async def set_embeddings(self, namespace: str, items: Sequence[tuple[str, bytes, str]]) -> int:
        """Store (content hash, vector, key) triples computed after the write; logs 'embed'."""
        if not items:
            return 0
        args: list[Any] = [self._settings.change_log_max]
        for h, vector, key in items:
            args += [h, vector, key]
        async with self._errors("set_embeddings"):
            return int(
                await self._scripts.set_embeddings(self._redis, self._ns(namespace).as_list(), args)
            )

    async def namespaces(
        self, page: NamespacesPage, readable: Callable[[str], bool] | None = None
    ) -> tuple[list[NamespaceTotals], str]:
        """One page of the namespaces with live entries (and that `readable` allows), and the
        token of the next page ('' at the end)."""
        # The edge refuses a page token of another prefix; this only guards the Python API.
        assert page.after is None or page.after.startswith(page.prefix), "cursor outside prefix"
        now_ms = await self.redis_now_ms()
        async with self._errors("namespaces"):
            return await self._registry.page(
                page.prefix, page.page_size, page.after, now_ms, readable
            )

    async def all_keys(self, namespace: str) -> list[str]:
        """Every indexed key (expired ones included until swept; callers filter by expiry)."""
        async with self._errors("all_keys"):
            raw = await self._redis.zrange(self._ns(namespace).idx, 0, -1)
        return [text(k) for k in raw]
