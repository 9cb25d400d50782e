"""Typed values of client calls: plain dataclasses, no protobuf in sight (wire.py converts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal, get_args

# Fit's options that name one of a few values (FitRequest's enums, lowercase, as Client.fit
# takes them), each in the proto's order, so the first is what the server does when the
# option is left out. The CLI's choices, the UI's selects and the MCP tool's schema all derive
# from these (tests/test_client_api.py checks them against the proto).
StrategyName = Literal["scored", "relevant", "recent"]
FormName = Literal["compressed", "full", "auto"]  # "excerpt" is only ever a reply's form
AdaptiveName = Literal["none", "conservative", "moderate", "aggressive"]
FillName = Literal["skip", "stop"]
FIT_CHOICES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "strategy": get_args(StrategyName),
        "form": get_args(FormName),
        "adaptive": get_args(AdaptiveName),
        "fill": get_args(FillName),
    }
)


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


@dataclass(frozen=True)
class NamespaceInfo:
    """A namespace with live entries, and its totals (tokens may still count entries that
    expired moments ago)."""

    namespace: str
    entries: int
    original_tokens: int
    compressed_tokens: int


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
    # An excerpt's lines of the full form, 1-based and inclusive, and the full form's length
    # (for JSON stored on one line, of its json.dumps(doc, indent=1, ensure_ascii=False)).
    line_ranges: tuple[tuple[int, int], ...] = ()
    total_lines: int = 0
    # An excerpt's matches that repeat beyond it: (first line of a shown one; how many
    # records of the whole entry say the same, numbers and ids aside), best match first.
    repeats: tuple[tuple[int, int], ...] = ()


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


@dataclass(frozen=True)
class Change:
    """One change of a watched namespace."""

    op: str  # put, delete, expire, clear, embed, evict, touch
    key: str
    version: int
    namespace_version: int
    time: datetime | None
    resume_token: str


@dataclass(frozen=True)
class ReembedProgress:
    """Progress of a Reembed call."""

    done: int
    total: int
    computed: int
