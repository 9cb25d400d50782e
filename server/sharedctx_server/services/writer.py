"""Turn Put requests into validated, token-counted entries ready for one atomic store write."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from sharedctx.v1 import sharedctx_pb2 as pb

from ..compress import compress, looks_binary
from ..edge import validation as V
from ..edge.convert import caller_meta, event_ms_from_proto, ttl_ms
from ..embedding.codec import content_hash
from ..errors import InvalidArgument, LimitExceeded
from ..fit.factors import error_indicator, forward_references
from ..model import NewEntry
from ..segment import Segmenter
from ..settings import Settings
from ..tokens import TokenCounter

# Token counting of larger batches moves off the event loop so other RPCs keep flowing.
_OFFLOAD_BYTES = 64 * 1024
_EMBED_MODES = (pb.EMBED_UNSPECIFIED, pb.EMBED_SYNC, pb.EMBED_ASYNC)


@contextmanager
def _fields_of(path: str) -> Iterator[None]:
    """Errors raised inside name their field under `path` (a PutMany's `entries[i]`), so the
    per-field checks need not know whether they look at a Put or at one entry of a batch."""
    if not path:
        yield
        return
    try:
        yield
    except InvalidArgument as exc:
        raise InvalidArgument(f"{path}.{exc.field}", exc.rule) from None
    except LimitExceeded as exc:
        raise LimitExceeded(exc.limit, f"{path}: {exc}", exc.retry_after_s) from None


class EntryWriter:
    """Validates Put requests and fills in what the server derives (token counts, forms)."""

    def __init__(
        self, settings: Settings, tokens: TokenCounter, segmenter: Segmenter | None = None
    ) -> None:
        self._settings = settings
        self._tokens = tokens
        # None: excerpts are off on this server, entries are not cut.
        self._segmenter = segmenter

    def check(
        self, namespace: str, requests: Sequence[pb.PutRequest], batch: bool
    ) -> list[NewEntry]:
        """Validate every request (all before any write) and build entries without token counts.

        `batch`: the requests are a PutMany's `entries`, so errors name `entries[i].<field>`
        (a Put's name the field alone), whatever the number of entries."""
        limits = self._settings.limits
        V.check_batch(len(requests), limits)
        seen: set[str] = set()
        entries = []
        for i, req in enumerate(requests):
            with _fields_of(f"entries[{i}]" if batch else ""):
                entry = self._check_one(req)
                if entry.key in seen:
                    raise InvalidArgument("key", f"{entry.key!r} appears twice in one PutMany")
            seen.add(entry.key)
            entries.append(entry)
        total = sum(e.stored_bytes for e in entries)
        if total > limits.max_batch_bytes:
            raise LimitExceeded(
                "max_batch_bytes",
                f"the batch holds {total} bytes of content; the limit is {limits.max_batch_bytes}",
            )
        return entries

    def _check_one(self, req: pb.PutRequest) -> NewEntry:
        limits = self._settings.limits
        if req.embed not in _EMBED_MODES:
            raise InvalidArgument("embed", f"unknown value {req.embed}")
        key = V.check_key(req.key, limits)
        size = V.check_content(req.content, limits)
        if looks_binary(req.content):
            raise InvalidArgument(
                "content",
                "looks binary (NUL bytes or mostly control characters); store text, "
                "e.g. base64-encode binary data",
            )
        compressed = req.compressed if req.HasField("compressed") else None
        comp_size = 0 if compressed is None else V.check_content(compressed, limits, "compressed")
        meta = replace(
            caller_meta(req, limits),
            original_bytes=size,
            compressed_bytes=size if compressed is None else comp_size,
            compressor="none" if compressed is None else "caller",
        )
        return NewEntry(
            key=key,
            content=req.content,
            compressed=compressed,
            meta=meta,
            ttl_ms=ttl_ms(req, self._settings),
            event_ms=event_ms_from_proto(req),
            if_version=V.check_if_version(req.if_version if req.HasField("if_version") else None),
        )

    async def prepare(
        self, namespace: str, requests: Sequence[pb.PutRequest], batch: bool
    ) -> list[NewEntry]:
        """check() plus what the server derives: token counts, Fit factors, content hash."""
        entries = self.check(namespace, requests, batch)
        if sum(len(e.content) for e in entries) > _OFFLOAD_BYTES:
            return await asyncio.to_thread(self._derive_all, entries)
        return self._derive_all(entries)

    def _derive_all(self, entries: list[NewEntry]) -> list[NewEntry]:
        return [self._derive(e) for e in entries]

    def _derive(self, entry: NewEntry) -> NewEntry:
        kind = entry.meta.kind.hint
        if entry.compressed is None:
            # The server's own compressed form; a caller-supplied one always wins.
            result = compress(
                entry.content,
                count_tokens=self._tokens.count,
                kind=kind,
                tool_name=entry.meta.tool_name or None,
            )
            original, compressed = result.original_tokens, result.compressed_tokens
            if result.compressor != "none":
                entry = replace(
                    entry,
                    compressed=result.text,
                    meta=replace(
                        entry.meta,
                        compressor=result.compressor,
                        compressed_bytes=len(result.text.encode("utf-8")),
                    ),
                )
        else:
            original = self._tokens.count(entry.content)
            compressed = self._tokens.count(entry.compressed)
        refs = forward_references(entry.content)
        segments = None
        if self._segmenter is not None:
            segments = self._segmenter(
                entry.content,
                kind=kind,
                tool_name=entry.meta.tool_name or None,
                original_tokens=original,
            )
        meta = replace(
            entry.meta,
            original_tokens=original,
            compressed_tokens=compressed,
            error_score=error_indicator(entry.content),
            ref_markers=refs.markers,
            aliases=refs.aliases,
            references=refs.references,
            content_hash=content_hash(entry.embedded_text),
            segments=segments.pack() if segments is not None else b"",
        )
        return replace(entry, meta=meta)
