"""The store's domain types: what a write carries in and what a read hands back."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import msgpack

# What a namespace (and a prefix of one, in quotas and grants) may hold. state/keys.py relies
# on it: no brace can end the Redis Cluster hash tag a namespace sits in.
NAMESPACE_CHARS = "[A-Za-z0-9._:/-]"


class Kind(IntEnum):
    """What an entry is (values match the proto enum)."""

    UNSPECIFIED = 0
    MESSAGE = 1
    TOOL_OUTPUT = 2
    LOG = 3
    DOCUMENT = 4
    NOTE = 5

    @property
    def hint(self) -> str | None:
        """The lowercase name compressors and segmenters take as a hint (None: unspecified)."""
        return None if self is Kind.UNSPECIFIED else self.name.lower()


@dataclass(frozen=True)
class EntryMeta:
    """Caller metadata plus what the server derives at put time; stored as one msgpack blob."""

    kind: Kind = Kind.UNSPECIFIED
    role: str = ""
    agent_id: str = ""
    tool_name: str = ""
    tags: tuple[str, ...] = ()
    importance: float = 0.0
    thread: str = ""
    original_tokens: int = 0
    compressed_tokens: int = 0
    original_bytes: int = 0
    compressed_bytes: int = 0
    compressor: str = "none"
    # Derived at put time for Fit (docs/fit.md): graded error evidence, {{ref}} markers and
    # their aliases, keys this entry references through {{<key>}}, and the sha256 of the text
    # that was embedded (the embedding's key).
    error_score: float = 0.0
    ref_markers: int = 0
    aliases: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    content_hash: str = ""
    # The full form's segments (fit.Segments.pack()), empty when it is not cut: see
    # sharedctx_server.segment.
    segments: bytes = b""

    # Short keys keep the blob small; unknown keys are ignored on read (schema tolerant).
    _WIRE = {
        "kind": "k", "role": "r", "agent_id": "a", "tool_name": "tn", "tags": "tg",
        "importance": "i", "thread": "th", "original_tokens": "ot", "compressed_tokens": "ct",
        "original_bytes": "ob", "compressed_bytes": "cb", "compressor": "cm",
        "error_score": "er", "ref_markers": "fm", "aliases": "fa", "references": "rf",
        "content_hash": "h", "segments": "sg",
    }  # fmt: skip
    _TUPLES = ("tags", "aliases", "references")

    def pack(self) -> bytes:
        """msgpack bytes of the non-default fields."""
        out: dict[str, Any] = {}
        for name, wire in self._WIRE.items():
            value = getattr(self, name)
            if value == _DEFAULTS[name]:
                continue  # unpack() gives absent fields their default: no need to store it
            if name in self._TUPLES:
                value = list(value)
            out[wire] = int(value) if name == "kind" else value
        return msgpack.packb(out, use_bin_type=True)  # type: ignore[no-any-return]

    @classmethod
    def unpack(cls, blob: bytes) -> EntryMeta:
        """Inverse of pack(); tolerant of fields added or removed later."""
        raw = msgpack.unpackb(blob, raw=False)
        values: dict[str, Any] = {}
        for name, wire in cls._WIRE.items():
            if wire in raw:
                values[name] = raw[wire]
        if "kind" in values:
            try:
                values["kind"] = Kind(values["kind"])
            except ValueError:
                values["kind"] = Kind.UNSPECIFIED
        for name in cls._TUPLES:
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)


_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in dataclasses.fields(EntryMeta) if f.name in EntryMeta._WIRE
}


@dataclass(frozen=True)
class NewEntry:
    """A validated write: everything the store needs to persist one entry."""

    key: str
    content: str
    compressed: str | None
    meta: EntryMeta
    ttl_ms: int = 0
    event_ms: int | None = None
    if_version: int | None = None
    # EMBED_ASYNC: the write returns before the entry's embedding is computed.
    embed_later: bool = False

    @property
    def embedded_text(self) -> str:
        """The text whose embedding represents the entry: the compressed form.

        It is what Fit returns by default, and it packs the whole entry (errors, structure,
        a sample of items) into the model's 256-token window, where the full form's first
        256 tokens may be only its header.
        """
        return self.content if self.compressed is None else self.compressed

    @property
    def stored_bytes(self) -> int:
        """Bytes the entry counts for in the namespace's totals, as put_many.lua counts them:
        the original, plus the compressed form when there is one."""
        extra = self.meta.compressed_bytes if self.compressed is not None else 0
        return self.meta.original_bytes + extra


@dataclass(frozen=True)
class Stamp:
    """Server-assigned fields of a stored entry (all times in ms since the epoch)."""

    version: int
    created_ms: int
    updated_ms: int
    expires_ms: int  # 0 = never
    event_ms: int
    sequence: int = 0  # the namespace version this write made: orders writes


@dataclass(frozen=True)
class StoredEntry:
    """An entry as read back: stamp, metadata, and the text of one form."""

    key: str
    stamp: Stamp
    meta: EntryMeta
    content: str = ""
    full: bool = True


@dataclass(frozen=True)
class Read:
    """Get and GetMany: keys of one namespace, in the full form or the compressed one."""

    namespace: str
    keys: tuple[str, ...]
    full: bool


@dataclass(frozen=True)
class KeysPage:
    """One page of a namespace's live keys with a prefix, after the key `after` (the cursor
    a page token carries; None: from the first key)."""

    namespace: str
    prefix: str
    page_size: int
    after: str | None = None


@dataclass(frozen=True)
class NamespacesPage:
    """One page of the namespaces with live entries and a prefix, after the namespace `after`
    (the cursor a page token carries; None: from the first namespace)."""

    prefix: str
    page_size: int
    after: str | None = None


@dataclass(frozen=True)
class ResumePoint:
    """Where a Watch resumes: after change-log record `record_id`, which carried namespace
    version `version` (what a resume token holds)."""

    record_id: str
    version: int


@dataclass(frozen=True)
class Following:
    """Watch: a namespace's changes after `resume` (None: from now), TTL restarts with
    `touches`."""

    namespace: str
    resume: ResumePoint | None
    touches: bool


@dataclass(frozen=True)
class Reembedding:
    """Reembed: embed a namespace's entries missing a vector (all of them with `force`)."""

    namespace: str
    force: bool


@dataclass(frozen=True)
class NamespaceTotals:
    """A namespace and its totals (tokens may still count entries that just expired)."""

    namespace: str
    entries: int
    original_tokens: int
    compressed_tokens: int


@dataclass(frozen=True)
class Removal:
    """Delete one entry, only at `if_version` when given."""

    namespace: str
    key: str
    if_version: int | None


@dataclass(frozen=True)
class Renewal:
    """Touch: restart the TTLs of some entries of one namespace."""

    namespace: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Renewed:
    """A live entry after a Touch: its (unchanged) version and its expiry (0: never)."""

    key: str
    version: int
    expires_ms: int


@dataclass(frozen=True)
class NamespaceStats:
    """Totals over a namespace's live entries."""

    entries: int = 0
    original_tokens: int = 0
    compressed_tokens: int = 0
    bytes_stored: int = 0

    @property
    def tokens_saved(self) -> int:
        """Tokens the compressed forms save over the full ones."""
        return self.original_tokens - self.compressed_tokens

    @property
    def savings_percent(self) -> float:
        """tokens_saved as a percentage of original_tokens."""
        if self.original_tokens <= 0:
            return 0.0
        return 100.0 * self.tokens_saved / self.original_tokens
