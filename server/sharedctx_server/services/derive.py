"""What the server derives for a validated write: token counts of both forms, its own
compressed form (unless the caller gave one), segments for excerpts, the Fit factors computed
at put time, and the content hash its embedding is stored under."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..compress import compress
from ..embedding.codec import content_hash
from ..fit.factors import error_indicator, forward_references
from ..model import NewEntry
from ..offload import off_the_loop_if, worth_a_thread
from ..segment import Segmenter
from ..tokens import TokenCounter


class EntryDeriver:
    """Fills in what the server derives for each entry of a write."""

    def __init__(self, tokens: TokenCounter, segmenter: Segmenter | None = None) -> None:
        self._tokens = tokens
        # None: excerpts are off on this server, entries are not cut.
        self._segmenter = segmenter

    async def derive(self, entries: Sequence[NewEntry]) -> list[NewEntry]:
        """The entries with what the server derives filled in."""
        # Off the event loop unless small: a 60 KiB source file held every other RPC for
        # 192 ms on it (benchmarks/put_stall.py).
        worth = worth_a_thread(e.content for e in entries)
        return await off_the_loop_if(worth, self._derive_all, entries)

    def _derive_all(self, entries: Sequence[NewEntry]) -> list[NewEntry]:
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
                compressed=entry.compressed,
            )
        error_score = error_indicator(entry.content)
        if segments is not None and len(segments):
            # error_indicator judges a long text by its head and tail; the segments were each
            # judged whole, so an error line in the middle of a long log counts as well.
            error_score = max(error_score, float(segments.errors.max()))
        meta = replace(
            entry.meta,
            original_tokens=original,
            compressed_tokens=compressed,
            error_score=error_score,
            ref_markers=refs.markers,
            aliases=refs.aliases,
            references=refs.references,
            content_hash=content_hash(entry.embedded_text),
            segments=segments.pack() if segments is not None else b"",
        )
        return replace(entry, meta=meta)
