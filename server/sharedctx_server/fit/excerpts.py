"""Excerpts: the part of a large entry that answers the query (docs/excerpts.md).

A cut entry (fit.segments) can go into a Fit as an excerpt: some of its segments, in text
order, with an omission marker wherever lines are left out. What goes in is decided from
each segment's relevance to the query, `rho` in [0, 1]:

    rho = (lexical + ERROR_SHARE * error) / (1 + ERROR_SHARE)

where `lexical` is the segment's BM25 over the namespace's segments divided by the best
segment's, and `error` its error evidence (so a failing line that matches the query beats an
equally matching quiet one, and an error line with no query word still counts a little).
Segments with rho > 0 are hits. In SCORED, every hit is a fill item scored
`entry_weight(entry score) * rho / best rho` and competes with whole entries (an entry's
lexical factor is already at least its best segment's): the namespace's best matching lines
come first, each weighed, damped, by how much its entry matters. The segments around a hit
follow as items worth CONTEXT_SHARE of it, so a tight budget takes the matching lines first
and their surroundings after. A hit that carries an error takes the segment before it along
(a traceback is already part of its record's segment).

This module is pure: costs come from the stored per-segment token counts and from
`marker_tokens`, the token count of an omission marker line, which the caller supplies.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.segment_index import SegmentTable
from sharedctx_server.fit.segments import Segments, omission_marker

__all__ = [
    "CONTEXT_SHARE",
    "ERROR_SHARE",
    "KEPT_SHARE",
    "TURN_SHARE",
    "WHOLE_SHARE",
    "Excerpt",
    "ExcerptItems",
    "ExcerptOffer",
    "MarkerTokens",
    "Relevance",
    "SegmentView",
    "excerpt_offer",
    "plan_excerpt",
    "render_excerpt",
    "segment_relevance",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
MarkerTokens = Callable[[int], int]

# Weight of a segment's error evidence beside its lexical match (rho above).
ERROR_SHARE = 0.3
# How strongly an entry's score weighs its hits' (entry_weight).
ENTRY_EXPONENT = 0.25
# What a hit's neighbouring segment is worth, as a share of the hit's score.
CONTEXT_SHARE = 0.5
# A cut entry costing more than this share of the budget (or whole only as a compressed form)
# goes in as an excerpt rather than whole when its best hits are concentrated (excerpt_offer).
WHOLE_SHARE = 0.25
# A compressed form under this share of the full form's tokens left lines out (one closer to
# the full form mostly re-spaced it): whole, it may lack the lines that matched.
KEPT_SHARE = 0.8
# "Clearly more relevance per token": the entry's strong hits cost at most 1/DENSITY of it.
DENSITY = 2.0
# A hit is strong when its rho is at least this share of the namespace's best.
STRONG_HIT = 0.5
# RELEVANT / RECENT: an oversized tool output's excerpt takes at most this share of the budget.
TURN_SHARE = 0.5
# Repeats of one line shape (line_shape) after the first REPEAT_FREE hits of that shape weigh
# REPEAT_SHARE of their score: a few examples of a repeated line show what it says and how it
# varies, and the budget goes on to lines that say something else.
REPEAT_FREE = 3
REPEAT_SHARE = 0.5
# Hit items handed to a fill: enough that their costs add up to this many budgets.
_ITEM_BUDGETS = 4


def entry_weight(scores: FloatArray) -> FloatArray:
    """How much an entry's score weighs its hits: damped (ENTRY_EXPONENT), so that between
    two lines that match alike the better entry's wins, but a line that matches better wins
    over a slightly better entry's (entry scores differ by what the whole entry is about,
    which says little about one line)."""
    return np.asarray(np.power(np.maximum(scores, 0.0), ENTRY_EXPONENT), dtype=np.float64)


def segment_relevance(raw: FloatArray, errors: FloatArray, top: float) -> FloatArray:
    """rho of each segment: its BM25 `raw` over the namespace's best `top`, blended with its
    error evidence."""
    rho = ERROR_SHARE * errors
    if top > 0:
        rho = rho + raw / top
    return np.asarray(rho / (1.0 + ERROR_SHARE), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class SegmentView:
    """One cut candidate as a Fit sees it: its segments and their relevance to the query."""

    row: int
    segments: Segments
    relevance: FloatArray


class Excerpt:
    """The segments chosen from one entry (ascending) and the excerpt's tokens: theirs plus
    one omission marker per run of left-out lines, before, between and after them."""

    def __init__(self, segments: Segments, marker_tokens: MarkerTokens) -> None:
        self._marker = marker_tokens
        self._starts: list[int] = segments.starts.tolist()
        self._lines: list[int] = segments.lines.tolist()
        self._tokens: list[int] = segments.tokens.tolist()
        self._total = segments.total_lines
        self.covered: list[int] = []
        self.tokens = 0

    def _gap_cost(self, first_line: int, end_line: int) -> int:
        return int(self._marker(end_line - first_line)) if end_line > first_line else 0

    def _delta(self, covered: list[int], segment: int) -> int:
        """Tokens that adding `segment` to `covered` (which lacks it) adds."""
        at = bisect.bisect_left(covered, segment)
        gap_start = 0 if at == 0 else self._starts[covered[at - 1]] + self._lines[covered[at - 1]]
        gap_end = self._total if at == len(covered) else self._starts[covered[at]]
        start, end = self._starts[segment], self._starts[segment] + self._lines[segment]
        return (
            self._tokens[segment]
            - self._gap_cost(gap_start, gap_end)
            + self._gap_cost(gap_start, start)
            + self._gap_cost(end, gap_end)
        )

    def cost_with(self, picks: Sequence[int]) -> int:
        """The excerpt's tokens if `picks` were added."""
        covered = self.covered if self.covered or not picks else []
        tokens = self.tokens if self.covered else self._gap_cost(0, self._total)
        scratch: list[int] | None = None
        for segment in picks:
            current = scratch if scratch is not None else covered
            if segment in current:
                continue
            tokens += self._delta(current, segment)
            scratch = list(current) if scratch is None else scratch
            bisect.insort(scratch, segment)
        return tokens

    def add(self, picks: Sequence[int]) -> None:
        """Add `picks` (any already covered are ignored)."""
        self.tokens = self.cost_with(picks)
        for segment in picks:
            if segment not in self.covered:
                bisect.insort(self.covered, segment)

    def ranges(self) -> list[tuple[int, int]]:
        """The line ranges the excerpt shows, 1-based and inclusive, adjacent segments merged."""
        out: list[tuple[int, int]] = []
        for segment in self.covered:
            first = self._starts[segment] + 1
            last = self._starts[segment] + self._lines[segment]
            if out and out[-1][1] + 1 == first:
                out[-1] = (out[-1][0], last)
            else:
                out.append((first, last))
        return out

    @property
    def total_lines(self) -> int:
        """Lines of the whole entry."""
        return self._total


def render_excerpt(lines: Sequence[str], ranges: Sequence[tuple[int, int]]) -> str:
    """The excerpt's text: the lines of `ranges` (1-based, inclusive) of the full form, each
    run of left-out lines replaced by one omission marker line; every line ends in a newline,
    as the segments' token counts assume."""
    out: list[str] = []
    shown = 0
    for first, last in ranges:
        if first - 1 > shown:
            out.append(omission_marker(first - 1 - shown))
        out.extend(lines[first - 1 : last])
        shown = last
    if len(lines) > shown:
        out.append(omission_marker(len(lines) - shown))
    return "\n".join(out) + "\n"


@dataclass(frozen=True, eq=False)
class Relevance:
    """One query's relevance of every segment of the namespace's cut entries: `rho` is
    aligned with `table` and 0 for entries that are not `candidates` (a mask over entry
    rows); `lexical` is each segment's BM25 over the best candidate segment's."""

    table: SegmentTable
    rho: FloatArray
    lexical: FloatArray
    candidates: BoolArray
    segments_of: Callable[[int], Segments]

    @classmethod
    def of(
        cls,
        table: SegmentTable,
        raw: FloatArray,
        candidates: BoolArray,
        segments_of: Callable[[int], Segments],
    ) -> Relevance:
        """From the segments' BM25 `raw` and `candidates`, a mask over entry rows."""
        eligible = candidates[table.slot_of] if len(table) else np.zeros(0, dtype=np.bool_)
        raw = np.where(eligible, raw, 0.0)
        top = float(raw.max()) if raw.size else 0.0
        rho = np.where(eligible, segment_relevance(raw, table.errors, top), 0.0)
        lexical = raw / top if top > 0 else raw
        return cls(table, rho, lexical, candidates, segments_of)

    def per_entry_max(self, values: FloatArray) -> FloatArray:
        """The largest of `values` (aligned with the table) in each cut entry, table order."""
        starts = self.table.bounds[:-1]
        return np.maximum.reduceat(values, starts) if starts.size else np.zeros(0)

    def view(self, row: int) -> SegmentView:
        """The cut entry in `row` with its segments' relevance."""
        return SegmentView(row, self.segments_of(row), self.rho[self.table.span(row)])


@dataclass(frozen=True, eq=False)
class ExcerptItems:
    """Fill items that add segments to excerpts, aligned: the entry's row, its segments to
    add (`second` is -1 or a segment that comes along), the hit it is context of (-1 for a
    hit: context only goes in beside its hit), the item's score and the least it can cost
    (its tokens less the largest marker it may replace). Segments are numbered inside their
    entry."""

    row: IntArray
    first: IntArray
    second: IntArray
    anchor: IntArray
    score: FloatArray
    lower_cost: IntArray

    def __len__(self) -> int:
        return int(self.row.size)

    def where(self, keep: BoolArray) -> ExcerptItems:
        """The items where `keep` holds."""
        return ExcerptItems(
            self.row[keep],
            self.first[keep],
            self.second[keep],
            self.anchor[keep],
            self.score[keep],
            self.lower_cost[keep],
        )


def _items(
    relevance: Relevance, entry_scores: FloatArray, budget: int, marker_tokens: MarkerTokens
) -> ExcerptItems:
    """Every hit and the neighbours of each as fill items, keeping only the best whose costs
    add up to a few budgets (the rest could never be reached)."""
    table = relevance.table
    hits = np.flatnonzero(relevance.rho > 0)
    slot, local = table.slot_of[hits], table.local[hits]
    # rho over the namespace's best: the best line in the namespace stands for its entry at
    # the entry's own score (rho alone tops out at 1 / (1 + ERROR_SHARE) for a quiet line,
    # which let whole entries without a single matching line outrank it).
    top = float(relevance.rho.max()) if hits.size else 1.0
    score = entry_weight(entry_scores[slot]) * relevance.rho[hits] / top
    score *= np.where(
        _repeat_rank(table.shapes[hits], score, slot, local) < REPEAT_FREE, 1.0, REPEAT_SHARE
    )
    n = len(table)
    # A hit that carries an error brings the segment before it.
    with_before = (table.errors[hits] > 0) & (local > 0)
    before_tokens = np.where(with_before, table.tokens[np.maximum(hits - 1, 0)], 0)
    has_next = (hits + 1 < n) & (table.slot_of[np.minimum(hits + 1, n - 1)] == slot)
    prev_ok, next_ok = local > 0, has_next
    row = np.concatenate([slot, slot[prev_ok], slot[next_ok]])
    first = np.concatenate([local, local[prev_ok] - 1, local[next_ok] + 1])
    second = np.concatenate(
        [np.where(with_before, local - 1, -1), np.full(int(prev_ok.sum() + next_ok.sum()), -1)]
    )
    anchor = np.concatenate([np.full(hits.size, -1), local[prev_ok], local[next_ok]])
    scores = np.concatenate([score, CONTEXT_SHARE * score[prev_ok], CONTEXT_SHARE * score[next_ok]])
    cost = np.concatenate(
        [
            table.tokens[hits] + before_tokens,
            table.tokens[hits[prev_ok] - 1],
            table.tokens[hits[next_ok] + 1],
        ]
    ).astype(np.int64)
    lower = np.maximum(cost - marker_tokens(10**9), 1)
    # The best hits (ties: row, then segment) until their costs cover a few budgets, each
    # with its context: a hit's neighbours rank below many weaker hits, but only they can
    # complete what the hit shows (the rest of a JSON item cut at max_lines), and only
    # beside it.
    ranked = np.lexsort((local, slot, -score))
    reach = np.cumsum(np.minimum(cost[: hits.size][ranked], budget))
    kept_hits = np.zeros(hits.size, dtype=np.bool_)
    kept_hits[ranked[: int(np.searchsorted(reach, _ITEM_BUDGETS * budget)) + 1]] = True
    source = np.concatenate(
        [np.arange(hits.size), np.flatnonzero(prev_ok), np.flatnonzero(next_ok)]
    )
    order = np.lexsort((first, row, -scores))
    keep = order[kept_hits[source[order]]]
    return ExcerptItems(
        row[keep].astype(np.int64),
        first[keep].astype(np.int64),
        second[keep].astype(np.int64),
        anchor[keep].astype(np.int64),
        scores[keep],
        lower[keep],
    )


def _repeat_rank(shapes: IntArray, score: FloatArray, row: IntArray, local: IntArray) -> IntArray:
    """Per hit, how many hits of its shape rank above it (best first; ties: row, segment);
    0 for hits without a shape."""
    order = np.lexsort((local, row, -score))
    by_shape = order[np.argsort(shapes[order], kind="stable")]
    grouped = shapes[by_shape]
    at = np.arange(grouped.size)
    starts = np.ones(grouped.size, dtype=np.bool_)
    starts[1:] = grouped[1:] != grouped[:-1]
    rank = np.empty(grouped.size, dtype=np.int64)
    rank[by_shape] = at - np.maximum.accumulate(np.where(starts, at, 0))
    return np.where(shapes == 0, 0, rank)


@dataclass(frozen=True, eq=False)
class ExcerptOffer:
    """What a SCORED fill may excerpt, over the n candidate rows: which are cut entries,
    which of those hold a hit, which enter only as excerpts (whole, they would take more than
    WHOLE_SHARE of the budget while their strong hits, at least STRONG_HIT of the namespace's
    best, hold at most 1/DENSITY of their tokens: an excerpt carries clearly more relevance
    per token), and the fill items of the hits."""

    relevance: Relevance
    items: ExcerptItems
    cut: BoolArray
    has_hits: BoolArray
    only: BoolArray
    marker_tokens: MarkerTokens

    def excerpt(self, row: int) -> Excerpt:
        """A new, empty excerpt of `row`."""
        return Excerpt(self.relevance.segments_of(row), self.marker_tokens)

    def within(self, pool: BoolArray) -> ExcerptOffer:
        """The offer for the rows of `pool` only."""
        return replace(
            self,
            items=self.items.where(pool[self.items.row]),
            cut=self.cut & pool,
            has_hits=self.has_hits & pool,
            only=self.only & pool,
        )


def excerpt_offer(
    relevance: Relevance,
    entry_scores: FloatArray,
    whole_costs: IntArray,
    budget: int,
    marker_tokens: MarkerTokens,
    whole_omits: BoolArray | None = None,
) -> ExcerptOffer:
    """The offer for a SCORED fill over the rows of `entry_scores`; `whole_costs[row]`: the
    entry's smallest whole form; `whole_omits[row]`: that form is a compressed one, which may
    leave out the lines that matched (None: no row's does)."""
    n = entry_scores.size
    table = relevance.table
    cut = np.zeros(n, dtype=np.bool_)
    has_hits = np.zeros(n, dtype=np.bool_)
    only = np.zeros(n, dtype=np.bool_)
    if len(table):
        rho = relevance.rho
        best = relevance.per_entry_max(rho)
        cut[table.slots] = relevance.candidates[table.slots]
        has_hits[table.slots] = best > 0
        strong = rho >= STRONG_HIT * float(rho.max())
        strong_tokens = np.add.reduceat(np.where(strong, table.tokens, 0), table.bounds[:-1])
        # Against the text the segments cut (the full form), not the whole form's cost: a
        # compressed form is cheaper but need not hold the lines that matched.
        text_tokens = np.add.reduceat(table.tokens, table.bounds[:-1])
        whole = whole_costs[table.slots]
        # Whole, a compressed form may have dropped the very lines that matched: then the
        # excerpt is the only form that surely shows them, whatever the whole form costs.
        omits = whole_omits[table.slots] if whole_omits is not None else False
        only[table.slots] = (
            (best > 0)
            & (omits | (whole > WHOLE_SHARE * budget))
            & (strong_tokens * DENSITY <= text_tokens)
        )
    return ExcerptOffer(
        relevance=relevance,
        items=_items(relevance, entry_scores, budget, marker_tokens),
        cut=cut,
        has_hits=has_hits,
        only=only,
        marker_tokens=marker_tokens,
    )


def plan_excerpt(view: SegmentView, allowance: int, marker_tokens: MarkerTokens) -> Excerpt | None:
    """The excerpt of one entry within `allowance` tokens (RELEVANT and RECENT): its hits best
    first, each followed by its neighbours, or, when nothing matches, its last segments (a tool
    output's result and errors are usually at its end). None when not even one segment fits.
    """
    excerpt = Excerpt(view.segments, marker_tokens)
    count = len(view.segments)
    hits = np.flatnonzero(view.relevance > 0)
    if hits.size:
        ranked = hits[np.lexsort((hits, -view.relevance[hits]))].tolist()
        picks = [[h - 1, h] if view.segments.errors[h] > 0 and h > 0 else [h] for h in ranked]
        picks += [[n] for h in ranked for n in (h - 1, h + 1) if 0 <= n < count]
    else:
        picks = [[s] for s in range(count - 1, -1, -1)]
    for pick in picks:
        if excerpt.cost_with(pick) <= allowance:
            excerpt.add(pick)
    return excerpt if excerpt.covered else None
