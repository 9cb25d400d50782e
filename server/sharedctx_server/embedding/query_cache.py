"""Query vectors: agents repeat their queries turn after turn, so an LRU saves the model call."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from sharedctx_server.embedding.codec import content_hash

CacheKey = tuple[str, str]


class AsyncEncoder(Protocol):
    """What the cache needs on a miss: the model id and an awaitable batch call (MicroBatcher)."""

    @property
    def model_id(self) -> str: ...

    async def embed(self, texts: Sequence[str], *, urgent: bool = False) -> NDArray[np.float32]: ...


@dataclass(frozen=True)
class QueryCacheStats:
    """Counters since construction. A query that joins an identical one in flight is a hit."""

    hits: int
    misses: int
    entries: int
    max_entries: int


class QueryCache:
    """LRU of query vectors keyed by (model id, sha256 of the text), bounded by entry count."""

    def __init__(self, encoder: AsyncEncoder, *, max_entries: int = 4096) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self._encoder = encoder
        self._max_entries = max_entries
        self._entries: collections.OrderedDict[CacheKey, NDArray[np.float32]] = (
            collections.OrderedDict()
        )
        self._inflight: dict[CacheKey, asyncio.Task[NDArray[np.float32]]] = {}
        self._hits = 0
        self._misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    async def embed_query(self, text: str) -> NDArray[np.float32]:
        """Return the query's `(dim,)` vector (read-only: it is shared), embedding it on a miss."""
        # The model id is part of the key so that no vector outlives a change of model.
        key = (self._encoder.model_id, content_hash(text))
        cached = self._entries.get(key)
        if cached is not None:
            self._entries.move_to_end(key)
            self._hits += 1
            return cached
        task = self._inflight.get(key)
        if task is None:
            self._misses += 1
            task = asyncio.ensure_future(self._fetch(key, text))
            self._inflight[key] = task
            task.add_done_callback(lambda done: self._settle(key, done))
        else:
            self._hits += 1
        # Shielded: one caller giving up must not cancel the embedding others are waiting for.
        return await asyncio.shield(task)

    def stats(self) -> QueryCacheStats:
        """Return a snapshot of the counters."""
        return QueryCacheStats(
            hits=self._hits,
            misses=self._misses,
            entries=len(self._entries),
            max_entries=self._max_entries,
        )

    async def _fetch(self, key: CacheKey, text: str) -> NDArray[np.float32]:
        # Urgent: a Fit waits on this, while Put texts can queue a little longer.
        vector: NDArray[np.float32] = (await self._encoder.embed([text], urgent=True))[0]
        vector.setflags(write=False)
        self._entries[key] = vector
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
        return vector

    def _settle(self, key: CacheKey, task: asyncio.Task[NDArray[np.float32]]) -> None:
        self._inflight.pop(key, None)
        # Mark the error as seen: when every waiter has left, nobody else would.
        if not task.cancelled():
            task.exception()
