"""Put and PutMany requests in, entries to write out: every entry checked before any is
written; a PutMany's errors name `entries[i].<field>`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sharedctx.v1 import sharedctx_pb2 as pb

from ...compress import looks_binary
from ...compress.config import DEFAULT_CONFIG
from ...errors import InvalidArgument, LimitExceeded
from ...model import EntryMeta, NewEntry
from ...settings import Limits, Settings
from .fields import (
    CONTROL_RE,
    batch_size,
    content_size,
    if_version,
    key,
    kind,
    namespace,
    set_by,
    utf8_len,
)

_EMBED_MODES = (pb.EMBED_UNSPECIFIED, pb.EMBED_SYNC, pb.EMBED_ASYNC)


def _short_text(value: str, limits: Limits, field: str, cap: int | None = None) -> str:
    """Short metadata fields (role, agent_id, tool_name, thread, tags) are bounded, printable."""
    size = utf8_len(value, field)
    setting = "max_field_bytes" if cap is None else "max_tag_bytes"
    cap = limits.max_field_bytes if cap is None else cap
    if size > cap:
        raise InvalidArgument(
            field, f"is {size} bytes; at most {cap} are allowed" + set_by(setting)
        )
    if CONTROL_RE.search(value):
        raise InvalidArgument(field, "may not contain control characters")
    return value


def _tags(tags: Sequence[str], limits: Limits) -> tuple[str, ...]:
    if len(tags) > limits.max_tags:
        raise InvalidArgument(
            "tags", f"has {len(tags)} tags; at most {limits.max_tags} allowed" + set_by("max_tags")
        )
    for i, tag in enumerate(tags):
        if not tag:  # a filter on it could never be written; most likely a caller's slip
            raise InvalidArgument(f"tags[{i}]", "is empty; a tag needs at least one character")
        _short_text(tag, limits, f"tags[{i}]", limits.max_tag_bytes)
    return tuple(dict.fromkeys(tags))  # a tag given twice is one tag


def _importance(value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidArgument("importance", f"must be between 0 and 1; got {value}")
    return value + 0.0  # -0.0 is 0 (Put echoed -0, Get read back 0.0)


def _ttl_ms(ttl_seconds: int, settings: Settings) -> int:
    """The TTL in ms: the request's, else the server default; 0 = never expires."""
    limits = settings.limits
    if ttl_seconds < 0:
        raise InvalidArgument(
            "ttl_seconds", f"must be >= 0 (0 = server default); got {ttl_seconds}"
        )
    if ttl_seconds > limits.max_ttl_seconds:
        raise InvalidArgument(
            "ttl_seconds",
            f"is {ttl_seconds}; at most {limits.max_ttl_seconds} is allowed"
            + set_by("max_ttl_seconds"),
        )
    return (ttl_seconds or settings.default_ttl_seconds) * 1000


def _event_ms(req: pb.PutRequest) -> int | None:
    """The entry's event time in ms, or None for "now" (decided by Redis's clock)."""
    if not req.HasField("event_time"):
        return None
    ts = req.event_time
    if ts.seconds < 0 or ts.seconds > 253402300799 or not 0 <= ts.nanos < 1_000_000_000:
        raise InvalidArgument("event_time", "must be a valid time between 1970 and 9999")
    return int(ts.ToMilliseconds())


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


def put(req: pb.PutRequest, settings: Settings) -> tuple[str, list[NewEntry]]:
    """A Put as (namespace, [entry])."""
    ns = namespace(req.namespace, settings.limits)
    return ns, _entries([req], settings, batch=False)


def put_many(req: pb.PutManyRequest, settings: Settings) -> tuple[str, list[NewEntry]]:
    """A PutMany as (namespace, entries); its items' own namespaces must be empty or the same."""
    ns = namespace(req.namespace, settings.limits)
    for i, item in enumerate(req.entries):
        if item.namespace and item.namespace != ns:
            raise InvalidArgument(
                f"entries[{i}].namespace", "must be empty or equal to the request's namespace"
            )
    return ns, _entries(req.entries, settings, batch=True)


def _entries(requests: Sequence[pb.PutRequest], settings: Settings, batch: bool) -> list[NewEntry]:
    """Every entry checked before any is written. `batch`: errors name `entries[i].<field>`
    (a Put's name the field alone), whatever the number of entries."""
    limits = settings.limits
    batch_size(len(requests), limits)
    seen: set[str] = set()
    entries = []
    for i, req in enumerate(requests):
        with _fields_of(f"entries[{i}]" if batch else ""):
            entry = _entry(req, settings)
            if entry.key in seen:
                raise InvalidArgument("key", f"{entry.key!r} appears twice in one PutMany")
        seen.add(entry.key)
        entries.append(entry)
    # A Put is bounded by max_content_bytes per form; max_batch_bytes is about PutMany.
    total = sum(e.stored_bytes for e in entries)
    if batch and total > limits.max_batch_bytes:
        raise LimitExceeded(
            "max_batch_bytes",
            f"the batch holds {total} bytes of content; the limit is {limits.max_batch_bytes}"
            + set_by("max_batch_bytes"),
        )
    return entries


# looks_binary's threshold, for the message.
BINARY_SHARE = DEFAULT_CONFIG.binary_control_share


def _text(value: str, field: str) -> None:
    """Refuse binary data in disguise (terminal colour codes are text: looks_binary)."""
    if looks_binary(value):
        raise InvalidArgument(
            field,
            f"looks binary (a NUL byte, or more than {BINARY_SHARE:.0%} control characters); "
            "store text, e.g. base64-encode binary data",
        )


def _entry(req: pb.PutRequest, settings: Settings) -> NewEntry:
    """One entry with the caller's metadata (token counts and forms are derived later)."""
    limits = settings.limits
    if req.embed not in _EMBED_MODES:
        raise InvalidArgument("embed", f"unknown value {req.embed}")
    entry_key = key(req.key, limits)
    size = content_size(req.content, limits)
    _text(req.content, "content")
    compressed = req.compressed if req.HasField("compressed") else None
    comp_size = 0 if compressed is None else content_size(compressed, limits, "compressed")
    if compressed is not None:
        _text(compressed, "compressed")  # what Get and Fit return by default, and embed
        if not compressed and req.content:
            # Fit would return the entry as nothing at all, at 0 tokens.
            raise InvalidArgument(
                "compressed",
                "is empty while the content is not; leave it out and the server compresses "
                "the content",
            )
    meta = EntryMeta(
        kind=kind(req.kind),
        role=_short_text(req.role, limits, "role"),
        agent_id=_short_text(req.agent_id, limits, "agent_id"),
        tool_name=_short_text(req.tool_name, limits, "tool_name"),
        tags=_tags(req.tags, limits),
        importance=_importance(req.importance) if req.HasField("importance") else 0.0,
        thread=_short_text(req.thread, limits, "thread"),
        original_bytes=size,
        compressed_bytes=size if compressed is None else comp_size,
        compressor="none" if compressed is None else "caller",
    )
    return NewEntry(
        key=entry_key,
        content=req.content,
        compressed=compressed,
        meta=meta,
        ttl_ms=_ttl_ms(req.ttl_seconds, settings),
        event_ms=_event_ms(req),
        if_version=if_version(req.if_version if req.HasField("if_version") else None),
        embed_later=req.embed == pb.EMBED_ASYNC,
    )
