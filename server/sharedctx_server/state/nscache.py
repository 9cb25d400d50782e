"""Per-namespace Fit arrays kept in memory and current from the namespace's change log.

A Fit first asks the change log for records after the position its state reflects (one
XRANGE; Redis's clock comes from the store's sampled offset, see redis_clock.py): in steady
state that is the only Redis command, whatever the namespace's size. Records name the keys
that changed; those entries (and their vectors) are fetched and applied. A gap in the
namespace versions means the capped log was trimmed past this replica's position: the state
is reloaded from the entries themselves.

Read-your-writes across replicas: a Put is acknowledged only after its atomic script
appended its change-log record, so a Fit that starts later reads that record here.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ..embedding.codec import from_bytes
from ..fit.segments import Segments
from ..model import Kind, StoredEntry
from ..offload import off_the_loop_if, to_the_end, worth_a_thread
from ..segment import Segmenter
from .nsstate import NamespaceState
from .records import Change
from .store import Store

log = logging.getLogger(__name__)

# Change records read per round trip while catching up.
_SYNC_BATCH = 5000
# Entries fetched per round trip while loading or applying changes.
_FETCH_CHUNK = 500

MissingVectors = Callable[[str, list[tuple[str, str]]], None]


@dataclass
class CacheStats:
    """Counters for metrics and tests."""

    hits: int = 0  # Fits served from an existing state
    loads: int = 0  # full loads (first use, eviction, or a trimmed log)
    evictions: int = 0
    applied: int = 0  # change records applied


@dataclass
class Synced:
    """A namespace's state, current as of Redis time `now_ms`."""

    state: NamespaceState
    now_ms: int


class NamespaceCache:
    """LRU of namespace states, bounded by the total number of cached entries."""

    def __init__(
        self,
        store: Store,
        dim: int,
        *,
        max_entries: int = 1_000_000,
        on_missing_vectors: MissingVectors | None = None,
        segmenter: Segmenter | None = None,
    ) -> None:
        self._store = store
        self._dim = dim
        self._max_entries = max_entries
        self._states: OrderedDict[str, NamespaceState] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._on_missing = on_missing_vectors
        # Cuts entries stored without segments (written before excerpts, or by a server with
        # them off), so that they can come back as excerpts too; None: excerpts are off here.
        self._segmenter = segmenter
        self.stats = CacheStats()

    @asynccontextmanager
    async def synced(self, namespace: str) -> AsyncIterator[Synced]:
        """Hold the namespace's state, brought up to date, until the block ends."""
        lock = self._locks.setdefault(namespace, asyncio.Lock())
        async with lock:
            # To its end even if this caller's deadline passes meanwhile: a catch-up cut
            # short would leave the state past records it never applied, or a thread still
            # indexing it when the next caller takes the lock.
            synced = await to_the_end(self._sync(namespace))
            try:
                yield synced
            finally:
                self._evict(keep=namespace)

    async def _sync(self, namespace: str) -> Synced:
        """The namespace's state, loaded or caught up, and Redis's time of the catch-up."""
        state = self._states.get(namespace)
        if state is None:
            state = await self._load(namespace)
        else:
            self.stats.hits += 1
        now_ms, state = await self._catch_up(namespace, state)
        self._states[namespace] = state
        self._states.move_to_end(namespace)
        return Synced(state, now_ms)

    def drop(self, namespace: str) -> None:
        """Forget a namespace's state (it is reloaded on next use)."""
        self._states.pop(namespace, None)

    @property
    def cached_entries(self) -> int:
        """Entries held across all cached namespaces."""
        return sum(s.live for s in self._states.values())

    def _evict(self, keep: str) -> None:
        while self.cached_entries > self._max_entries and len(self._states) > 1:
            victim = next(iter(self._states))
            if victim == keep:
                self._states.move_to_end(victim)
                victim = next(iter(self._states))
            del self._states[victim]
            lock = self._locks.get(victim)
            if lock is not None and not lock.locked():
                del self._locks[victim]  # locks of evicted namespaces would pile up otherwise
            self.stats.evictions += 1
            log.info("namespace cache: evicted %s", victim)

    async def _load(self, namespace: str) -> NamespaceState:
        self.stats.loads += 1
        state = NamespaceState(self._dim)
        # Position first: a write landing during the load is then both loaded and replayed,
        # and replaying refetches the entry, so applying it twice is harmless.
        state.last_id, state.ns_version = await self._store.log.position(namespace)
        keys = await self._store.all_keys(namespace)
        await self._refresh(namespace, state, keys)
        return state

    async def _catch_up(self, namespace: str, state: NamespaceState) -> tuple[int, NamespaceState]:
        while True:
            now_ms, records = await self._store.log.after(namespace, state.last_id, _SYNC_BATCH)
            if not records:
                return now_ms, state
            if records[0].namespace_version != state.ns_version + 1:
                log.info("namespace cache: %s change log trimmed past us; reloading", namespace)
                state = await self._load(namespace)
                continue
            await self._apply(namespace, state, records)
            if len(records) < _SYNC_BATCH:
                return now_ms, state

    async def _apply(
        self, namespace: str, state: NamespaceState, records: Sequence[Change]
    ) -> None:
        touched: dict[str, None] = {}
        renewed: dict[str, int] = {}  # touched only in expiry (Touch): no read needed
        for record in records:
            if record.op == "clear":
                # Entries written after the clear come back through their own records.
                state.reset()
                touched.clear()
                renewed.clear()
            elif record.op == "touch" and record.expires_ms and record.key not in touched:
                renewed[record.key] = record.expires_ms
            elif record.key:
                touched[record.key] = None
                renewed.pop(record.key, None)
        for key, expires_ms in renewed.items():
            if not state.renew(key, expires_ms):
                touched[key] = None  # not loaded here: read it like any change
        state.last_id = records[-1].id
        state.ns_version = records[-1].namespace_version
        self.stats.applied += len(records)
        await self._refresh(namespace, state, list(touched))

    async def _refresh(self, namespace: str, state: NamespaceState, keys: Sequence[str]) -> None:
        """Re-read `keys` from Redis and put or remove each in `state`."""
        fresh: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(keys), _FETCH_CHUNK):
            chunk = keys[start : start + _FETCH_CHUNK]
            entries = await self._store.get_many(namespace, chunk, True)
            found = [e for e in entries if e is not None]
            if self._segmenter is not None and any(map(self._uncut, found)):
                found = await asyncio.to_thread(self._cut, found)
            vectors = await self._store.embeddings(
                namespace, [e.meta.content_hash or "-" for e in found]
            )
            gone = [key for key, entry in zip(chunk, entries, strict=True) if entry is None]
            read = [(e, self._vector(raw)) for e, raw in zip(found, vectors, strict=True)]
            # Indexing a large entry's terms and segments takes a while (a 200,000-line output
            # held every other RPC for 3.5 s on the event loop); the namespace's lock, held
            # here, keeps its Fits out meanwhile, as it does while one runs in a thread.
            worth = worth_a_thread(e.content for e in found)
            await off_the_loop_if(worth, _apply_reads, state, gone, read)
            fresh.update((e.meta.content_hash, v) for e, v in read if v is not None)
        missing = state.missing_vectors(shared=fresh)
        if missing and self._on_missing is not None:
            self._on_missing(namespace, missing)

    def _uncut(self, entry: StoredEntry) -> bool:
        """Whether `entry` came without segments though this server would cut it, or with
        segments cut by older rules (whose costs may not match what an excerpt shows)."""
        assert self._segmenter is not None
        meta = entry.meta
        if meta.segments:
            return not Segments.is_current(meta.segments)
        return (
            meta.kind is not Kind.MESSAGE
            and meta.original_tokens >= self._segmenter.config.min_tokens
        )

    def _cut(self, entries: list[StoredEntry]) -> list[StoredEntry]:
        """`entries` with segments for those stored without (off the event loop: a long
        entry takes a while to cut)."""
        assert self._segmenter is not None
        out = []
        for entry in entries:
            if self._uncut(entry):
                segments = self._segmenter(
                    entry.content,
                    kind=entry.meta.kind.hint,
                    tool_name=entry.meta.tool_name or None,
                    original_tokens=entry.meta.original_tokens,
                )
                packed = segments.pack() if segments is not None else b""
                if packed != entry.meta.segments:
                    entry = replace(entry, meta=replace(entry.meta, segments=packed))
            out.append(entry)
        return out

    def _vector(self, raw: bytes | None) -> npt.NDArray[np.float32] | None:
        if raw is None:
            return None
        try:
            return from_bytes(raw, self._dim)
        except ValueError:
            return None  # a vector of another dimension: treat as not embedded


def _apply_reads(
    state: NamespaceState,
    gone: Sequence[str],
    read: Sequence[tuple[StoredEntry, npt.NDArray[np.float32] | None]],
) -> None:
    """Remove the keys that are `gone` from `state`, and put each entry `read` with its vector."""
    for key in gone:
        state.remove(key)
    for entry, vector in read:
        state.put(entry, entry.content, vector)
