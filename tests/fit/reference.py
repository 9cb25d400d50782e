"""Deliberately plain re-statements of the selection rules, to check the fast code against.

They sort everything and loop over every candidate: obviously right, obviously slow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sharedctx_server.fit import Fill, Form, Reason, SelectionOptions, compute_optimal_k


def select_reference(
    scores: Sequence[float],
    times: Sequence[float],
    full: Sequence[int],
    comp: Sequence[int],
    opts: SelectionOptions,
    eligible: Sequence[bool],
    texts: Sequence[str] | None = None,
) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """(indices chronological, ranks, forms, tokens, reasons) as docs/fit.md describes."""
    n = len(scores)
    s = [-math.inf if math.isnan(x) else x for x in scores]
    reasons = [int(Reason.BUDGET)] * n

    def smallest(i: int) -> int:
        if opts.form is Form.FULL:
            return full[i]
        if opts.form is Form.COMPRESSED:
            return comp[i]
        return min(full[i], comp[i])

    pool = []
    for i in range(n):
        if not eligible[i]:
            reasons[i] = Reason.FILTERED
        elif s[i] < opts.min_score:
            reasons[i] = Reason.MIN_SCORE
        else:
            pool.append(i)
    recent = sorted(pool, key=lambda i: (-times[i], i))[: opts.keep_recent]
    too_large = {i for i in pool if smallest(i) > opts.budget_tokens}
    for i in too_large:
        reasons[i] = Reason.TOO_LARGE

    taken: list[int] = []
    forms: list[int] = []
    costs: list[int] = []
    state = {"used": 0}

    def left() -> int:
        return opts.budget_tokens - state["used"]

    def take(i: int, reserve: int = 0) -> bool:
        used = state["used"]
        if opts.form is Form.FULL:
            choice = (Form.FULL, full[i]) if full[i] <= left() else None
        elif opts.form is Form.COMPRESSED:
            choice = (Form.COMPRESSED, comp[i]) if comp[i] <= left() else None
        elif used + full[i] <= opts.threshold and full[i] + reserve <= left():
            choice = (Form.FULL, full[i])
        elif comp[i] <= left():
            choice = (Form.COMPRESSED, comp[i])
        elif full[i] <= left():
            choice = (Form.FULL, full[i])
        else:
            choice = None
        if choice is None:
            return False
        taken.append(i)
        forms.append(int(choice[0]))
        costs.append(choice[1])
        state["used"] += choice[1]
        return True

    def capped() -> bool:
        return opts.max_entries is not None and len(taken) >= opts.max_entries

    promised = [i for i in recent if i not in too_large]
    for p, i in enumerate(promised):
        if capped():
            if smallest(i) <= left():
                reasons[i] = Reason.MAX_ENTRIES
        elif not take(i, sum(smallest(j) for j in promised[p + 1 :])):
            reasons[i] = Reason.BUDGET

    ranked = sorted(
        (i for i in pool if i not in too_large and i not in recent),
        key=lambda i: (-s[i], -times[i], i),
    )
    for p, i in enumerate(ranked):
        if capped():
            # max_entries is the reason where the entry would still have fitted the budget.
            for j in ranked[p:]:
                if smallest(j) <= left():
                    reasons[j] = Reason.MAX_ENTRIES
            break
        if not take(i) and opts.fill is Fill.STOP:
            break
    for i in taken:
        reasons[i] = Reason.SELECTED

    keep = len(taken)
    if opts.adaptive is not None and taken:
        assert texts is not None
        keep = compute_optimal_k(
            [texts[i] for i in taken], bias=opts.adaptive.bias, min_k=opts.adaptive.min_k
        )
        for i in taken[keep:]:
            reasons[i] = Reason.ADAPTIVE
    rows = sorted(range(min(keep, len(taken))), key=lambda p: (times[taken[p]], taken[p]))
    return (
        [taken[p] for p in rows],
        [p + 1 for p in rows],
        [forms[p] for p in rows],
        [costs[p] for p in rows],
        reasons,
    )
