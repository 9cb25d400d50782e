"""EntryMeta's stored form: small, and readable whatever wrote it."""

from __future__ import annotations

import msgpack
from sharedctx_server.model import EntryMeta, Kind


def test_meta_round_trips_and_stores_only_what_differs_from_the_defaults() -> None:
    meta = EntryMeta(kind=Kind.TOOL_OUTPUT, tool_name="pytest", tags=("ci", "py"),
                     importance=0.5, original_tokens=40, compressed_tokens=12,
                     aliases=("plan",), content_hash="ab" * 32)  # fmt: skip
    assert EntryMeta.unpack(meta.pack()) == meta
    stored = msgpack.unpackb(meta.pack(), raw=False)
    assert set(stored) == {"k", "tn", "tg", "i", "ot", "ct", "fa", "h"}
    assert EntryMeta.unpack(EntryMeta().pack()) == EntryMeta()


def test_meta_written_with_every_field_and_unknown_ones_still_reads() -> None:
    """Entries stored before defaults were left out carry every field; later versions may
    add fields this one does not know."""
    blob = msgpack.packb({"k": 2, "r": "", "a": "", "tn": "", "tg": [], "i": 0.0, "th": "",
                          "ot": 3, "ct": 3, "ob": 9, "cb": 9, "cm": "none", "er": 0.0,
                          "fm": 0, "fa": [], "rf": [], "h": "", "zz": "from the future"},
                         use_bin_type=True)  # fmt: skip
    meta = EntryMeta.unpack(blob)
    assert meta == EntryMeta(kind=Kind.TOOL_OUTPUT, original_tokens=3, compressed_tokens=3,
                             original_bytes=9, compressed_bytes=9)  # fmt: skip
