"""Filling the token budget from scored candidates (docs/fit.md, "Selection").

Order of play: filtered-out and under-`min_score` candidates are dropped; the `keep_recent`
newest go in first (each if it fits); the rest follow in descending score (ties: newer first,
then the lower row, i.e. key order) under `fill`, up to `max_entries`; `adaptive` then caps
the count. The budget is never exceeded, and every candidate gets a Reason.

With an ExcerptOffer (fit.excerpts), the walk also holds excerpt items: each adds segments of
a large entry to that entry's excerpt, ranked by its own score among the whole entries. An
entry enters whole or as an excerpt, never both: an excerpt becomes the whole entry when the
whole entry's turn comes (or, after the walk, when what is left allows) and the requested form
is the full one, which holds every line the excerpt shows.

Only the candidates actually walked are visited one by one: the ranked order is produced in
growing chunks with partial sorts (np.partition), and the walk stops as soon as nothing left
could fit, so a 100k-entry namespace costs a few O(n) array passes plus the walk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.adaptive_sizer import SizerProfile, compute_optimal_k
from sharedctx_server.fit.budget import Budget, SelectionOptions, auto_form, smallest_cost
from sharedctx_server.fit.excerpt_items import ExcerptItems
from sharedctx_server.fit.excerpts import WHOLE_SHARE, ExcerptOffer
from sharedctx_server.fit.ranking import Ranking
from sharedctx_server.fit.result import Fill, Reason, Selection

__all__ = ["SelectionOptions", "TextSource", "auto_form", "select_entries", "smallest_cost"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Lifted excerpt items keep their order by this much per rank (_standing_in): far below any
# gap between two entries' scores, far above a float's resolution near 1.
_LIFT_STEP = 1e-12
# A SKIP walk looks this many items past one that does not fit one by one before it scans
# the rest of the chunk with numpy (a scan costs as much as some tens of looks).
_NEAR = 8
# Texts of the given candidate rows, in the order given (for the adaptive cap).
TextSource: TypeAlias = Sequence[str] | Callable[[IntArray], Sequence[str]]


def select_entries(
    scores: FloatArray,
    timestamps: FloatArray,
    original_tokens: IntArray,
    compressed_tokens: IntArray,
    options: SelectionOptions,
    *,
    eligible: BoolArray | None = None,
    texts: TextSource | None = None,
    order: IntArray | None = None,
    excerpts: ExcerptOffer | None = None,
) -> Selection:
    """Choose which candidates fill the budget; see the module docstring for the rules.

    `eligible` is the filters' verdict (False: reason FILTERED). `texts` gives candidates'
    texts for the adaptive cap, which runs compute_optimal_k over the entries the fill chose,
    in fill order (see _adaptive_cut for why those). `order` orders entries with equal
    timestamps (higher: written later, so newer); without it, the row decides (lower first).
    A store whose rows are not in a canonical order passes its write sequence here, so every
    replica breaks ties alike. `excerpts`: what may go in as excerpts (fit.excerpts).
    """
    n = scores.shape[0]
    if order is None:
        newest_tiebreak = chrono_tiebreak = np.arange(n, dtype=np.int64)
    else:
        chrono_tiebreak = np.asarray(order, dtype=np.int64)
        newest_tiebreak = -chrono_tiebreak
    for name, arr in (
        ("timestamps", timestamps),
        ("original_tokens", original_tokens),
        ("compressed_tokens", compressed_tokens),
    ):
        if arr.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},)")
    if options.adaptive is not None and texts is None:
        raise ValueError("the adaptive cap needs the candidates' texts")
    times = np.asarray(timestamps, dtype=np.float64)
    full = np.asarray(original_tokens, dtype=np.int64)
    comp = np.asarray(compressed_tokens, dtype=np.int64)
    ranked_scores = np.where(np.isnan(scores), -np.inf, scores).astype(np.float64)

    reasons = np.full(n, Reason.BUDGET, dtype=np.int8)
    pool = np.ones(n, dtype=np.bool_) if eligible is None else np.array(eligible, dtype=np.bool_)
    reasons[~pool] = Reason.FILTERED
    below = pool & (ranked_scores < options.min_score)
    reasons[below] = Reason.MIN_SCORE
    pool &= ~below
    smallest = smallest_cost(options.form, full, comp)

    recent = _newest(pool, times, options.keep_recent, newest_tiebreak)
    offer = _usable(excerpts, pool)
    whole = pool & ~_too_large(pool, smallest, options.budget_tokens, offer, reasons)
    if offer is not None:
        whole &= ~offer.only
    budget = Budget(options, offer)
    promised = [
        i for i in recent.tolist() if whole[i] and not _demoted(offer, i, smallest, options)
    ]
    _take_promised(budget, promised, smallest, full, comp, reasons)

    ranked_pool = whole.copy()
    ranked_pool[promised] = False
    items = _Items(n, ranked_pool, ranked_scores, times, smallest, newest_tiebreak, offer)
    visited = np.zeros(items.size, dtype=np.bool_)
    ranking = Ranking(items.pool, items.scores, items.times, items.costs, items.tiebreak)
    stop = _fill_ranked(
        budget, ranking, items.place(budget, full, comp), items.costs, options, visited
    )
    if stop is Reason.MAX_ENTRIES:
        # Rows the walk never reached: max_entries is why when they would still have fitted
        # what was left of the budget, whole or by an excerpt item; otherwise (and for rows
        # passed over) it is BUDGET.
        capped = ranked_pool & ~visited[:n] & (smallest <= budget.left)
        if offer is not None:
            open_items = ~visited[n:] & (offer.items.lower_cost <= budget.left)
            capped[offer.items.row[open_items]] = True
        reasons[capped] = Reason.MAX_ENTRIES
    if budget.capped:
        reasons[np.asarray(budget.capped, dtype=np.int64)] = Reason.MAX_ENTRIES
    for row in list(budget.excerpts):
        # What is left after the walk: a whole entry in place of its excerpt when it fits.
        budget.upgrade(row, int(full[row]))
    if budget.taken:
        reasons[np.asarray(budget.taken, dtype=np.int64)] = Reason.SELECTED

    keep = len(budget.taken)
    if options.adaptive is not None and keep and texts is not None:
        keep = _adaptive_cut(budget.taken, options.adaptive, texts)
        if keep < len(budget.taken):
            reasons[np.asarray(budget.taken[keep:], dtype=np.int64)] = Reason.ADAPTIVE
    return _result(budget, keep, times, chrono_tiebreak, reasons)


def _too_large(
    pool: BoolArray,
    smallest: IntArray,
    budget_tokens: int,
    offer: ExcerptOffer | None,
    reasons: npt.NDArray[np.int8],
) -> BoolArray:
    """The rows of the pool whose smallest whole form exceeds the budget, marked TOO_LARGE
    unless an excerpt of them could fit (then BUDGET: if such a row ends up left out, what
    else took the budget is why, keep_recent or better entries, not its size)."""
    too_large = pool & (smallest > budget_tokens)
    reasons[too_large] = Reason.TOO_LARGE
    if offer is not None and (too_large & offer.has_hits).any():
        # Every hit counts, not only those the fill was handed (hit_items keeps the best few
        # budgets' worth): an excerpt of any of them would fit. Only these rows' hits matter.
        table = offer.relevance.table
        hits = np.flatnonzero((offer.relevance.rho > 0) & too_large[table.slot_of])
        # A hit shown alone costs its tokens and the markers for the lines around it (at
        # least one line's each): a 10-token line with 8 tokens of markers is too large for
        # a 17-token budget, whatever else the Fit holds.
        markers = (table.local[hits] > 0).astype(np.int64) + table.followed(hits)
        least = table.tokens[hits] + markers * offer.marker_tokens(1)
        fits = np.zeros(pool.size, dtype=np.bool_)
        fits[table.slot_of[hits[least <= budget_tokens]]] = True
        reasons[too_large & fits] = Reason.BUDGET
    return too_large


def _take_promised(
    budget: Budget,
    promised: list[int],
    smallest: IntArray,
    full: IntArray,
    comp: IntArray,
    reasons: npt.NDArray[np.int8],
) -> None:
    """Put the keep_recent rows in first, each if it fits, keeping room for the promised rows
    after it; one that does not fit is skipped, whatever `fill` says."""
    reserve = int(smallest[promised].sum()) if promised else 0
    for i in promised:
        reserve -= int(smallest[i])
        if budget.full:
            if smallest[i] <= budget.left:
                reasons[i] = Reason.MAX_ENTRIES
        elif not budget.take(i, int(full[i]), int(comp[i]), reserve):
            reasons[i] = Reason.BUDGET


def _usable(offer: ExcerptOffer | None, pool: BoolArray) -> ExcerptOffer | None:
    """The offer for the rows still in the pool (not under min_score), or None when none of
    them is cut."""
    if offer is None:
        return None
    usable = offer.within(pool)
    return usable if usable.cut.any() else None


def _demoted(
    offer: ExcerptOffer | None, row: int, smallest: IntArray, opts: SelectionOptions
) -> bool:
    """A keep_recent entry that is not promised a place whole: a cut entry that would take
    more than WHOLE_SHARE of the budget (the newest output of a long task would otherwise
    crowd out what answers the query). It competes like any other, whole or as an excerpt."""
    return (
        offer is not None
        and bool(offer.cut[row])
        and int(smallest[row]) > WHOLE_SHARE * opts.budget_tokens
    )


class _Items:
    """The walk's items: rows 0..n-1 are whole entries, n.. excerpt items (ExcerptItems),
    with the arrays Ranking orders them by. An excerpt item shares its entry's time and
    tie-break; among equals, whole entries come first."""

    def __init__(
        self,
        n: int,
        pool: BoolArray,
        scores: FloatArray,
        times: FloatArray,
        costs: IntArray,
        tiebreak: IntArray,
        offer: ExcerptOffer | None,
    ) -> None:
        self.n = n
        self.offer = offer
        if offer is None or not len(offer.items):
            self.pool, self.scores, self.times, self.costs = pool, scores, times, costs
            self.tiebreak = tiebreak
        else:
            it = offer.items
            # A whole entry is walked no later than its own best line would be (the line's
            # item may outscore the entry: entry_weight), so that an entry that may go in
            # whole gets that chance before its excerpt begins.
            standing = _standing_in(it, offer.only, scores, pool & ~offer.matched)
            best_line = np.zeros(n)
            lines = it.anchor < 0
            np.maximum.at(best_line, it.row[lines], standing[lines])
            self.pool = np.concatenate([pool, np.ones(len(it), dtype=np.bool_)])
            self.scores = np.concatenate([np.maximum(scores, best_line), standing])
            self.times = np.concatenate([times, times[it.row]])
            self.costs = np.concatenate([costs, it.lower_cost])
            # Ties: whole entries, then items in the order excerpt_items ranked them.
            span = np.int64(len(it) + 1)
            self.tiebreak = np.concatenate(
                [tiebreak * span, tiebreak[it.row] * span + 1 + np.arange(len(it))]
            )
        self.size = int(self.pool.size)

    def place(self, budget: Budget, full: IntArray, comp: IntArray) -> Callable[[int], bool]:
        """The walk's step: put item `i` into the budget; False when it does not fit."""
        n, offer = self.n, self.offer
        if offer is None:
            return lambda i: budget.take(i, int(full[i]), int(comp[i]))
        it = offer.items
        row, first, second = it.row.tolist(), it.first.tolist(), it.second.tolist()
        anchor = it.anchor.tolist()
        excerpts = budget.excerpts

        def step(i: int) -> bool:
            if i < n:
                return budget.take(i, int(full[i]), int(comp[i]))
            k = i - n
            # Context goes in only beside its hit: that of a hit not in an excerpt adds
            # nothing. Most context items a walk reaches are such, once the budget is nearly
            # spent; told here, they cost a lookup rather than a call.
            at = anchor[k]
            if at >= 0:
                excerpt = excerpts.get(row[k])
                if excerpt is None or at not in excerpt.covered:
                    return True
            return budget.extend(row[k], [first[k]] if second[k] < 0 else [second[k], first[k]])

        return step


def _standing_in(
    items: ExcerptItems, only: BoolArray, scores: FloatArray, whole: BoolArray
) -> FloatArray:
    """The items' scores, where the best hit of each entry that may enter only as an excerpt
    is walked before every whole entry (rows of `whole`: those that share no term with the
    query) that its entry outscores. The entry was kept from going in whole to show its best
    lines, not to let whole entries it outscores, that match nothing, take the budget first;
    a whole entry that matches keeps its place by its score (lifted over a note that said
    the answer, a weak line of one log brought every better line of others with it, 600
    tokens of them). Against other excerpts, lines keep their order: every
    line that matches at least as well as a lifted one is lifted with it (a weak line of an
    entry that matters must not pass better lines of others: a 470-token run of long lines
    of a docs diff went before the failing test's traceback)."""
    out = items.score.copy()
    hits = np.flatnonzero(items.anchor < 0)
    below = np.sort(scores[whole])
    if hits.size == 0 or below.size == 0:
        return out
    order = hits[np.lexsort((-items.score[hits], items.row[hits]))]
    first = np.ones(order.size, dtype=np.bool_)
    first[1:] = items.row[order[1:]] != items.row[order[:-1]]
    best = order[first]
    best = best[only[items.row[best]]]
    entry = scores[items.row[best]]
    # The best whole entry scored below this one; just above it (ties go to whole entries).
    at = np.searchsorted(below, entry, side="left") - 1
    beaten = at >= 0
    if not beaten.any():
        return out
    lift = np.full(out.size, -np.inf)
    lift[best[beaten]] = np.nextafter(below[at[beaten]], np.inf)
    # Items from the least to the best (ties: the later in items' order first); each stands
    # at least as high as the highest lift at or below it, and lifted ones keep their order
    # by a step per rank far below any gap between entry scores.
    ascending = np.lexsort((-np.arange(out.size), out))
    floor = np.maximum.accumulate(lift[ascending])
    lifted = floor > out[ascending]
    out[ascending[lifted]] = floor[lifted] + _LIFT_STEP * np.flatnonzero(lifted)
    return out


def _newest(pool: BoolArray, times: FloatArray, count: int, tiebreak: IntArray) -> IntArray:
    """The `count` newest rows of the pool, newest first (equal times: lower tiebreak first)."""
    rows = np.flatnonzero(pool)
    if count <= 0 or rows.size == 0:
        return np.zeros(0, dtype=np.int64)
    t = times[rows]
    if count < rows.size:
        cut = np.partition(t, rows.size - count)[rows.size - count]
        rows, t = rows[t >= cut], t[t >= cut]
    order = np.lexsort((tiebreak[rows], -t))
    return rows[order][:count].astype(np.int64)


def _fill_ranked(
    budget: Budget,
    ranking: Ranking,
    place: Callable[[int], bool],
    smallest: IntArray,
    options: SelectionOptions,
    visited: BoolArray,
) -> Reason | None:
    """Walk the ranked items into the budget with `place`, marking the items it reaches in
    `visited`. `smallest`: the least each item can cost.

    Returns MAX_ENTRIES or BUDGET when the walk stopped early for that reason, None when it
    went through every item that could fit.
    """
    skip = options.fill is Fill.SKIP
    for chunk in ranking.chunks((lambda: budget.left) if skip else None):
        costs = smallest[chunk]
        rest_min = ranking.rest_min_cost()
        # The smallest cost at or after each position: once the budget left is below it,
        # nothing further can fit and the walk ends.
        floor_after = np.minimum(np.minimum.accumulate(costs[::-1])[::-1], rest_min).tolist()
        rows = chunk.tolist()
        cost_list: list[int] | None = None  # read as a list when a SKIP first needs it
        p, m = 0, len(rows)
        stop: Reason | None = None
        while p < m:
            # At max_entries only excerpts already begun can still grow.
            if budget.full and not budget.excerpts:
                stop = Reason.MAX_ENTRIES
                break
            if budget.left < floor_after[p]:
                stop = Reason.BUDGET
                break
            if place(rows[p]):
                p += 1
                continue
            if not skip:
                p += 1
                stop = Reason.BUDGET
                break
            # SKIP: jump straight to the next item that could fit (a whole entry will); the
            # items jumped over do not, and keep BUDGET. The next few are looked at one by one
            # (usually one of them fits), the rest of the chunk at once.
            left = budget.left
            cost_list = costs.tolist() if cost_list is None else cost_list
            q = p + 1
            while q < min(m, p + _NEAR) and cost_list[q] > left:
                q += 1
            if q == p + _NEAR and q < m:
                fitting = np.flatnonzero(costs[q:] <= left)
                q = m if fitting.size == 0 else q + int(fitting[0])
            p = q
            if p >= m:
                break
        visited[chunk[:p]] = True
        if stop is not None:
            return stop
    return None


def _adaptive_cut(taken: list[int], profile: SizerProfile, texts: TextSource) -> int:
    """How many of the chosen entries (fill order) the adaptive sizer keeps.

    The sizer looks at the entries the fill chose, not at the whole ranked namespace: its
    question is how many of these carry new information. Over 100k ranked candidates it
    would both cost seconds of hashing and answer a different question (k in the tens of
    thousands, never a cap on a budget that holds twenty).
    """
    rows = np.asarray(taken, dtype=np.int64)
    items = texts(rows) if callable(texts) else [texts[i] for i in taken]
    if len(items) != len(taken):
        raise ValueError("texts returned a different number of texts than rows asked for")
    return compute_optimal_k(list(items), bias=profile.bias, min_k=profile.min_k)


def _result(
    budget: Budget,
    keep: int,
    times: FloatArray,
    tiebreak: IntArray,
    reasons: npt.NDArray[np.int8],
) -> Selection:
    taken = np.asarray(budget.taken[:keep], dtype=np.int64)
    forms = np.asarray([budget.forms[i] for i in budget.taken[:keep]], dtype=np.int8)
    costs = np.asarray([budget.costs[i] for i in budget.taken[:keep]], dtype=np.int64)
    ranks = np.arange(1, keep + 1, dtype=np.int64)
    chronological = (
        np.lexsort((tiebreak[taken], times[taken])) if keep else np.zeros(0, dtype=np.int64)
    )
    kept = set(budget.taken[:keep])
    return Selection(
        indices=taken[chronological],
        ranks=ranks[chronological],
        forms=forms[chronological],
        tokens=costs[chronological],
        reasons=reasons,
        excerpts={row: e for row, e in budget.excerpts.items() if row in kept},
    )
