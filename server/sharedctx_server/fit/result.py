"""What a Fit selection returns, and the small enums every strategy shares."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from sharedctx_server.fit.excerpts import Excerpt

__all__ = ["Fill", "Form", "Reason", "Selection", "Strategy"]


class Strategy(enum.Enum):
    """Which selection runs (docs/fit.md)."""

    SCORED = "scored"
    RELEVANT = "relevant"
    RECENT = "recent"


class Form(enum.IntEnum):
    """The text form an entry is returned in; AUTO is a request, never a result, and EXCERPT
    a result, never a request."""

    FULL = 1
    COMPRESSED = 2
    AUTO = 3
    EXCERPT = 4  # some of the full form's segments (fit.excerpts)


class Fill(enum.Enum):
    """What to do with a candidate that does not fit the remaining budget."""

    SKIP = "skip"  # leave it out; smaller ones after it may still go in
    STOP = "stop"  # stop filling (the seed's behaviour; docs/fit.md)


class Reason(enum.IntEnum):
    """Why a candidate is (not) in the selection; one per candidate."""

    SELECTED = 0
    FILTERED = 1  # excluded by the request's filters (or expired) before scoring
    MIN_SCORE = 2  # score below min_score
    TOO_LARGE = 3  # larger than the whole budget in every allowed form
    BUDGET = 4  # did not fit what was left of the budget
    MAX_ENTRIES = 5  # max_entries were already selected (and it would still have fitted)
    ADAPTIVE = 6  # cut by the adaptive count cap
    FLOOR = 7  # RELEVANT: its turn's relevance is under the floor
    UNATTACHED = 8  # RELEVANT/RECENT: a tool output older than every conversation turn

    @property
    def label(self) -> str:
        """Lowercase name, as explain output shows it."""
        return self.name.lower()


@dataclass(frozen=True, eq=False)
class Selection:
    """The entries that go into the call, in chronological order, and why the rest do not.

    `indices`, `ranks`, `forms` and `tokens` are aligned: candidate row, 1-based position in
    fill order (1 went in first), Form (FULL, COMPRESSED or EXCERPT) and tokens in that form.
    `reasons` has one Reason code per candidate (SELECTED for the chosen ones). `excerpts`
    holds, for each row selected as an excerpt, which of its segments it shows.
    """

    indices: npt.NDArray[np.int64]
    ranks: npt.NDArray[np.int64]
    forms: npt.NDArray[np.int8]
    tokens: npt.NDArray[np.int64]
    reasons: npt.NDArray[np.int8]
    excerpts: Mapping[int, Excerpt] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        """Tokens of all selected entries in their returned forms (always <= the budget)."""
        return int(self.tokens.sum())

    @property
    def left_out(self) -> int:
        """How many candidates were not selected."""
        return int(self.reasons.size - self.indices.size)

    def reason_of(self, index: int) -> Reason:
        """The Reason for candidate `index`."""
        return Reason(int(self.reasons[index]))

    def reason_counts(self) -> dict[Reason, int]:
        """How many candidates had each reason (reasons that occur only)."""
        counts = np.bincount(self.reasons.astype(np.int64), minlength=len(Reason))
        return {Reason(i): int(c) for i, c in enumerate(counts) if c}
