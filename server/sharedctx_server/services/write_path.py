"""The write path of Put and PutMany: derive, embed, store atomically (requests arrive
validated by the edge)."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import NewEntry, Stamp
from ..state.store import Store, VectorsGone
from .derive import EntryDeriver
from .entry_embeddings import EntryEmbeddings


class WritePath:
    """One call writes a batch: all entries or none, each Fit-ready per its embed mode."""

    def __init__(self, deriver: EntryDeriver, embeddings: EntryEmbeddings, store: Store) -> None:
        self._deriver = deriver
        self._embeddings = embeddings
        self._store = store

    async def write(
        self, namespace: str, validated: Sequence[NewEntry]
    ) -> tuple[list[NewEntry], list[Stamp]]:
        """Derive, embed (SYNC items) and store atomically; ASYNC items are embedded after."""
        entries = await self._deriver.derive(validated)
        is_async = [e.embed_later for e in entries]
        now = [e for e, later in zip(entries, is_async, strict=True) if not later]
        vectors_now = await self._embeddings.vectors_for_put(namespace, now)
        by_key = dict(zip((e.key for e in now), vectors_now, strict=True))
        # A SYNC entry without a vector here relies on the one stored for its text.
        stored = [
            not later and by_key[e.key] is None for e, later in zip(entries, is_async, strict=True)
        ]
        try:
            stamps = await self._store.put_many(
                namespace, entries, [by_key.get(e.key) for e in entries], stored
            )
        except VectorsGone:
            # A delete took those vectors with their last entry since we looked (rare):
            # send every vector this write relies on, which cannot be refused for that.
            relied = [e for e, flag in zip(entries, stored, strict=True) if flag]
            fresh = await self._embeddings.vectors_now(relied)
            by_key.update(zip((e.key for e in relied), fresh, strict=True))
            stamps = await self._store.put_many(
                namespace, entries, [by_key.get(e.key) for e in entries]
            )
        self._embeddings.stored(namespace, now)
        later = [e for e, flag in zip(entries, is_async, strict=True) if flag]
        if later:
            self._embeddings.embed_later(namespace, later)
        return entries, stamps
