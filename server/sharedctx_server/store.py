"""The Redis-backed entry store. Every write is one atomic Lua step; keys come from `keys`."""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from . import keys as K
from .errors import InvalidArgument, NotFound, StoreUnavailable, VersionConflict
from .model import EntryMeta, KeysPage, NamespaceStats, NewEntry, Stamp, StoredEntry
from .scripts import Scripts
from .settings import Settings

# Keys' page scans stop after this many rounds of expired members and hand back a cursor.
_KEYS_SCAN_ROUNDS = 8
# Clear removes entries in chunks of this many keys per atomic step.
_CLEAR_CHUNK = 500


@asynccontextmanager
async def redis_errors() -> AsyncIterator[None]:
    """Turn connection-level Redis failures into StoreUnavailable."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc


class Store:
    """Entries of many namespaces in one Redis (or Redis Cluster)."""

    def __init__(self, redis: Any, settings: Settings, scripts: Scripts | None = None) -> None:
        self._redis = redis
        self._settings = settings
        self._scripts = scripts or Scripts.load()

    @property
    def redis(self) -> Any:
        """The underlying client (for health checks and the change-log readers)."""
        return self._redis

    async def ping(self) -> bool:
        """True when Redis answers."""
        try:
            async with redis_errors():
                return bool(await self._redis.ping())
        except StoreUnavailable:
            return False

    async def put_many(self, namespace: str, entries: Sequence[NewEntry]) -> list[Stamp]:
        """Write all entries atomically; raise VersionConflict (writing nothing) on a CAS miss."""
        ns = K.namespace(namespace)
        keys = ns.as_list() + [K.entry(namespace, e.key) for e in entries]
        args: list[Any] = [self._settings.change_log_max, self._settings.sweep_batch, len(entries)]
        for e in entries:
            has_comp = e.compressed is not None
            args += [
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
            ]
        async with redis_errors():
            reply = await self._scripts.put_many(self._redis, keys, args)
        status = _text(reply[0])
        if status == "conflict":
            item = entries[int(reply[1]) - 1]
            raise VersionConflict(item.key, item.if_version or 0, int(reply[2]))
        return [Stamp(*(int(x) for x in row)) for row in reply[1]]

    async def get_many(
        self, namespace: str, keys: Sequence[str], full: bool
    ) -> list[StoredEntry | None]:
        """Entries in `keys` order; None where absent or expired."""
        if not keys:
            return []
        redis_keys = [K.entry(namespace, k) for k in keys]
        async with redis_errors():
            rows = await self._scripts.get_many(self._redis, redis_keys, ["1" if full else "0"])
        return [None if not row else _entry(k, row) for k, row in zip(keys, rows, strict=True)]

    async def get(self, namespace: str, key: str, full: bool) -> StoredEntry:
        """One entry, or NotFound."""
        (found,) = await self.get_many(namespace, [key], full)
        if found is None:
            raise NotFound(namespace, key)
        return found

    async def keys(
        self, namespace: str, prefix: str, page_size: int, page_token: str
    ) -> tuple[list[str], str]:
        """One page of live keys with `prefix`, and the token of the next page ('' at the end)."""
        ns = K.namespace(namespace)
        after = decode_page_token(page_token)
        if after is not None and not after.startswith(prefix):
            raise InvalidArgument("page_token", "belongs to a listing with a different prefix")
        start = b"(" + after.encode() if after is not None else b"[" + prefix.encode()
        # No valid UTF-8 string contains byte 0xff, so prefix + 0xff bounds every key with prefix.
        stop = b"[" + prefix.encode() + b"\xff" if prefix else b"+"
        async with redis_errors():
            reply = await self._scripts.keys_page(
                self._redis, [ns.idx, ns.exp], [start, stop, page_size, _KEYS_SCAN_ROUNDS]
            )
        page = KeysPage([_text(k) for k in reply[:-1]], _text(reply[-1]) or None)
        return page.keys, encode_page_token(page.cursor)

    async def delete(self, namespace: str, key: str, if_version: int | None) -> bool:
        """Remove the entry; True if a live one went. VersionConflict on a CAS miss."""
        ns = K.namespace(namespace)
        args = [
            self._settings.change_log_max,
            self._settings.sweep_batch,
            key,
            "" if if_version is None else if_version,
        ]
        async with redis_errors():
            reply = await self._scripts.delete(
                self._redis, ns.as_list() + [K.entry(namespace, key)], args
            )
        if _text(reply[0]) == "conflict":
            raise VersionConflict(key, if_version or 0, int(reply[2]))
        return bool(int(reply[1]))

    async def stats(self, namespace: str) -> NamespaceStats:
        """Totals over live entries (expired ones are swept first so they do not count)."""
        ns = K.namespace(namespace)
        limit = max(self._settings.sweep_batch, 1000)
        async with redis_errors():
            while int(
                await self._scripts.sweep(
                    self._redis, ns.as_list(), [self._settings.change_log_max, limit]
                )
            ) >= limit:
                pass
            raw = await self._redis.hgetall(ns.stats)
        values = {_text(k): int(v) for k, v in raw.items()}
        return NamespaceStats(
            entries=values.get("entries", 0),
            original_tokens=values.get("orig_tokens", 0),
            compressed_tokens=values.get("comp_tokens", 0),
            bytes_stored=values.get("bytes", 0),
        )

    async def clear(self, namespace: str) -> int:
        """Remove every entry of the namespace, chunk by atomic chunk; returns how many were live."""
        ns = K.namespace(namespace)
        removed = 0
        async with redis_errors():
            # Bounded: writers racing with Clear cannot keep it looping forever.
            rounds = int(await self._redis.hlen(ns.sizes)) // _CLEAR_CHUNK + 2
            for _ in range(rounds):
                _, found = await self._redis.hscan(ns.sizes, 0, count=_CLEAR_CHUNK)
                chunk = [_text(k) for k in found][:_CLEAR_CHUNK]
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


def encode_page_token(cursor: str | None) -> str:
    """Opaque page token for a cursor key ('' when there is no next page)."""
    if cursor is None:
        return ""
    return base64.urlsafe_b64encode(cursor.encode("utf-8")).decode("ascii")


def decode_page_token(token: str) -> str | None:
    """Inverse of encode_page_token; InvalidArgument for a token we did not issue."""
    if not token:
        return None
    try:
        cursor = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True)
        if cursor:
            return cursor.decode("utf-8")
    except (ValueError, binascii.Error, UnicodeError):
        pass
    raise InvalidArgument("page_token", "is not a token returned by Keys")


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _entry(key: str, row: Sequence[Any]) -> StoredEntry:
    version, created, updated, event, expires, meta, text, is_full = row
    return StoredEntry(
        key=key,
        stamp=Stamp(
            version=int(version),
            created_ms=int(created),
            updated_ms=int(updated),
            expires_ms=int(expires),
            event_ms=int(event),
        ),
        meta=EntryMeta.unpack(meta),
        content=_text(text),
        full=_text(is_full) == "1",
    )
