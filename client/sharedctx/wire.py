"""Protobuf conversions of the client's values: the requests, or parts of them, that are more
than copied fields (Put, PutMany, Delete, Fit's enums, weights and filters), and the wire
messages of replies turned into the dataclasses of types.py. calls.py uses them; errors.py
reads the status details of failed calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from .types import (
    FIT_CHOICES,
    Change,
    Entry,
    FitCandidate,
    FitEntry,
    FitResult,
    NamespaceInfo,
    PutItem,
    ReembedProgress,
    SegmentScore,
    Stats,
)
from .v1 import sharedctx_pb2 as pb

# The initial-metadata key of a Watch's start: the resume token of the position the watch
# began after (a stream that breaks before its first change resumes from there).
RESUME_TOKEN_HEADER = "sharedctx-resume-token"
# Lowercase names of the proto's Kind values, in value order ("unspecified" first).
KINDS = tuple(name.removeprefix("KIND_").lower() for name in pb.Kind.keys())

# Fit's scoring factors, in the proto's order (the fields of Weights).
FACTORS = tuple(field.name for field in pb.Weights.DESCRIPTOR.fields)

_FORM_NAMES = {pb.FORM_FULL: "full", pb.FORM_COMPRESSED: "compressed", pb.FORM_EXCERPT: "excerpt"}


def str_list(field: str, values: Iterable[str]) -> list[str]:
    """`values` as a list, refusing a lone string: iterated, it would be one item per
    character (tags="urgent" stored six one-letter tags)."""
    if isinstance(values, (str, bytes)):
        raise TypeError(
            f"{field} must be a list of str, not a {type(values).__name__} "
            f"(did you mean [{values!r}]?)"
        )
    return list(values)


def kind_to_proto(kind: str | None) -> Any:
    """Proto enum value for a kind name such as "tool_output" (None = unspecified)."""
    if kind is None or kind == "":
        return 0
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a name such as 'tool_output', not {type(kind).__name__}")
    name = kind.lower()
    if name not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS[1:])}")
    return KINDS.index(name)


def _kind_name(value: int) -> str:
    return KINDS[value] if 0 <= value < len(KINDS) else "unspecified"


def _enum_value(enum: Any, prefix: str, name: str) -> Any:
    """Proto enum value for a lowercase name ("async" -> EMBED_ASYNC)."""
    try:
        return enum.Value(f"{prefix}_{name.upper()}")
    except ValueError:
        known = [n[len(prefix) + 1 :].lower() for n in enum.keys() if not n.endswith("UNSPECIFIED")]
        raise ValueError(
            f"unknown {prefix.lower()} {name!r}; use one of {', '.join(known)}"
        ) from None


def _time(ts: Timestamp, present: bool = True) -> datetime | None:
    if not present:
        return None
    return ts.ToDatetime(tzinfo=UTC)


def to_timestamp(value: datetime | float | int) -> Timestamp:
    """A protobuf Timestamp from a datetime (naive = UTC) or seconds since the epoch."""
    ts = Timestamp()
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        ts.FromDatetime(value)
    else:
        ts.FromNanoseconds(int(value * 1e9))
    return ts


# Requests ---------------------------------------------------------------------------------------


def _encodable(name: str, value: str | None) -> None:
    """Refuse text that has no UTF-8 form (a lone surrogate, as `surrogateescape` decoding of
    bad bytes leaves): protobuf's UnicodeEncodeError named no argument."""
    if value is None or value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name}: is not valid Unicode text (a lone surrogate {value[exc.start]!r} at "
            f"position {exc.start}); decode bytes with errors='replace'"
        ) from None


def put_request(item: PutItem, namespace: str = "") -> pb.PutRequest:
    """The PutRequest for an item (PutMany's entries leave the namespace empty)."""
    # Checked here: protobuf would store None as "" and say little about other types.
    for name, value in (("content", item.content), ("compressed", item.compressed)):
        if not isinstance(value, str) and not (name == "compressed" and value is None):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
        _encodable(name, value)
    req = pb.PutRequest(
        namespace=namespace,
        key=item.key,
        content=item.content,
        ttl_seconds=item.ttl_seconds,
        kind=kind_to_proto(item.kind),
        role=item.role,
        agent_id=item.agent_id,
        tool_name=item.tool_name,
        tags=str_list("tags", item.tags),
        thread=item.thread,
    )
    if item.compressed is not None:
        req.compressed = item.compressed
    if item.importance is not None:
        req.importance = item.importance
    if item.event_time is not None:
        req.event_time.CopyFrom(to_timestamp(item.event_time))
    if item.if_version is not None:
        req.if_version = item.if_version
    if item.embed is not None:
        req.embed = _enum_value(pb.EmbedMode, "EMBED", item.embed)
    return req


def put_many_request(
    namespace: str, items: Iterable[PutItem | dict[str, Any]]
) -> pb.PutManyRequest:
    """The PutManyRequest for items given as PutItems or as dicts of PutItem's fields."""
    entries = [put_request(i if isinstance(i, PutItem) else PutItem(**i)) for i in items]
    return pb.PutManyRequest(namespace=namespace, entries=entries)


def delete_request(namespace: str, key: str, if_version: int | None) -> pb.DeleteRequest:
    """The DeleteRequest, conditional when `if_version` is given."""
    req = pb.DeleteRequest(namespace=namespace, key=key)
    if if_version is not None:
        req.if_version = if_version
    return req


def fit_enum(enum: Any, prefix: str, name: str | None) -> Any:
    """A FitRequest enum's value for a lowercase name; None or "" leaves it unspecified (0),
    which is what the server reads as its default. Only the names a request may carry
    (FIT_CHOICES: "excerpt" is a form of replies only)."""
    if not name:
        return 0
    choices = FIT_CHOICES[prefix.lower()]
    if name.lower() not in choices:
        raise ValueError(f"unknown {prefix.lower()} {name!r}; use one of {', '.join(choices)}")
    return _enum_value(enum, prefix, name)


def fit_weights(weights: Mapping[str, float] | None) -> pb.Weights | None:
    """Weights overriding the preset's, by factor name; None when there are none, so that the
    request carries no Weights message at all."""
    if not weights:
        return None
    msg = pb.Weights()
    for name, weight in weights.items():
        if name not in FACTORS:
            raise ValueError(f"unknown factor {name!r}; use one of {', '.join(FACTORS)}")
        setattr(msg, name, weight)
    return msg


def fit_filters(filters: Mapping[str, Iterable[str]] | None) -> pb.Filters | None:
    """Filters by field name (kinds by name); None when none is given, so that the request
    carries no Filters message (empty lists do not filter either way)."""
    if not filters:
        return None
    msg = pb.Filters()
    known = list(pb.Filters.DESCRIPTOR.fields_by_name)
    for name, values in filters.items():
        if name not in known:
            raise ValueError(f"unknown filter {name!r}; use one of {', '.join(known)}")
        listed: list[Any] = str_list(name, values)
        if name in ("include_kinds", "exclude_kinds"):
            listed = [kind_to_proto(v) for v in listed]
        getattr(msg, name).extend(listed)
    return msg


# Replies ----------------------------------------------------------------------------------------


def entry(msg: pb.Entry) -> Entry:
    """An Entry from the wire message."""
    return Entry(
        key=msg.key,
        content=msg.content,
        full=msg.full,
        kind=_kind_name(msg.kind),
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


def namespace_info(msg: pb.NamespaceInfo) -> NamespaceInfo:
    """A listed namespace."""
    return NamespaceInfo(
        namespace=msg.namespace,
        entries=msg.entries,
        original_tokens=msg.original_tokens,
        compressed_tokens=msg.compressed_tokens,
    )


def stats(msg: pb.StatsResponse) -> Stats:
    """Stats from the wire message."""
    return Stats(
        entries=msg.entries,
        original_tokens=msg.original_tokens,
        compressed_tokens=msg.compressed_tokens,
        tokens_saved=msg.tokens_saved,
        savings_percent=msg.savings_percent,
        bytes_stored=msg.bytes_stored,
    )


def _fit_entry(e: pb.FitEntry) -> FitEntry:
    return FitEntry(
        key=e.key,
        rank=e.rank,
        score=e.score,
        form=_FORM_NAMES.get(e.form, "compressed"),
        tokens=e.tokens,
        content=e.content,
        event_time=_time(e.event_time),
        kind=_kind_name(e.kind),
        thread=e.thread,
        line_ranges=tuple((r.first, r.last) for r in e.line_ranges),
        total_lines=e.total_lines,
        repeats=tuple((r.line, r.count) for r in e.repeats),
    )


def _fit_candidate(c: pb.FitCandidate) -> FitCandidate:
    return FitCandidate(
        key=c.key,
        score=c.score,
        reason=c.reason,
        factors=dict(c.factors),
        neighbour_gain=c.neighbour_gain,
        embedded=c.embedded,
        original_tokens=c.original_tokens,
        compressed_tokens=c.compressed_tokens,
        segments=tuple(
            SegmentScore(
                first_line=g.first_line,
                last_line=g.last_line,
                tokens=g.tokens,
                relevance=g.relevance,
                chosen=g.chosen,
            )
            for g in c.segments
        ),
    )


def fit_result(msg: pb.FitResponse) -> FitResult:
    """A FitResult from the wire message."""
    return FitResult(
        entries=[_fit_entry(e) for e in msg.entries],
        total_tokens=msg.total_tokens,
        candidates=msg.candidates,
        left_out=msg.left_out,
        left_out_by_reason=dict(msg.left_out_by_reason),
        weights=dict(msg.weights),
        explain=[_fit_candidate(c) for c in msg.explain],
        server_ms=msg.server_ms,
    )


def touched(msg: pb.TouchResponse) -> dict[str, datetime | None]:
    """The live entries' expiry times after a Touch, by key (None: never expires)."""
    return {e.key: _time(e.expires_at, e.HasField("expires_at")) for e in msg.entries}


def _op_name(op: int) -> str:
    """put, delete, ...; for an op a newer server added, "op_<number>" rather than a crash."""
    try:
        return pb.ChangeEvent.Op.Name(op)[3:].lower()
    except ValueError:
        return f"op_{op}"


def change(msg: pb.ChangeEvent) -> Change:
    """A Change from the wire message."""
    return Change(
        op=_op_name(msg.op),
        key=msg.key,
        version=msg.version,
        namespace_version=msg.namespace_version,
        time=_time(msg.time),
        resume_token=msg.resume_token,
    )


def reembed_progress(msg: pb.ReembedProgress) -> ReembedProgress:
    """ReembedProgress from the wire message."""
    return ReembedProgress(msg.done, msg.total, msg.computed)
