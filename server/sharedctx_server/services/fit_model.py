"""Fit's domain types: the validated request the edge hands in, and the answer it turns into
a reply. No protobuf here."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ..fit import Form, ScoringOptions, SelectionOptions, Strategy, query_terms
from ..model import Kind


@dataclass(frozen=True)
class Filters:
    """Which entries a Fit may consider; empty sets do not filter. Hashable: the turn
    strategies keep their turns per filter set."""

    include_kinds: frozenset[Kind] = frozenset()
    exclude_kinds: frozenset[Kind] = frozenset()
    include_tags: frozenset[str] = frozenset()
    exclude_tags: frozenset[str] = frozenset()
    include_agent_ids: frozenset[str] = frozenset()
    exclude_agent_ids: frozenset[str] = frozenset()
    threads: frozenset[str] = frozenset()

    @property
    def by_entry(self) -> bool:
        """Whether a filter needs each entry's sets (tags, agent, thread), not just its kind."""
        return bool(
            self.include_tags
            or self.exclude_tags
            or self.include_agent_ids
            or self.exclude_agent_ids
            or self.threads
        )


@dataclass(frozen=True)
class FitQuery:
    """A validated Fit request (docs/fit.md)."""

    namespace: str
    query: str
    strategy: Strategy
    weights: npt.NDArray[np.float64]
    scoring: ScoringOptions
    selection: SelectionOptions
    filters: Filters = field(default_factory=Filters)
    include_content: bool = False
    explain: bool = False
    excerpts: bool = True
    # The minute marks of a window the query names from the newest log time back ("the last
    # 10 minutes"), found in the namespace it asks (fit.clock.recent_minutes).
    recent: tuple[str, ...] = ()

    @cached_property
    def terms(self) -> list[str]:
        """The query's BM25 terms (fit.query_terms, then `recent`), made once for the entries'
        lexical factor and the segments' relevance."""
        return [*query_terms(self.query), *self.recent] if self.query else []


@dataclass
class FitItem:
    """One selected entry: how it went in, and its text once read (include_content)."""

    key: str
    rank: int
    score: float
    form: Form
    tokens: int
    event_ms: int
    kind: Kind
    thread: str
    version: int  # the entry's version when selected: its text is read at that version only
    line_ranges: tuple[tuple[int, int], ...] = ()  # an excerpt's lines, 1-based, inclusive
    total_lines: int = 0  # an excerpt's whole entry
    # An excerpt's matches that repeat beyond it: (first line of a shown one, 1-based;
    # records of the entry like it), fit.repeats.
    repeats: tuple[tuple[int, int], ...] = ()
    content: str = ""


@dataclass(frozen=True)
class SegmentNote:
    """A segment of a cut entry as the Fit scored it (explain)."""

    first_line: int
    last_line: int
    tokens: int
    relevance: float
    chosen: bool


@dataclass(frozen=True)
class CandidateNote:
    """One candidate's numbers and fate (explain)."""

    key: str
    score: float
    reason: str
    factors: dict[str, float]
    neighbour_gain: float
    embedded: bool
    original_tokens: int
    compressed_tokens: int
    segments: tuple[SegmentNote, ...] = ()


@dataclass
class FitAnswer:
    """What a Fit chose, in chronological order, with the totals and (explain) every
    candidate's notes."""

    items: list[FitItem]
    candidates: int
    left_out: int  # candidates not selected (counted at selection)
    left_out_by_reason: dict[str, int]
    weights: dict[str, float]
    explain: list[CandidateNote] = field(default_factory=list)
    server_ms: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Tokens of every selected entry in its form (never more than the budget)."""
        return sum(item.tokens for item in self.items)
