"""Proto messages <-> domain types, with every field checked on the way in."""

from __future__ import annotations

from typing import Any, cast

from google.protobuf.timestamp_pb2 import Timestamp
from sharedctx.v1 import sharedctx_pb2 as pb

from ..errors import InvalidArgument
from ..model import EntryMeta, Kind, Stamp, StoredEntry
from ..settings import Limits, Settings
from . import validation as V


def ms_to_timestamp(ms: int) -> Timestamp:
    """A protobuf Timestamp for milliseconds since the epoch."""
    ts = Timestamp()
    ts.FromMilliseconds(ms)
    return ts


def kind_from_proto(value: int) -> Kind:
    """The Kind for a proto enum value; InvalidArgument for values this server does not know."""
    try:
        return Kind(value)
    except ValueError:
        raise InvalidArgument("kind", f"unknown value {value}; use one of KIND_*") from None


def event_ms_from_proto(req: pb.PutRequest) -> int | None:
    """The entry's event time in ms, or None for "now" (decided by Redis's clock)."""
    if not req.HasField("event_time"):
        return None
    ts = req.event_time
    if ts.seconds < 0 or ts.seconds > 253402300799 or not 0 <= ts.nanos < 1_000_000_000:
        raise InvalidArgument("event_time", "must be a valid time between 1970 and 9999")
    return int(ts.ToMilliseconds())


def ttl_ms(req: pb.PutRequest, settings: Settings) -> int:
    """The TTL in ms: the request's, else the server default; 0 = never expires."""
    seconds = V.check_ttl(req.ttl_seconds, settings.limits) or settings.default_ttl_seconds
    return seconds * 1000


def caller_meta(req: pb.PutRequest, limits: Limits) -> EntryMeta:
    """The metadata the caller supplied (token counts and compressor are filled in later)."""
    importance = V.check_importance(req.importance) if req.HasField("importance") else 0.0
    return EntryMeta(
        kind=kind_from_proto(req.kind),
        role=V.check_short_text(req.role, limits, "role"),
        agent_id=V.check_short_text(req.agent_id, limits, "agent_id"),
        tool_name=V.check_short_text(req.tool_name, limits, "tool_name"),
        tags=tuple(V.check_tags(req.tags, limits)),
        importance=importance,
        thread=V.check_short_text(req.thread, limits, "thread"),
    )


def entry_to_proto(key: str, stamp: Stamp, meta: EntryMeta) -> pb.Entry:
    """Metadata of an entry as a proto Entry (no content)."""
    msg = pb.Entry(
        key=key,
        kind=cast(Any, int(meta.kind)),
        role=meta.role,
        agent_id=meta.agent_id,
        tool_name=meta.tool_name,
        tags=list(meta.tags),
        importance=meta.importance,
        thread=meta.thread,
        version=stamp.version,
        original_tokens=meta.original_tokens,
        compressed_tokens=meta.compressed_tokens,
        original_bytes=meta.original_bytes,
        compressed_bytes=meta.compressed_bytes,
        compressor=meta.compressor,
    )
    # Filled in place: building Timestamps to copy in would cost one more message each.
    msg.created_at.FromMilliseconds(stamp.created_ms)
    msg.updated_at.FromMilliseconds(stamp.updated_ms)
    msg.event_time.FromMilliseconds(stamp.event_ms)
    if stamp.expires_ms:
        msg.expires_at.FromMilliseconds(stamp.expires_ms)
    return msg


def stored_to_proto(entry: StoredEntry) -> pb.Entry:
    """A read entry, with its text in `content`."""
    msg = entry_to_proto(entry.key, entry.stamp, entry.meta)
    msg.content = entry.content
    msg.full = entry.full
    return msg
