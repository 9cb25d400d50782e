"""Typed results of client calls (plain dataclasses, no protobuf in sight)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from .v1 import sharedctx_pb2 as pb

KINDS = ("unspecified", "message", "tool_output", "log", "document", "note")


def kind_to_proto(kind: str | None) -> int:
    """Proto enum value for a kind name such as "tool_output" (None = unspecified)."""
    if kind is None or kind == "":
        return 0
    name = kind.lower()
    if name not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS[1:])}")
    return KINDS.index(name)


def _time(ts: Timestamp, present: bool = True) -> datetime | None:
    if not present:
        return None
    return ts.ToDatetime(tzinfo=timezone.utc)


def to_timestamp(value: datetime | float | int) -> Timestamp:
    """A protobuf Timestamp from a datetime (naive = UTC) or seconds since the epoch."""
    ts = Timestamp()
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        ts.FromDatetime(value)
    else:
        ts.FromNanoseconds(int(value * 1e9))
    return ts


@dataclass(frozen=True)
class Entry:
    """A stored entry: its text (of the form asked for, empty after writes) and metadata."""

    key: str
    content: str = ""
    full: bool = False
    kind: str = "unspecified"
    role: str = ""
    agent_id: str = ""
    tool_name: str = ""
    tags: tuple[str, ...] = ()
    importance: float = 0.0
    thread: str = ""
    version: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    event_time: datetime | None = None
    expires_at: datetime | None = None
    original_tokens: int = 0
    compressed_tokens: int = 0
    original_bytes: int = 0
    compressed_bytes: int = 0
    compressor: str = ""

    @classmethod
    def from_proto(cls, msg: pb.Entry) -> Entry:
        """Build from the wire message."""
        return cls(
            key=msg.key,
            content=msg.content,
            full=msg.full,
            kind=KINDS[msg.kind] if 0 <= msg.kind < len(KINDS) else "unspecified",
            role=msg.role,
            agent_id=msg.agent_id,
            tool_name=msg.tool_name,
            tags=tuple(msg.tags),
            importance=msg.importance,
            thread=msg.thread,
            version=msg.version,
            created_at=_time(msg.created_at),
            updated_at=_time(msg.updated_at),
            event_time=_time(msg.event_time),
            expires_at=_time(msg.expires_at, msg.HasField("expires_at")),
            original_tokens=msg.original_tokens,
            compressed_tokens=msg.compressed_tokens,
            original_bytes=msg.original_bytes,
            compressed_bytes=msg.compressed_bytes,
            compressor=msg.compressor,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (times as ISO-8601)."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out


@dataclass(frozen=True)
class Stats:
    """Totals over a namespace's live entries."""

    entries: int
    original_tokens: int
    compressed_tokens: int
    tokens_saved: int
    savings_percent: float
    bytes_stored: int

    @classmethod
    def from_proto(cls, msg: pb.StatsResponse) -> Stats:
        """Build from the wire message."""
        return cls(
            entries=msg.entries,
            original_tokens=msg.original_tokens,
            compressed_tokens=msg.compressed_tokens,
            tokens_saved=msg.tokens_saved,
            savings_percent=msg.savings_percent,
            bytes_stored=msg.bytes_stored,
        )


@dataclass(frozen=True)
class PutItem:
    """One entry of a put_many call (same fields as Client.put's arguments)."""

    key: str
    content: str
    ttl_seconds: int = 0
    compressed: str | None = None
    kind: str | None = None
    role: str = ""
    agent_id: str = ""
    tool_name: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    importance: float | None = None
    event_time: datetime | float | None = None
    thread: str = ""
    if_version: int | None = None

    def to_proto(self, namespace: str = "") -> pb.PutRequest:
        """The PutRequest for this item."""
        req = pb.PutRequest(
            namespace=namespace,
            key=self.key,
            content=self.content,
            ttl_seconds=self.ttl_seconds,
            kind=kind_to_proto(self.kind),
            role=self.role,
            agent_id=self.agent_id,
            tool_name=self.tool_name,
            tags=list(self.tags),
            thread=self.thread,
        )
        if self.compressed is not None:
            req.compressed = self.compressed
        if self.importance is not None:
            req.importance = self.importance
        if self.event_time is not None:
            req.event_time.CopyFrom(to_timestamp(self.event_time))
        if self.if_version is not None:
            req.if_version = self.if_version
        return req
