"""Entry embeddings: computed once per distinct text and model, at Put or soon after.

SYNC puts embed before the write, so the entry is Fit-ready when Put returns; ASYNC puts
write first and embed in the background. Either way a vector is stored under the entry's
content hash and the model id, so an unchanged overwrite or a second entry with the same text
reuses it. Entries left without a vector (an ASYNC put interrupted by a crash, a change of
model) are found by the namespace cache and embedded lazily, or all at once by Reembed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from ..embedding.batcher import MicroBatcher
from ..embedding.codec import content_hash, to_bytes
from ..errors import SharedCtxError
from ..model import NewEntry
from ..state.store import Store

log = logging.getLogger(__name__)

# Texts per model request from background work, leaving queue room for interactive calls.
_BACKGROUND_CHUNK = 64
# Entries per Reembed round (one progress message each).
_REEMBED_CHUNK = 128
# Texts remembered as having a stored vector, across namespaces (about 150 bytes each).
_SEEN_TEXTS = 65_536


@dataclass(frozen=True)
class ReembedStep:
    """Progress of a re-embedding run."""

    done: int
    total: int
    computed: int


class EntryEmbeddings:
    """Vectors for written entries, via the shared micro-batcher."""

    def __init__(self, store: Store, batcher: MicroBatcher) -> None:
        self._store = store
        self._batcher = batcher
        self._tasks: set[asyncio.Task[None]] = set()
        self._scheduled: set[tuple[str, str]] = set()  # (namespace, content hash) in flight
        # (namespace, content hash) whose vector was stored when last looked at, newest last.
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    @property
    def model_id(self) -> str:
        """The model whose vectors this service writes."""
        return self._batcher.model_id

    async def vectors_for_put(
        self, namespace: str, entries: Sequence[NewEntry]
    ) -> list[bytes | None]:
        """Vectors to write with `entries` (None where the store already has one)."""
        missing = await self._missing(namespace, entries)
        if not missing:
            return [None] * len(entries)
        computed = await self._compute(missing)
        return [computed.get(e.meta.content_hash) for e in entries]

    def stored(self, namespace: str, entries: Sequence[NewEntry]) -> None:
        """A write just stored (or relied on) these entries' vectors: remember their texts."""
        for e in entries:
            self._seen[(namespace, e.meta.content_hash)] = None
            self._seen.move_to_end((namespace, e.meta.content_hash))
        while len(self._seen) > _SEEN_TEXTS:
            self._seen.popitem(last=False)

    async def vectors_now(self, entries: Sequence[NewEntry]) -> list[bytes]:
        """Vectors for `entries`, computed whatever the store holds (for a write whose stored
        vectors went away between the check and the write)."""
        computed = await self._compute({e.meta.content_hash: e.embedded_text for e in entries})
        return [computed[e.meta.content_hash] for e in entries]

    async def _compute(self, texts_by_hash: dict[str, str]) -> dict[str, bytes]:
        hashes, texts = list(texts_by_hash), list(texts_by_hash.values())
        computed: dict[str, bytes] = {}
        step = self._batcher.max_queued
        for start in range(0, len(texts), step):
            vectors = await self._batcher.embed(texts[start : start + step])
            computed.update(
                (h, to_bytes(v)) for h, v in zip(hashes[start : start + step], vectors, strict=True)
            )
        return computed

    def embed_later(self, namespace: str, entries: Sequence[NewEntry]) -> None:
        """ASYNC puts: embed after the write has been acknowledged."""
        items = [(e.key, e.meta.content_hash) for e in entries]
        self.schedule(namespace, items)

    def schedule(self, namespace: str, items: Sequence[tuple[str, str]]) -> None:
        """Embed the (key, content hash) entries in the background, once per hash."""
        fresh = [(k, h) for k, h in items if (namespace, h) not in self._scheduled]
        if not fresh:
            return
        self._scheduled.update((namespace, h) for _, h in fresh)
        task = asyncio.create_task(self._background(namespace, fresh))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Cancel background work (entries stay re-embeddable: their vectors are missing)."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def idle(self) -> None:
        """Wait until no background embedding is running (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def reembed(self, namespace: str, force: bool) -> AsyncIterator[ReembedStep]:
        """Embed every entry of the namespace missing a vector of the current model (all of
        them with `force`), yielding progress after each chunk."""
        keys = await self._store.all_keys(namespace)
        done = computed = 0
        yield ReembedStep(0, len(keys), 0)
        for start in range(0, len(keys), _REEMBED_CHUNK):
            chunk = keys[start : start + _REEMBED_CHUNK]
            computed += await self._embed_keys(namespace, chunk, force)
            done += len(chunk)
            yield ReembedStep(done, len(keys), computed)

    async def _missing(self, namespace: str, entries: Sequence[NewEntry]) -> dict[str, str]:
        by_hash = {e.meta.content_hash: e.embedded_text for e in entries}
        # Texts this process saw stored a moment ago skip the check: the write verifies
        # them atomically anyway (VectorsGone), so a stale belief costs a retry, not a miss.
        unsure = [h for h in by_hash if (namespace, h) not in self._seen]
        flags = await self._store.missing_embeddings(namespace, unsure) if unsure else []
        return {h: by_hash[h] for h, miss in zip(unsure, flags, strict=True) if miss}

    async def _background(self, namespace: str, items: list[tuple[str, str]]) -> None:
        try:
            for start in range(0, len(items), _BACKGROUND_CHUNK):
                chunk = items[start : start + _BACKGROUND_CHUNK]
                await self._embed_keys(namespace, [k for k, _ in chunk], force=False)
        except (SharedCtxError, OSError) as exc:
            # The entries keep their missing vectors; the next cache sync schedules them again.
            log.warning("background embedding in %s failed: %s", namespace, exc)
        finally:
            self._scheduled.difference_update((namespace, h) for _, h in items)

    async def _embed_keys(self, namespace: str, keys: Sequence[str], force: bool) -> int:
        """Embed the current texts of `keys`; returns how many vectors were computed."""
        # The compressed form (or the original, when there is none) is the embedded text.
        entries = [e for e in await self._store.get_many(namespace, keys, False) if e]
        texts: dict[str, tuple[str, str]] = {}
        for entry in entries:
            h = content_hash(entry.content)
            if h == entry.meta.content_hash:
                texts.setdefault(h, (entry.content, entry.key))
        if not force:
            flags = await self._store.missing_embeddings(namespace, list(texts))
            texts = {h: v for (h, v), miss in zip(texts.items(), flags, strict=True) if miss}
        if not texts:
            return 0
        vectors = await self._batcher.embed([t for t, _ in texts.values()])
        await self._store.set_embeddings(
            namespace,
            [
                (h, to_bytes(v), key)
                for (h, (_, key)), v in zip(texts.items(), vectors, strict=True)
            ],
        )
        return len(texts)
