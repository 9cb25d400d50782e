"""The RELEVANT and RECENT strategies: conversation turns (fit.turns) instead of scored
entries. A turn is the unit of selection: all its entries go in, or none.

- RELEVANT: the decision of relevance.select_relevant_turns (keep_recent turns always, older
  ones above the relevance floor), made from a TurnIndex's per-turn words rather than by
  tokenising every turn again (tests hold the two to the same relevance and floor), then the
  kit's downstream subtractive pass: shed the oldest non-recent survivors, then the oldest
  recent ones, until the budget (and max_entries) holds.
- RECENT: the naive newest-first rule of relevance.select_naive_turns, over the entries' own
  token counts.

The budget counts each selected entry's tokens in its returned form (the Fit rule), not the
turn's relevance text; `estimate_tokens` only feeds the floor's utilisation as in the kit.
`fill`, `min_score` and `adaptive` do not apply to turn strategies. An oversized cut entry of
a turn too large for the budget may come as an excerpt (fit.turn_excerpts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.budget import (
    SelectionOptions,
    auto_form,
    compressed_forms,
    smallest_cost,
)
from sharedctx_server.fit.excerpts import Excerpt
from sharedctx_server.fit.relevance import EstimateTokens, content_tokens, relevance_floor
from sharedctx_server.fit.result import Form, Reason, Selection
from sharedctx_server.fit.turn_excerpts import TurnExcerpts, shrink_oversized
from sharedctx_server.fit.turns import ConversationEntry, TurnIndex, Turns, index_turns

__all__ = ["TurnSelection", "select_recent", "select_relevant"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class TurnSelection:
    """The selection plus the turn structure behind it (for explain).

    `turn_of[i]`: the turn of candidate i (-1: filtered out or unattached); `relevance[t]`:
    turn t's relevance to the query (RELEVANT; zeros for RECENT); `floor`: the relevance
    floor used (None for RECENT).
    """

    selection: Selection
    turn_of: IntArray
    relevance: FloatArray
    floor: float | None


def _index_of(
    entries: Sequence[ConversationEntry] | TurnIndex,
    eligible: BoolArray | None,
    estimate_tokens: EstimateTokens | None,
) -> TurnIndex:
    if isinstance(entries, TurnIndex):
        return entries
    return index_turns(entries, eligible, estimate_tokens)


def _too_large(grouped: Turns, turn_cost: IntArray, budget: int) -> BoolArray:
    big = turn_cost > budget
    _mark_turns(grouped, np.flatnonzero(big), Reason.TOO_LARGE)
    return big


def _mark_turns(grouped: Turns, turns: IntArray, reasons: int | npt.NDArray[np.integer]) -> None:
    """Give every entry of `turns` its turn's reason (one for all, or one per turn): one
    vectorised pass instead of an assignment per turn, as thousands of turns are common."""
    if turns.size == 0:
        return
    per_turn = np.full(len(grouped.turns), -1, dtype=np.int16)
    per_turn[turns] = reasons
    rows = np.flatnonzero(grouped.turn_of >= 0)
    given = per_turn[grouped.turn_of[rows]]
    hit = given >= 0
    grouped.reasons[rows[hit]] = given[hit]


def _finish(
    grouped: Turns,
    kept_turns: list[int],
    options: SelectionOptions,
    full: IntArray,
    comp: IntArray,
    plans: dict[int, Excerpt],
) -> Selection:
    rows = np.asarray([i for t in kept_turns for i in grouped.members[t]], dtype=np.int64)
    chosen = rows[np.argsort(grouped.position[rows], kind="stable")]  # chronological
    grouped.reasons[chosen] = Reason.SELECTED
    newest_first = chosen[::-1]
    excerpted = [r for r in chosen.tolist() if r in plans]
    if excerpted:
        # An excerpt costs what it costs in any form; its form is set after.
        full, comp = full.copy(), comp.copy()
        for r in excerpted:
            full[r] = comp[r] = plans[r].tokens
    forms, costs = _settle_forms(newest_first, options, full, comp)
    if excerpted:
        forms[np.isin(newest_first, excerpted)] = Form.EXCERPT
    ranks = np.arange(1, chosen.size + 1, dtype=np.int64)
    return Selection(
        indices=chosen,
        ranks=ranks[::-1].copy(),
        forms=forms[::-1].copy(),
        tokens=costs[::-1].copy(),
        reasons=grouped.reasons,
        excerpts={r: plans[r] for r in excerpted},
    )


def _costs_with_excerpts(
    grouped: Turns,
    options: SelectionOptions,
    full: IntArray,
    comp: IntArray,
    excerpts: TurnExcerpts | None,
) -> tuple[IntArray, dict[int, Excerpt]]:
    """Each turn's cost, with oversized cut entries of too-large turns as excerpts."""
    entry_cost = smallest_cost(options.form, full, comp)
    turn_cost = _turn_costs(grouped, entry_cost)
    if excerpts is None or not len(excerpts.relevance.table):
        return turn_cost, {}
    entry_cost, plans = shrink_oversized(
        grouped.members, turn_cost, entry_cost, options.budget_tokens, excerpts
    )
    return (_turn_costs(grouped, entry_cost) if plans else turn_cost), plans


def _settle_forms(
    rows: IntArray, options: SelectionOptions, full: IntArray, comp: IntArray
) -> tuple[npt.NDArray[np.int8], IntArray]:
    """Forms and costs of the chosen rows, walked newest first."""
    smallest = smallest_cost(options.form, full[rows], comp[rows]).astype(np.int64)
    if options.form is Form.FULL:
        return np.full(rows.size, int(Form.FULL), dtype=np.int8), smallest
    if options.form is Form.COMPRESSED:
        return compressed_forms(full[rows], comp[rows]), smallest
    # What the entries after each one need at least: reserved so that taking a full form
    # early never squeezes a later entry out of a budget the turns were chosen to fit.
    reserve_after = np.concatenate([np.cumsum(smallest[::-1])[::-1][1:], [0]]).tolist()
    chosen_forms: list[int] = []
    chosen_costs: list[int] = []
    used = 0
    fulls, comps = full[rows].tolist(), comp[rows].tolist()
    for p, (f, c) in enumerate(zip(fulls, comps, strict=True)):
        room = options.budget_tokens - used - reserve_after[p]
        form, cost = auto_form(used, f, c, options.threshold, room)
        chosen_forms.append(int(form))
        chosen_costs.append(cost)
        used += cost
    return np.asarray(chosen_forms, dtype=np.int8), np.asarray(chosen_costs, dtype=np.int64)


def _turn_costs(grouped: Turns, entry_cost: IntArray) -> IntArray:
    attached = grouped.turn_of >= 0
    sums = np.bincount(
        grouped.turn_of[attached],
        weights=entry_cost[attached].astype(np.float64),
        minlength=len(grouped.turns),
    )
    return np.rint(sums).astype(np.int64)  # token sums stay far below float64's exact 2**53


def select_relevant(
    entries: Sequence[ConversationEntry] | TurnIndex,
    query: str,
    original_tokens: IntArray,
    compressed_tokens: IntArray,
    options: SelectionOptions,
    *,
    estimate_tokens: EstimateTokens,
    eligible: BoolArray | None = None,
    floor_min: float | None = None,
    floor_max: float | None = None,
    floor_curve: float | None = None,
    excerpts: TurnExcerpts | None = None,
) -> TurnSelection:
    """RELEVANT: relevant and recent turns, oldest non-recent shed until the budget holds.

    `entries` may be a TurnIndex of them (index_turns, with the same estimate_tokens), which
    then stands for `entries` and `eligible` alike. `excerpts`: oversized cut entries of a
    too-large turn may come as excerpts (fit.turn_excerpts)."""
    full = np.asarray(original_tokens, dtype=np.int64)
    comp = np.asarray(compressed_tokens, dtype=np.int64)
    index = _index_of(entries, eligible, estimate_tokens)
    grouped = index.fresh()
    turns = grouped.turns
    # The decision of select_relevant_turns (relevance.turn_relevance), from the index's
    # per-turn estimates and words instead of tokenising every turn again.
    floor = relevance_floor(
        index.qa_tokens().tolist(),
        len(turns),
        options.budget_tokens,
        options.keep_recent,
        floor_min,
        floor_max,
        floor_curve,
    )
    recent_start = len(turns) - options.keep_recent
    relevance = index.relevance(content_tokens(query))
    below = (np.arange(len(turns)) < recent_start) & (relevance < floor)
    _mark_turns(grouped, np.flatnonzero(below), Reason.FLOOR)
    kept = np.flatnonzero(~below).tolist()

    turn_cost, plans = _costs_with_excerpts(grouped, options, full, comp, excerpts)
    big = _too_large(grouped, turn_cost, options.budget_tokens)
    kept = [t for t in kept if not big[t]]
    # Shed order: oldest non-recent first, then the oldest recent turns.
    shed_order = [t for t in kept if t < recent_start] + [t for t in kept if t >= recent_start]
    kept_set = set(_keep_suffix(grouped, shed_order, turn_cost, options))
    kept = [t for t in kept if t in kept_set]
    selection = _finish(grouped, kept, options, full, comp, plans)
    return TurnSelection(selection, grouped.turn_of, relevance, floor)


def _keep_suffix(
    grouped: Turns, shed_order: list[int], turn_cost: IntArray, options: SelectionOptions
) -> list[int]:
    """The longest suffix of `shed_order` within the budget and max_entries; the shed turns'
    entries get their reason."""
    if not shed_order:
        return []
    costs = turn_cost[shed_order]
    counts = grouped.sizes[shed_order]
    tail_cost = np.cumsum(costs[::-1])[::-1]
    tail_count = np.cumsum(counts[::-1])[::-1]
    cap = options.max_entries
    ok = tail_cost <= options.budget_tokens
    if cap is not None:
        ok &= tail_count <= cap
    # ok is monotone (tails shrink as the start moves right): the first True starts the keep.
    start = int(np.argmax(ok)) if ok.any() else len(shed_order)
    over_budget = tail_cost[:start] > options.budget_tokens
    reasons = np.where(over_budget, Reason.BUDGET, Reason.MAX_ENTRIES)
    _mark_turns(grouped, np.asarray(shed_order[:start], dtype=np.int64), reasons)
    return shed_order[start:]


def select_recent(
    entries: Sequence[ConversationEntry] | TurnIndex,
    original_tokens: IntArray,
    compressed_tokens: IntArray,
    options: SelectionOptions,
    *,
    eligible: BoolArray | None = None,
    excerpts: TurnExcerpts | None = None,
) -> TurnSelection:
    """RECENT: whole turns newest first, stopping at the first that does not fit.

    select_naive_turns' rule over the entries' token counts, except that the budget is
    never exceeded: newest turns larger than the whole budget are passed over (TOO_LARGE)
    instead of being kept regardless. `entries` may be a TurnIndex of them, and `excerpts`
    works, as for select_relevant.
    """
    full = np.asarray(original_tokens, dtype=np.int64)
    comp = np.asarray(compressed_tokens, dtype=np.int64)
    grouped = _index_of(entries, eligible, None).fresh()
    turn_cost, plans = _costs_with_excerpts(grouped, options, full, comp, excerpts)
    big = _too_large(grouped, turn_cost, options.budget_tokens)
    newest_first = list(range(len(grouped.turns) - 1, -1, -1))
    while newest_first and big[newest_first[0]]:
        newest_first.pop(0)
    kept: list[int] = []
    used = 0
    count = 0
    stop_reason = Reason.BUDGET
    for p, t in enumerate(newest_first):
        members = len(grouped.members[t])
        if options.max_entries is not None and count + members > options.max_entries:
            stop_reason = Reason.MAX_ENTRIES
        elif used + int(turn_cost[t]) <= options.budget_tokens:
            kept.append(t)
            used += int(turn_cost[t])
            count += members
            continue
        later = np.asarray(newest_first[p:], dtype=np.int64)
        _mark_turns(grouped, later[~big[later]], stop_reason)
        break
    selection = _finish(grouped, sorted(kept), options, full, comp, plans)
    return TurnSelection(selection, grouped.turn_of, np.zeros(len(grouped.turns)), None)
