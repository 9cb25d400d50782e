"""The JSON schemas of the MCP tools: argument types and structured results (pydantic models,
from which the SDK publishes each tool's inputSchema and outputSchema)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..types import Entry, FitEntry, FitResult, Stats
from .render import iso

KindName = Literal["message", "tool_output", "log", "document", "note"]
M = TypeVar("M", bound=BaseModel)


def _copied(
    model: type[M], source: object, renamed: Mapping[str, str] | None = None, **given: Any
) -> M:
    """`model` with each field read from the client value `source` under the same name (or
    the one `renamed` maps it to), times as ISO 8601; `given` fields are not read. The models
    declare their fields themselves, as the published schema is theirs, not the dataclass's."""
    renamed = renamed or {}
    values = {
        name: _json_value(getattr(source, renamed.get(name, name)))
        for name in model.model_fields
        if name not in given
    }
    return model(**values, **given)


def _json_value(value: Any) -> Any:
    # The only client values pydantic would not turn into the schema's types by itself.
    return iso(value) if isinstance(value, datetime) else value


class FitFilters(BaseModel):
    """Which entries fit may consider; empty lists do not filter."""

    model_config = ConfigDict(extra="forbid")

    include_kinds: list[KindName] = Field(default=[], description="only entries of these kinds")
    exclude_kinds: list[KindName] = Field(default=[], description="never entries of these kinds")
    include_tags: list[str] = Field(default=[], description="only entries with one of these tags")
    exclude_tags: list[str] = Field(default=[], description="never entries with any of these tags")
    include_agent_ids: list[str] = Field(
        default=[], description="only entries written by these agents"
    )
    exclude_agent_ids: list[str] = Field(
        default=[], description="never entries written by these agents"
    )
    threads: list[str] = Field(default=[], description="only entries of these threads")

    def as_request(self) -> dict[str, list[str]]:
        """The non-empty filters, as Client.fit takes them."""
        return {name: list(v) for name, v in self.model_dump().items() if v}


class PutResult(BaseModel):
    """What a put stored."""

    key: str
    version: int = Field(description="1 when created, +1 on every overwrite")
    original_tokens: int = Field(description="tokens of the content as given")
    compressed_tokens: int = Field(description="tokens of the compressed form the server keeps")
    expires_at: str | None = Field(description="when it expires (ISO 8601), null for never")

    @classmethod
    def of(cls, entry: Entry) -> PutResult:
        """From the written entry."""
        return _copied(cls, entry)


class EntryResult(BaseModel):
    """One entry: its text in the form asked for, and its metadata."""

    key: str
    content: str
    full: bool = Field(description="true: the original text; false: the compressed form")
    kind: str
    tags: list[str]
    thread: str
    version: int
    created_at: str | None
    updated_at: str | None
    expires_at: str | None
    original_tokens: int
    compressed_tokens: int

    @classmethod
    def of(cls, entry: Entry) -> EntryResult:
        """From a read entry."""
        return _copied(cls, entry)


class KeysResult(BaseModel):
    """Live keys in byte order."""

    keys: list[str]
    more: bool = Field(description="true when more keys match than `limit` allowed")
    cursor: str = Field(
        default="", description="pass it back as `cursor` for the next keys; empty after the last"
    )


class DeleteResult(BaseModel):
    """Whether a live entry was removed."""

    deleted: bool


class FitItem(BaseModel):
    """One selected entry of a fit."""

    key: str
    form: str = Field(description="full, compressed, or excerpt (part of a large entry)")
    tokens: int = Field(description="tokens of the entry in that form")
    score: float = Field(description="its score (scored), relevance (relevant) or 0 (recent)")
    kind: str
    thread: str
    time: str | None = Field(description="when its content happened (ISO 8601)")
    lines: list[tuple[int, int]] = Field(
        description="for an excerpt: the line ranges shown (1-based, inclusive)"
    )
    total_lines: int = Field(description="for an excerpt: lines of the whole entry")
    repeats: list[tuple[int, int]] = Field(
        description="for an excerpt: (line of a shown match, how many records of the whole "
        "entry say the same, numbers and ids aside) for matches that repeat beyond it"
    )

    @classmethod
    def of(cls, entry: FitEntry) -> FitItem:
        """From a selected entry (two fields have shorter names here)."""
        return _copied(cls, entry, {"time": "event_time", "lines": "line_ranges"})


class FitOutput(BaseModel):
    """The entries fit chose, oldest first, and the totals."""

    entries: list[FitItem]
    total_tokens: int = Field(description="sum of the entries' tokens, never over the budget")
    budget_tokens: int
    candidates: int = Field(description="live entries considered")
    left_out: int
    left_out_by_reason: dict[str, int]

    @classmethod
    def of(cls, result: FitResult, budget_tokens: int) -> FitOutput:
        """From a Fit's result."""
        entries = [FitItem.of(e) for e in result.entries]
        return _copied(cls, result, entries=entries, budget_tokens=budget_tokens)


class StatsResult(BaseModel):
    """Totals over the namespace's live entries."""

    entries: int
    original_tokens: int
    compressed_tokens: int
    tokens_saved: int
    savings_percent: float
    bytes_stored: int

    @classmethod
    def of(cls, stats: Stats) -> StatsResult:
        """From Stats."""
        return _copied(cls, stats)
