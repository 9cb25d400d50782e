"""Typed results of client calls (plain dataclasses, no protobuf in sight)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from .v1 import sharedctx_pb2 as pb

# Lowercase names of the proto's Kind values, in value order ("unspecified" first).
KINDS = tuple(name.removeprefix("KIND_").lower() for name in pb.Kind.keys())


def kind_to_proto(kind: str | None) -> Any:
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
    embed: str | None = None  # "sync" (default) or "async"

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
        if self.embed is not None:
            req.embed = _enum_value(pb.EmbedMode, "EMBED", self.embed)
        return req


def _enum_value(enum: Any, prefix: str, name: str) -> Any:
    """Proto enum value for a lowercase name ("async" -> EMBED_ASYNC)."""
    try:
        return enum.Value(f"{prefix}_{name.upper()}")
    except ValueError:
        known = [n[len(prefix) + 1 :].lower() for n in enum.keys() if not n.endswith("UNSPECIFIED")]
        raise ValueError(
            f"unknown {prefix.lower()} {name!r}; use one of {', '.join(known)}"
        ) from None


_FACTORS = (
    "recency", "semantic_similarity", "toin_importance", "error_indicator",
    "forward_reference", "token_density", "lexical_relevance",
)  # fmt: skip


def fit_request(
    namespace: str,
    query: str,
    budget_tokens: int,
    *,
    strategy: str | None = None,
    preset: str | None = None,
    weights: dict[str, float] | None = None,
    recency_decay_rate: float | None = None,
    keep_recent: int | None = None,
    max_entries: int | None = None,
    adaptive: str | None = None,
    form: str | None = None,
    compress_threshold: int | None = None,
    fill: str | None = None,
    filters: dict[str, Any] | None = None,
    min_score: float | None = None,
    include_content: bool = False,
    explain: bool = False,
    expand_neighbours: bool | None = None,
    excerpts: bool | None = None,
) -> pb.FitRequest:
    """The FitRequest for Client.fit's arguments (names as in the proto, values lowercase)."""
    req = pb.FitRequest(
        namespace=namespace,
        query=query,
        budget_tokens=budget_tokens,
        preset=preset or "",
        include_content=include_content,
        explain=explain,
    )
    if strategy:
        req.strategy = _enum_value(pb.Strategy, "STRATEGY", strategy)
    if adaptive:
        req.adaptive = _enum_value(pb.Adaptive, "ADAPTIVE", adaptive)
    if form:
        req.form = _enum_value(pb.Form, "FORM", form)
    if fill:
        req.fill = _enum_value(pb.Fill, "FILL", fill)
    for name, weight in (weights or {}).items():
        if name not in _FACTORS:
            raise ValueError(f"unknown factor {name!r}; use one of {', '.join(_FACTORS)}")
        setattr(req.weights, name, weight)
    for name, value in (
        ("recency_decay_rate", recency_decay_rate),
        ("keep_recent", keep_recent),
        ("max_entries", max_entries),
        ("compress_threshold", compress_threshold),
        ("min_score", min_score),
        ("expand_neighbours", expand_neighbours),
        ("excerpts", excerpts),
    ):
        if value is not None:
            setattr(req, name, value)
    for name, values in (filters or {}).items():
        if name in ("include_kinds", "exclude_kinds"):
            values = [kind_to_proto(v) for v in values]
        getattr(req.filters, name).extend(values)
    return req


_FORM_NAMES = {pb.FORM_FULL: "full", pb.FORM_COMPRESSED: "compressed", pb.FORM_EXCERPT: "excerpt"}


@dataclass(frozen=True)
class FitEntry:
    """One selected entry of a Fit."""

    key: str
    rank: int
    score: float
    form: str  # "full", "compressed" or "excerpt"
    tokens: int
    content: str
    event_time: datetime | None
    kind: str
    thread: str
    # An excerpt's lines of the full form, 1-based and inclusive, and the full form's length.
    line_ranges: tuple[tuple[int, int], ...] = ()
    total_lines: int = 0


@dataclass(frozen=True)
class SegmentScore:
    """A segment of a large entry as Fit scored it (explain)."""

    first_line: int
    last_line: int
    tokens: int
    relevance: float
    chosen: bool


@dataclass(frozen=True)
class FitCandidate:
    """A candidate's numbers and fate (explain)."""

    key: str
    score: float
    reason: str
    factors: dict[str, float]
    neighbour_gain: float
    embedded: bool
    original_tokens: int
    compressed_tokens: int
    segments: tuple[SegmentScore, ...] = ()


@dataclass(frozen=True)
class FitResult:
    """A Fit's selection, in chronological order."""

    entries: list[FitEntry]
    total_tokens: int
    candidates: int
    left_out: int
    left_out_by_reason: dict[str, int]
    weights: dict[str, float]
    explain: list[FitCandidate]
    server_ms: float = 0.0

    @property
    def keys(self) -> list[str]:
        """Selected keys, chronological."""
        return [e.key for e in self.entries]

    @classmethod
    def from_proto(cls, msg: pb.FitResponse) -> FitResult:
        """Build from the wire message."""
        return cls(
            entries=[
                FitEntry(
                    key=e.key,
                    rank=e.rank,
                    score=e.score,
                    form=_FORM_NAMES.get(e.form, "compressed"),
                    tokens=e.tokens,
                    content=e.content,
                    event_time=_time(e.event_time),
                    kind=KINDS[e.kind] if 0 <= e.kind < len(KINDS) else "unspecified",
                    thread=e.thread,
                    line_ranges=tuple((r.first, r.last) for r in e.line_ranges),
                    total_lines=e.total_lines,
                )
                for e in msg.entries
            ],
            total_tokens=msg.total_tokens,
            candidates=msg.candidates,
            left_out=msg.left_out,
            left_out_by_reason=dict(msg.left_out_by_reason),
            weights=dict(msg.weights),
            explain=[
                FitCandidate(
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
                for c in msg.explain
            ],
            server_ms=msg.server_ms,
        )


@dataclass(frozen=True)
class Change:
    """One change of a watched namespace."""

    op: str  # put, delete, expire, clear, embed, evict
    key: str
    version: int
    namespace_version: int
    time: datetime | None
    resume_token: str

    @classmethod
    def from_proto(cls, msg: pb.ChangeEvent) -> Change:
        """Build from the wire message."""
        return cls(
            op=pb.ChangeEvent.Op.Name(msg.op)[3:].lower(),
            key=msg.key,
            version=msg.version,
            namespace_version=msg.namespace_version,
            time=_time(msg.time),
            resume_token=msg.resume_token,
        )


@dataclass(frozen=True)
class ReembedProgress:
    """Progress of a Reembed call."""

    done: int
    total: int
    computed: int
