"""RELEVANT and RECENT with excerpts: a turn stays whole, but an oversized entry in it that is
cut into segments (a tool output, a log) may come as an excerpt instead of the turn being
dropped as too large (docs/excerpts.md).

Only turns larger than the whole budget are touched. Their cut entries share what the rest
of the turn leaves of the budget, at most TURN_SHARE of it in all, so that the turns around
keep room; each cut entry larger than its share becomes an excerpt of at most that share
(plan_excerpt: its hits and their neighbours, or its last lines when nothing matches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.excerpts import TURN_SHARE, Excerpt, plan_excerpt, smallest_excerpt
from sharedctx_server.fit.segment_relevance import MarkerTokens, Relevance

__all__ = ["TurnExcerpts", "shrink_oversized"]

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class TurnExcerpts:
    """The query's relevance of the candidates' segments, and the token count of an
    omission marker line."""

    relevance: Relevance
    marker_tokens: MarkerTokens

    def is_cut(self, row: int) -> bool:
        """Whether `row` is a candidate cut into segments."""
        table = self.relevance.table
        k = int(np.searchsorted(table.slots, row))
        return (
            k < table.slots.size and table.slots[k] == row and bool(self.relevance.candidates[row])
        )


def shrink_oversized(
    members: Sequence[Sequence[int]],
    turn_cost: IntArray,
    entry_cost: IntArray,
    budget: int,
    excerpts: TurnExcerpts,
) -> tuple[IntArray, dict[int, Excerpt]]:
    """Entry costs with the oversized cut entries of too-large turns replaced by excerpts, and
    those excerpts by row."""
    costs = entry_cost.copy()
    plans: dict[int, Excerpt] = {}
    for turn in np.flatnonzero(turn_cost > budget).tolist():
        rows = list(members[turn])
        cut = [r for r in rows if excerpts.is_cut(r)]
        if not cut:
            continue
        rest = int(sum(int(entry_cost[r]) for r in rows if r not in cut))
        room = min(budget - rest, int(TURN_SHARE * budget))
        # Cut entries within their share stay whole; the others share what is left.
        small = [r for r in cut if int(entry_cost[r]) <= room // len(cut)]
        large = [r for r in cut if r not in small]
        room -= int(sum(int(entry_cost[r]) for r in small))
        if not large or room <= 0:
            continue
        turn_plans = _share_room(large, room, excerpts)
        if turn_plans is not None:
            for r, plan in turn_plans.items():
                costs[r] = plan.tokens
            plans.update(turn_plans)
    return costs, plans


def _share_room(rows: list[int], room: int, excerpts: TurnExcerpts) -> dict[int, Excerpt] | None:
    """An excerpt of each of `rows` within `room` tokens together, or None when their
    smallest excerpts do not fit together (the turn, which goes in whole or not at all, then
    cannot go in). Each gets its smallest excerpt's tokens (a long line's head may be most of
    the room) and an equal share of the rest."""
    views = [excerpts.relevance.view(r) for r in rows]
    floors = [smallest_excerpt(view, excerpts.marker_tokens) for view in views]
    spare = room - sum(floors)
    if spare < 0:
        return None
    plans = {}
    for r, view, floor in zip(rows, views, floors, strict=True):
        plan = plan_excerpt(view, floor + spare // len(rows), excerpts.marker_tokens)
        if plan is None:  # cannot happen: the smallest excerpt fits its floor
            return None
        plans[r] = plan
    return plans
