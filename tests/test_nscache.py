"""The namespace cache's view of stored entries: segments cut by older rules are cut again."""

from __future__ import annotations

from sharedctx_server.fit.segments import Segments
from sharedctx_server.model import EntryMeta, Kind, Stamp, StoredEntry
from sharedctx_server.segment import DEFAULT_SEGMENTS, Segmenter
from sharedctx_server.state.nscache import NamespaceCache
from sharedctx_server.tokens import TokenCounter


def test_the_cache_cuts_again_an_entry_whose_segments_older_rules_counted() -> None:
    counter = TokenCounter("o200k_base")
    segmenter = Segmenter(counter.count, DEFAULT_SEGMENTS)
    dump = " ".join(f"field{i}={i * 7919 % 100003}" for i in range(1500))
    text = "\n".join([f"INFO line {i} of the api log" for i in range(80)] + [f"ERROR {dump}"])
    tokens = counter.count(text)
    current = segmenter(text, kind="log", tool_name=None, original_tokens=tokens)
    assert current is not None
    older = bytes([2]) + current.pack()[1:]  # what a server before version 3 stored
    cache = NamespaceCache(store=None, dim=4, segmenter=segmenter)  # type: ignore[arg-type]

    def stored(segments: bytes) -> StoredEntry:
        meta = EntryMeta(kind=Kind.LOG, original_tokens=tokens, segments=segments)
        return StoredEntry(key="k", stamp=Stamp(1, 1, 1, 0, 1, 1), meta=meta, content=text)

    [recut] = cache._cut([stored(older)])
    assert Segments.is_current(recut.meta.segments)
    assert recut.meta.segments == current.pack()
    [kept] = cache._cut([stored(current.pack())])
    assert kept.meta.segments == current.pack()
