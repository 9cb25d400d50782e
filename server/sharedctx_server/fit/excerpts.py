"""Excerpts: the part of a large entry that answers the query (docs/excerpts.md).

A cut entry (fit.segments) can go into a Fit as an excerpt: some of its segments, in text
order, with an omission marker wherever lines are left out. What goes in is decided from
each segment's relevance to the query (fit.segment_relevance); in SCORED, each hit and its
neighbours are fill items (fit.excerpt_items) that compete with whole entries (an entry's
lexical factor is already at least its best segment's). This module holds what an excerpt
costs and shows (Excerpt, render_excerpt), the offer a fill may take from (ExcerptOffer:
which entries enter only as excerpts) and the plan of one entry's excerpt within an
allowance (plan_excerpt, for RELEVANT and RECENT).

This module is pure: costs come from the stored per-segment token counts and from
`marker_tokens`, the token count of an omission marker line, which the caller supplies.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.excerpt_items import REPEAT_FREE, ExcerptItems, Series, hit_items
from sharedctx_server.fit.segment_relevance import MarkerTokens, Relevance, SegmentView
from sharedctx_server.fit.segments import (
    LONG_LINE_CHARS,
    Segments,
    is_long_line,
    omission_marker,
    shown_line,
)

__all__ = [
    "KEPT_SHARE",
    "TURN_SHARE",
    "WHOLE_SHARE",
    "Excerpt",
    "ExcerptOffer",
    "excerpt_offer",
    "plan_excerpt",
    "render_excerpt",
    "smallest_excerpt",
    "widened_excerpt",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
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
# An entry whose score is at least LEAD times every other's is what the query is about: whole,
# when it fits, it shows the lines that match it weakly too (a record's other fields, the
# traceback under a failing test's name), which its excerpt would leave to better-scored hits
# of lesser entries.
LEAD = 1.1
# RELEVANT / RECENT: an oversized tool output's excerpt takes at most this share of the budget.
TURN_SHARE = 0.5
# Characters per token no text exceeds in practice (English prose is about 4, code 3, a run
# of spaces more): widened_excerpt does not count a line longer than this many per token.
_DENSEST_TEXT = 8


class Excerpt:
    """The segments chosen from one entry (ascending) and the excerpt's tokens: theirs plus
    one omission marker per run of left-out lines, before, between and after them."""

    def __init__(self, segments: Segments, marker_tokens: MarkerTokens) -> None:
        self._marker = marker_tokens
        self._starts, self._lines, self._tokens = segments.as_lists
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
        if len(picks) == 1:  # the common case: one segment, no copy of `covered` to keep
            segment = picks[0]
            return tokens if segment in covered else tokens + self._delta(covered, segment)
        scratch: list[int] | None = None
        for segment in picks:
            current = scratch if scratch is not None else covered
            if segment in current:
                continue
            tokens += self._delta(current, segment)
            scratch = list(current) if scratch is None else scratch
            bisect.insort(scratch, segment)
        return tokens

    def add(self, picks: Sequence[int], tokens: int | None = None) -> None:
        """Add `picks` (any already covered are ignored); `tokens`: cost_with(picks), when
        the caller has it already."""
        self.tokens = self.cost_with(picks) if tokens is None else tokens
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


def render_excerpt(
    lines: Sequence[str], ranges: Sequence[tuple[int, int]], whole: Collection[int] = ()
) -> str:
    """The excerpt's text: the lines of `ranges` (1-based, inclusive) of the full form, each
    as `shown_line` shows it (those numbered in `whole` in full), each run of left-out lines
    replaced by one omission marker line; every line ends in a newline, as the segments'
    token counts assume."""
    out: list[str] = []
    shown = 0
    for first, last in ranges:
        if first - 1 > shown:
            out.append(omission_marker(first - 1 - shown))
        for number in range(first, last + 1):
            line = lines[number - 1]
            out.append(line if number in whole else shown_line(line))
        shown = last
    if len(lines) > shown:
        out.append(omission_marker(len(lines) - shown))
    return "\n".join(out) + "\n"


def widened_excerpt(
    lines: Sequence[str],
    ranges: Sequence[tuple[int, int]],
    tokens: int,
    room: int,
    count_tokens: Callable[[str], int],
) -> tuple[str, int] | None:
    """The excerpt of `ranges` (`tokens` as rendered) with the long lines it shows by their
    heads shown whole, first to last, as many as `room` more tokens hold, and its tokens;
    None when none fits. A plan counts a long line by its head (fit.segments); once the
    budget is filled, what is left may hold a line that is only a little too long, whose tail
    would otherwise be one `Get` away."""
    whole: list[int] = []
    spare = room
    for first, last in ranges:
        for number in range(first, last + 1):
            line = lines[number - 1]
            # A tail of more characters than this many per token of room cannot fit (no
            # tokeniser packs text that densely): not worth counting.
            if not is_long_line(line) or len(line) - LONG_LINE_CHARS > _DENSEST_TEXT * spare:
                continue
            extra = count_tokens(line) - count_tokens(shown_line(line))
            if extra <= spare:
                whole.append(number)
                spare -= extra
    if not whole:
        return None
    text = render_excerpt(lines, ranges, whole)
    # Counted whole: the lines' counts apart may miss a token where two lines join.
    counted = count_tokens(text)
    return (text, counted) if counted - tokens <= room else None


@dataclass(frozen=True, eq=False)
class ExcerptOffer:
    """What a SCORED fill may excerpt, over the n candidate rows: which are cut entries,
    which of those hold a hit, which enter only as excerpts (excerpt_offer: whole, they would
    take more than WHOLE_SHARE of the budget (unless that form shows every line and they
    have more strong hits than REPEAT_FREE), or come as a compressed form that may leave out
    what matched, while their strong hits, at least STRONG_HIT of the namespace's best, hold
    at most 1/DENSITY of their tokens; or their compressed form is known to show none of
    their best hits; unless the entry leads every other by LEAD and fits whole), and the fill
    items of the hits."""

    relevance: Relevance
    items: ExcerptItems
    cut: BoolArray
    has_hits: BoolArray
    only: BoolArray
    # Rows whose text shares a term with the query (BM25 above 0), whole or not.
    matched: BoolArray
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
            matched=self.matched & pool,
        )


def excerpt_offer(
    relevance: Relevance,
    entry_scores: FloatArray,
    whole_costs: IntArray,
    budget: int,
    marker_tokens: MarkerTokens,
    full_costs: IntArray | None = None,
    lexical: FloatArray | None = None,
    series: Series | None = None,
    rewritten: BoolArray | None = None,
) -> ExcerptOffer:
    """The offer for a SCORED fill over the rows of `entry_scores`; `whole_costs[row]`: the
    entry's smallest whole form; `full_costs[row]`: its full form's, where a whole form
    cheaper than that is the compressed one (None: every whole form is the full form);
    `lexical[row]`: the entry's BM25 for the query (None: no entry is known to match);
    `series`: which rows are runs of one command (hit_items); `rewritten[row]`: the entry's
    compressed form shows every line in fewer words (compress.REWRITING; None: none does)."""
    n = entry_scores.size
    table = relevance.table
    cut = np.zeros(n, dtype=np.bool_)
    has_hits = np.zeros(n, dtype=np.bool_)
    only = np.zeros(n, dtype=np.bool_)
    omits = np.zeros(n, dtype=np.bool_)
    if len(table):
        rho = relevance.rho
        # Per entry, from its hits alone (rho > 0): its best, and the tokens and count of its
        # strong hits.
        hits, entry_of = relevance.hits
        entries = table.slots.size
        best = np.zeros(entries)
        np.maximum.at(best, entry_of, rho[hits])
        cut[table.slots] = relevance.candidates[table.slots]
        has_hits[table.slots] = best > 0
        strong = rho[hits] >= STRONG_HIT * float(best.max(initial=0.0))
        strong_entries = entry_of[strong]
        strong_tokens = np.bincount(
            strong_entries, weights=table.tokens[hits[strong]], minlength=entries
        )
        # Against the text the segments cut (the full form), not the whole form's cost: a
        # compressed form is cheaper but need not hold the lines that matched.
        text_tokens = table.entry_tokens
        whole = whole_costs[table.slots]
        concentrated = strong_tokens * DENSITY <= text_tokens
        lacks = np.zeros(table.slots.size, dtype=np.bool_)
        full = None if full_costs is None else full_costs[table.slots]
        # A whole form that shows every line: the full form (every one, when the request
        # wants full forms), or a compressed one that says each in fewer words (`rewritten`).
        if full is None:
            shows_all = np.ones(table.slots.size, dtype=np.bool_)
        else:
            shows_all = whole >= full
            if rewritten is not None:
                shows_all |= rewritten[table.slots]
        # Such a form, whole, is how to show more strong hits than an excerpt shows freely
        # (REPEAT_FREE): "which files were deleted?" of a status, whose excerpt showed the
        # first few of its alike lines. For a few (one function's definition in a search),
        # the excerpt says it in fewer tokens, and the rule of WHOLE_SHARE holds.
        listed = shows_all.copy()
        if listed.any():  # most namespaces hold no such form: no count on every Fit
            listed &= np.bincount(strong_entries, minlength=entries) > REPEAT_FREE
        if full is not None:
            # Whole, a compressed form may have dropped the very lines that matched: then the
            # excerpt is the only form that surely shows them, whatever the whole form costs.
            # One well under the full form's size is taken to leave lines out (KEPT_SHARE);
            # one known to leave out all the entry's best hits does (_compressed_lacks); one
            # that says every line in fewer words (`rewritten`) leaves out none.
            lacks = (whole < full) & _compressed_lacks(relevance, best) & ~shows_all
            omits[table.slots] = lacks | ((whole < KEPT_SHARE * full) & ~shows_all)
        only[table.slots] = (best > 0) & (
            lacks
            | ((omits[table.slots] | ((whole > WHOLE_SHARE * budget) & ~listed)) & concentrated)
        )
        candidates = np.where(relevance.candidates, entry_scores, np.nan)
        only &= ~_clear_lead(candidates, whole_costs, budget, omits)
    return ExcerptOffer(
        relevance=relevance,
        items=hit_items(relevance, entry_scores, budget, marker_tokens, series),
        cut=cut,
        has_hits=has_hits,
        only=only,
        matched=np.zeros(n, dtype=np.bool_) if lexical is None else lexical > 0,
        marker_tokens=marker_tokens,
    )


def _compressed_lacks(relevance: Relevance, best: FloatArray) -> BoolArray:
    """Per cut entry (table order): its compressed form is known to leave out every one of
    its best hits, those that match as well as its best (Segments.in_compressed): the `ssl`
    lines of `python -X importtime`, where every line matches "import time". One that shows
    one of them (the first frame of a traceback whose every frame matches) may stand in. (An
    entry without hits has no best hit to show: it lacks all of none.)"""
    table = relevance.table
    hits, entry_of = relevance.hits
    top = relevance.rho[hits] >= best[entry_of]
    left_out = top & (table.in_compressed[hits] == 0)
    entries = table.slots.size
    return np.asarray(
        np.bincount(entry_of[left_out], minlength=entries)
        == np.bincount(entry_of[top], minlength=entries),
        dtype=np.bool_,
    )


def _clear_lead(
    scores: FloatArray, whole_costs: IntArray, budget: int, whole_omits: BoolArray
) -> BoolArray:
    """The entry that leads every other by LEAD (NaN scores: not candidates), if its whole
    form fits the budget and shows all its lines (a mask over rows: at most one)."""
    lead = np.zeros(scores.size, dtype=np.bool_)
    ranked = np.where(np.isfinite(scores), scores, -np.inf)
    if ranked.size == 0:
        return lead
    top = int(np.argmax(ranked))
    others = np.delete(ranked, top)
    runner_up = float(others.max()) if others.size else -np.inf
    fits = whole_costs[top] <= budget and not whole_omits[top]
    lead[top] = fits and ranked[top] > 0 and ranked[top] >= LEAD * max(runner_up, 0.0)
    return lead


def plan_excerpt(view: SegmentView, allowance: int, marker_tokens: MarkerTokens) -> Excerpt | None:
    """The excerpt of one entry within `allowance` tokens (RELEVANT and RECENT): its hits best
    first, then their heads (Segments.heads), then their neighbours, or, when nothing matches,
    its last segments (a tool output's result and errors are usually at its end). None when
    not even one segment fits.
    """
    excerpt = Excerpt(view.segments, marker_tokens)
    count = len(view.segments)
    ranked, picks = _picks(view)
    # Without hits, the tail: from the last segment back while they fit, not whichever
    # single segment further up happens to (a 1,500-line `find` showed its first line).
    _add_within(excerpt, picks, allowance, tail=not ranked)
    # Heads and neighbours only of the hits that went in: around a hit left out, they would
    # show what surrounds a line the excerpt does not show.
    shown = [h for h in ranked if h in excerpt.covered]
    heads = view.segments.heads
    context = [[int(heads[h])] for h in shown if heads[h] >= 0]
    context += [[n] for h in shown for n in (h - 1, h + 1) if 0 <= n < count]
    _add_within(excerpt, context, allowance)
    return excerpt if excerpt.covered else None


def smallest_excerpt(view: SegmentView, marker_tokens: MarkerTokens) -> int:
    """The tokens of the smallest excerpt plan_excerpt can make of the entry: its cheapest
    single pick (plan_excerpt within that many tokens is never None)."""
    empty = Excerpt(view.segments, marker_tokens)
    ranked, picks = _picks(view)
    return min(empty.cost_with(pick) for pick in (picks if ranked else picks[:1]))


def _picks(view: SegmentView) -> tuple[list[int], list[list[int]]]:
    """The hits, best first, and the picks that show them (each with the segment before when
    it carries an error); without hits, no hits and the segments from the last back."""
    hits = np.flatnonzero(view.relevance > 0)
    if not hits.size:
        return [], [[s] for s in range(len(view.segments) - 1, -1, -1)]
    ranked = hits[np.lexsort((hits, -view.relevance[hits]))].tolist()
    errors = view.segments.errors
    return ranked, [[h - 1, h] if errors[h] > 0 and h > 0 else [h] for h in ranked]


def _add_within(
    excerpt: Excerpt, picks: Sequence[Sequence[int]], allowance: int, tail: bool = False
) -> None:
    """Add each of `picks`, in order, that keeps `excerpt` within `allowance` tokens; with
    `tail`, stop at the first that does not."""
    for pick in picks:
        if excerpt.cost_with(pick) <= allowance:
            excerpt.add(pick)
        elif tail:
            return
