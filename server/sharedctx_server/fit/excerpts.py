"""Excerpts: the part of a large entry that answers the query (docs/excerpts.md).

A cut entry (fit.segments) can go into a Fit as an excerpt: some of its segments, in text
order, with an omission marker wherever lines are left out. What goes in is decided from
each segment's relevance to the query, `rho` in [0, 1]:

    rho = (lexical + ERROR_SHARE * error) / (1 + ERROR_SHARE)

where `lexical` is the segment's BM25 over the namespace's segments divided by the best
segment's, and `error` its error evidence (so a failing line that matches the query beats an
equally matching quiet one, and an error line with no query word still counts a little).
Segments with rho > 0 are hits. In SCORED, every hit is a fill item scored `entry score * rho`
and competes with whole entries (an entry's lexical factor is already at least its best
segment's): the namespace's best matching lines come first, each weighed by how much its
entry matters. The segments around a hit follow as items worth CONTEXT_SHARE of it, so a
tight budget takes the matching lines first and their surroundings after. A hit that carries
an error takes the segment before it along (a traceback is already part of its record's
segment).

This module is pure: costs come from the stored per-segment token counts and from
`marker_tokens`, the token count of an omission marker line, which the caller supplies.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.segments import Segments, omission_marker

__all__ = [
    "CONTEXT_SHARE",
    "ERROR_SHARE",
    "TURN_SHARE",
    "WHOLE_SHARE",
    "Excerpt",
    "ExcerptItems",
    "ExcerptOffer",
    "MarkerTokens",
    "SegmentView",
    "excerpt_items",
    "excerpt_offer",
    "excerpt_preferred",
    "plan_excerpt",
    "render_excerpt",
    "segment_relevance",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
MarkerTokens = Callable[[int], int]

# Weight of a segment's error evidence beside its lexical match (rho above).
ERROR_SHARE = 0.3
# What a hit's neighbouring segment is worth, as a share of the hit's score.
CONTEXT_SHARE = 0.5
# A cut entry costing more than this share of the budget goes in as an excerpt rather than
# whole when its best hits are concentrated (see excerpt_preferred).
WHOLE_SHARE = 0.25
# "Clearly more relevance per token": the entry's strong hits cost at most 1/DENSITY of it.
DENSITY = 2.0
# A hit is strong when its rho is at least this share of the namespace's best.
STRONG_HIT = 0.5
# RELEVANT / RECENT: an oversized tool output's excerpt takes at most this share of the budget.
TURN_SHARE = 0.5
# Hit items handed to a fill: enough that their costs add up to this many budgets.
_ITEM_BUDGETS = 4


def segment_relevance(raw: FloatArray | None, errors: FloatArray, top: float) -> FloatArray:
    """rho of each segment: its BM25 `raw` (None: no query term in it) over the namespace's
    best `top`, blended with its error evidence."""
    rho = ERROR_SHARE * errors
    if raw is not None and top > 0:
        rho = rho + raw / top
    return np.asarray(rho / (1.0 + ERROR_SHARE), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class SegmentView:
    """One cut candidate as a Fit sees it: its segments and their relevance to the query."""

    row: int
    segments: Segments
    relevance: FloatArray

    @property
    def best(self) -> float:
        """The relevance of its best segment (0 when nothing matches)."""
        return float(self.relevance.max()) if self.relevance.size else 0.0


class Excerpt:
    """The segments chosen from one entry (ascending) and the excerpt's tokens: theirs plus
    one omission marker per run of left-out lines, before, between and after them."""

    def __init__(self, segments: Segments, marker_tokens: MarkerTokens) -> None:
        self._segments = segments
        self._marker = marker_tokens
        self._starts: list[int] = segments.starts.tolist()
        self._lines: list[int] = segments.lines.tolist()
        self._tokens: list[int] = segments.tokens.tolist()
        self._total = segments.total_lines
        self.covered: list[int] = []
        self.tokens = 0

    def __len__(self) -> int:
        return len(self.covered)

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


def excerpt_preferred(view: SegmentView, whole_cost: int, budget: int, top: float) -> bool:
    """Whether a cut entry should enter only as an excerpt, never whole: it would take more
    than WHOLE_SHARE of the budget, and its strong hits (at least STRONG_HIT of `top`, the
    namespace's best segment relevance) hold at most 1/DENSITY of its tokens: an excerpt then
    carries clearly more relevance per token."""
    if view.best <= 0 or whole_cost <= WHOLE_SHARE * budget:
        return False
    strong = view.relevance >= STRONG_HIT * top
    return float(view.segments.tokens[strong].sum()) * DENSITY <= whole_cost


@dataclass(frozen=True, eq=False)
class ExcerptItems:
    """Fill items that add segments to excerpts, aligned: the entry's row, its segments to
    add (`second` is -1 or a segment that comes along), the hit it is context of (-1 for a
    hit: context only goes in beside its hit), the item's score and the least it can cost
    (its tokens less the largest marker it may replace)."""

    row: IntArray
    first: IntArray
    second: IntArray
    anchor: IntArray
    score: FloatArray
    lower_cost: IntArray

    def __len__(self) -> int:
        return int(self.row.size)

    @staticmethod
    def empty() -> ExcerptItems:
        """No items."""
        none = np.zeros(0, dtype=np.int64)
        return ExcerptItems(none, none, none, none, np.zeros(0), none)


def excerpt_items(
    views: Sequence[SegmentView],
    entry_scores: FloatArray,
    budget: int,
    marker_tokens: MarkerTokens,
) -> ExcerptItems:
    """The hits of every view and their neighbours as fill items, best first.

    `entry_scores[row]` is each view's entry score. Only the best items whose costs add up to
    a few budgets are returned: the rest could never be reached.
    """
    rows, firsts, seconds, anchors, scores, tokens = [], [], [], [], [], []
    for view in views:
        hits = np.flatnonzero(view.relevance > 0)
        if hits.size == 0:
            continue
        score = float(entry_scores[view.row]) * view.relevance[hits]
        seg_tokens = view.segments.tokens
        count = len(view.segments)
        for neighbour in (hits - 1, hits + 1):
            ok = (neighbour >= 0) & (neighbour < count)
            rows.append(np.full(int(ok.sum()), view.row))
            firsts.append(neighbour[ok])
            seconds.append(np.full(int(ok.sum()), -1))
            anchors.append(hits[ok])
            scores.append(CONTEXT_SHARE * score[ok])
            tokens.append(seg_tokens[neighbour[ok]])
        # A hit that carries an error brings the segment before it.
        before = np.where((view.segments.errors[hits] > 0) & (hits > 0), hits - 1, -1)
        rows.append(np.full(hits.size, view.row))
        firsts.append(hits)
        seconds.append(before)
        anchors.append(np.full(hits.size, -1))
        scores.append(score)
        tokens.append(seg_tokens[hits] + np.where(before >= 0, seg_tokens[before], 0))
    if not rows:
        return ExcerptItems.empty()
    row = np.concatenate(rows).astype(np.int64)
    first = np.concatenate(firsts).astype(np.int64)
    second = np.concatenate(seconds).astype(np.int64)
    anchor = np.concatenate(anchors).astype(np.int64)
    score = np.concatenate(scores)
    cost = np.concatenate(tokens).astype(np.int64)
    saving = marker_tokens(10**9)
    lower = np.maximum(cost - saving, 1)
    # Best first (ties: row, then segment), cut once their costs cover a few budgets.
    order = np.lexsort((first, row, -score))
    reach = np.cumsum(np.minimum(cost[order], budget))
    keep = order[: int(np.searchsorted(reach, _ITEM_BUDGETS * budget)) + 1]
    return ExcerptItems(
        row[keep], first[keep], second[keep], anchor[keep], score[keep], lower[keep]
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


@dataclass(frozen=True, eq=False)
class ExcerptOffer:
    """What a SCORED fill may excerpt: the view of each cut candidate with hits, by row, the
    fill items of those hits, the rows that enter only as excerpts (excerpt_preferred), and
    every cut candidate (with or without hits)."""

    views: Mapping[int, SegmentView]
    items: ExcerptItems
    only: frozenset[int]
    marker_tokens: MarkerTokens
    cut: frozenset[int] = frozenset()

    def excerpt(self, row: int) -> Excerpt:
        """A new, empty excerpt of `row`."""
        return Excerpt(self.views[row].segments, self.marker_tokens)


def excerpt_offer(
    views: Sequence[SegmentView],
    entry_scores: FloatArray,
    whole_costs: IntArray,
    budget: int,
    marker_tokens: MarkerTokens,
    cut: frozenset[int] = frozenset(),
) -> ExcerptOffer:
    """The offer for a SCORED fill; `whole_costs[row]`: the entry's smallest whole form;
    `views`: the cut candidates with hits, `cut`: all of them."""
    top = max((v.best for v in views), default=0.0)
    only = frozenset(
        v.row for v in views if excerpt_preferred(v, int(whole_costs[v.row]), budget, top)
    )
    return ExcerptOffer(
        views={v.row: v for v in views},
        items=excerpt_items(views, entry_scores, budget, marker_tokens),
        only=only,
        marker_tokens=marker_tokens,
        cut=cut | frozenset(v.row for v in views),
    )
