"""The RELEVANT and RECENT strategies: conversation turns instead of scored entries.

Message entries are grouped into turns with group_history_into_turns; tool outputs (and any
other entry without a role) attach to turns the way the kit attaches tool calls. A turn is
the unit of selection: all its entries go in, or none.

- RELEVANT: select_relevant_turns (keep_recent turns always, older ones above the relevance
  floor), then the kit's downstream subtractive pass: shed the oldest non-recent survivors,
  then the oldest recent ones, until the budget (and max_entries) holds.
- RECENT: the naive newest-first rule of select_naive_turns, over the entries' own token
  counts.

The budget counts each selected entry's tokens in its returned form (the Fit rule), not the
turn's relevance text; `estimate_tokens` only feeds the floor's utilisation as in the kit.
`fill`, `min_score` and `adaptive` do not apply to turn strategies.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.excerpts import Excerpt
from sharedctx_server.fit.relevance import (
    EstimateTokens,
    HistoryTurn,
    Message,
    ToolCall,
    content_tokens,
    group_history_into_turns,
    relevance_floor,
)
from sharedctx_server.fit.result import Form, Reason, Selection
from sharedctx_server.fit.selection import SelectionOptions, auto_form, smallest_cost
from sharedctx_server.fit.turn_excerpts import TurnExcerpts, shrink_oversized

__all__ = [
    "ConversationEntry",
    "TurnIndex",
    "TurnSelection",
    "TurnTexts",
    "update_turns",
    "index_turns",
    "select_recent",
    "select_relevant",
]

IntArray = npt.NDArray[np.int64]
# update_turns carries RELEVANT's word->turns map over when it regroups at most this many turns.
_CARRY_POSTINGS_TURNS = 64
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class ConversationEntry:
    """One candidate as the turn strategies see it.

    `role` is the message role ("user", "assistant", ...); None marks a tool output or any
    other non-message entry, which attaches to the turn it happened in as a tool call with
    `tool` and `args` (pass the output's text as `args` to let its first 200 characters count
    towards the turn's relevance). `created_at` is a sortable string, e.g. ISO-8601.
    """

    created_at: str
    role: str | None
    content: str = ""
    tool: str | None = None
    args: object = None


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


@dataclass(frozen=True, eq=False)
class _Turns:
    turns: list[HistoryTurn]
    members: list[list[int]]  # candidate rows of each turn, chronological
    turn_of: IntArray
    reasons: npt.NDArray[np.int8]
    position: IntArray  # each row's place among the eligible rows, chronological (-1: not)
    sizes: IntArray  # entries per turn
    order: list[int]  # the eligible rows, chronological
    created: list[str]  # their created_at, in that order
    starts: list[str]  # each turn's first message's created_at


def _group(
    entries: Sequence[ConversationEntry],
    eligible: BoolArray | None,
    order: IntArray | None = None,
) -> _Turns:
    n = len(entries)
    mask = _mask(eligible, n)
    if order is None:
        rows = sorted(np.flatnonzero(mask).tolist(), key=lambda i: (entries[i].created_at, i))
    else:
        rows = order.tolist()
    grouped = _group_rows(entries, rows)
    turn_of = np.full(n, -1, dtype=np.int64)
    for t, members in enumerate(grouped.members):
        turn_of[members] = t
    return _assemble(entries, mask, rows, grouped.turns, grouped.members, turn_of)


def _mask(eligible: BoolArray | None, n: int) -> BoolArray:
    return np.ones(n, dtype=np.bool_) if eligible is None else np.array(eligible, dtype=np.bool_)


def _assemble(
    entries: Sequence[ConversationEntry],
    mask: BoolArray,
    order: list[int],
    turns: list[HistoryTurn],
    members: list[list[int]],
    turn_of: IntArray,
) -> _Turns:
    """The _Turns of a grouping: `order` the eligible rows chronologically, `turn_of` each
    row's turn (-1: none); the rest follows from them."""
    position = np.full(mask.size, -1, dtype=np.int64)
    position[order] = np.arange(len(order))
    attached = turn_of >= 0
    reasons = np.where(
        ~mask, Reason.FILTERED, np.where(attached, Reason.BUDGET, Reason.UNATTACHED)
    ).astype(np.int8)
    sizes = np.bincount(turn_of[attached], minlength=len(turns)).astype(np.int64)
    created = [entries[i].created_at for i in order]
    starts = [turn.messages[0].created_at for turn in turns]
    return _Turns(turns, members, turn_of, reasons, position, sizes, order, created, starts)


@dataclass(frozen=True)
class _Grouped:
    turns: list[HistoryTurn]
    members: list[list[int]]  # rows of each turn, in the order given


def _group_rows(entries: Sequence[ConversationEntry], rows: list[int]) -> _Grouped:
    """group_history_into_turns over `rows` (in created_at order)."""
    messages: list[Message] = []
    calls: list[ToolCall] = []
    row_of: dict[int, int] = {}  # id() of the Message / ToolCall -> candidate row
    for i in rows:
        e = entries[i]
        item: Message | ToolCall
        if e.role is not None:
            item = Message(e.role, e.content, e.created_at)
            messages.append(item)
        else:
            item = ToolCall(e.created_at, e.tool, e.args)
            calls.append(item)
        row_of[id(item)] = i
    turns = group_history_into_turns(messages, calls)
    place = {row: p for p, row in enumerate(rows)}
    members = [
        sorted((row_of[id(x)] for x in [*turn.messages, *turn.tool_calls]), key=place.__getitem__)
        for turn in turns
    ]
    return _Grouped(turns, members)


class TurnTexts:
    """Token estimates and content words of turn texts, carried from one TurnIndex to the
    next: after a write most turns read exactly as before and need not be tokenised again.
    It holds the texts of the latest index that used it, no more."""

    def __init__(self) -> None:
        self._tokens: dict[str, int] = {}
        self._words: dict[str, set[str]] = {}

    def tokens(self, texts: Sequence[str], estimate: EstimateTokens) -> IntArray:
        """estimate(text) for each text."""
        known, kept = self._tokens, {}
        for text in texts:
            count = known.get(text)
            kept[text] = estimate(text) if count is None else count
        self._tokens = kept
        return np.asarray([kept[t] for t in texts], dtype=np.int64).reshape(-1)

    def words(self, texts: Sequence[str]) -> list[set[str]]:
        """content_tokens(text) for each text (shared sets: do not modify them)."""
        known, kept = self._words, {}
        for text in texts:
            words = known.get(text)
            kept[text] = content_tokens(text) if words is None else words
        self._words = kept
        return [kept[t] for t in texts]


class TurnIndex:
    """What the turn strategies need that does not depend on the query or the budget: the
    turns of one set of candidates, which candidates each holds and, once RELEVANT asks, each
    turn's token estimate and which turns hold each content word. Build it with index_turns
    (bring it up to date with update_turns) and reuse it for as long as the candidates and their
    eligibility stay the same: grouping and tokenising thousands of entries costs far more
    than a selection.
    """

    def __init__(
        self,
        grouped: _Turns,
        estimate_tokens: EstimateTokens | None,
        texts: TurnTexts | None = None,
    ) -> None:
        self._grouped = grouped
        self._estimate = estimate_tokens
        self._texts = texts or TurnTexts()
        self._qa_tokens: IntArray | None = None
        self._postings: dict[str, IntArray] | None = None

    @property
    def turns(self) -> list[HistoryTurn]:
        """The turns, chronological."""
        return self._grouped.turns

    @property
    def texts(self) -> TurnTexts:
        """The tokenising cache this index uses: hand it to the next index_turns over mostly
        the same entries."""
        return self._texts

    def fresh(self) -> _Turns:
        """The grouping with reasons of its own, for one selection to fill in."""
        return replace(self._grouped, reasons=self._grouped.reasons.copy())

    def qa_tokens(self) -> IntArray:
        """estimate_tokens of each turn's text."""
        if self._qa_tokens is None:
            if self._estimate is None:
                raise ValueError("this TurnIndex was built without estimate_tokens")
            self._qa_tokens = self._texts.tokens([t.qa for t in self.turns], self._estimate)
        return self._qa_tokens

    def relevance(self, query_tokens: Collection[str]) -> FloatArray:
        """relevance_to_query of every turn's text: the share of `query_tokens` in it."""
        out = np.zeros(len(self.turns), dtype=np.float64)
        if not query_tokens:
            return out
        postings = self._postings_map()
        for token in query_tokens:
            turns = postings.get(token)
            if turns is not None:
                out[turns] += 1.0
        out /= len(query_tokens)
        return out

    def _postings_map(self) -> dict[str, IntArray]:
        # word -> the turns holding it (ascending): a query costs a step per query word, not
        # one per turn (100k turns: milliseconds instead of a tenth of a second).
        if self._postings is None:
            holders: dict[str, list[int]] = {}
            for t, words in enumerate(self._texts.words([turn.qa for turn in self.turns])):
                for word in words:
                    holders.setdefault(word, []).append(t)
            self._postings = {w: np.asarray(ts, dtype=np.int64) for w, ts in holders.items()}
        return self._postings

    def _grown(self, grouped: _Turns, head: int) -> TurnIndex:
        """An index over `grouped`, whose turns before `head` are this index's unchanged,
        carrying what this one worked out for them: only the turns from `head` on (those
        update_turns grouped again) are tokenised."""
        out = TurnIndex(grouped, self._estimate, self._texts)
        new = grouped.turns[head:]
        if self._qa_tokens is not None and self._estimate is not None:
            added = np.asarray([self._estimate(t.qa) for t in new], dtype=np.int64).reshape(-1)
            out._qa_tokens = np.concatenate([self._qa_tokens[:head], added])
        # Past a few regrouped turns, building the map anew (lazily) costs less than
        # taking those turns out of it one posting at a time.
        if self._postings is not None and len(self.turns) - head <= _CARRY_POSTINGS_TURNS:
            postings = dict(self._postings)  # this index stays as it was
            # Every turn from `head` on is replaced and posting arrays ascend: one cut each.
            for word in set().union(*(content_tokens(t.qa) for t in self.turns[head:])):
                kept = postings[word][: np.searchsorted(postings[word], head)]
                if kept.size:
                    postings[word] = kept
                else:
                    del postings[word]
            holders: dict[str, list[int]] = {}
            for t, turn in enumerate(new, start=head):
                for word in content_tokens(turn.qa):
                    holders.setdefault(word, []).append(t)
            for word, turns in holders.items():
                fresh = np.asarray(turns, dtype=np.int64)
                held = postings.get(word)
                postings[word] = fresh if held is None else np.concatenate([held, fresh])
            out._postings = postings
        return out


def index_turns(
    entries: Sequence[ConversationEntry],
    eligible: BoolArray | None = None,
    estimate_tokens: EstimateTokens | None = None,
    *,
    order: IntArray | None = None,
    texts: TurnTexts | None = None,
) -> TurnIndex:
    """Group the eligible entries into turns once, for any number of selections.

    `order`: the eligible rows in created_at order, when the caller knows it cheaper than
    sorting strings (Fit does, from its time and sequence columns). `texts`: the TurnTexts of
    the previous index over mostly the same entries, to reuse its tokenising."""
    return TurnIndex(_group(entries, eligible, order), estimate_tokens, texts)


def update_turns(
    previous: TurnIndex,
    entries: Sequence[ConversationEntry],
    eligible: BoolArray | None,
    changed: Sequence[int],
) -> TurnIndex | None:
    """index_turns(entries, eligible), worked out from `previous` by regrouping only the turns
    a change can reach; None when that would be all of them (then build anew).

    `changed`: the rows whose entry was added, rewritten or removed since `previous` was
    built; the caller vouches that every other row holds the same entry (rows that only
    became eligible or ineligible are found here). Grouping reads the rows in created_at
    order, so nothing before the earliest change moves: the turns that start before it keep
    their messages and, since a tool call attaches to the latest turn starting at or before
    it, their tool calls too, except the last such turn, which a new turn after it may cut
    short. That turn and everything after it are grouped again. An agent adding entries
    regroups one turn; rewriting an entry near the end, a few."""
    old = previous._grouped
    n_old, n = old.reasons.size, len(entries)
    if n < n_old:
        return None
    mask = _mask(eligible, n)
    was = np.zeros(n, dtype=np.bool_)
    was[:n_old] = old.position >= 0
    moved = np.zeros(n, dtype=np.bool_)
    moved[np.asarray(changed, dtype=np.int64)] = True
    moved |= mask != was
    # The earliest created_at any change touches: where a changed row was, or now is.
    gone = np.flatnonzero(moved & was)
    came = np.flatnonzero(moved & mask).tolist()
    keys = [old.created[p] for p in old.position[gone].tolist()]
    keys += [entries[i].created_at for i in came]
    if not keys:  # only rows that were and stay ineligible changed: the same turns
        return previous._grown(_resized(old, n), len(old.turns))
    cut = min(keys)
    head = bisect.bisect_left(old.starts, cut) - 1  # the last turn starting before the change
    if head < 0:
        return None
    # Where that turn starts in the chronological order: everything before is unchanged.
    p0 = int(old.position[old.members[head][0]])
    # A tool call tied in created_at with the turn's first message can sort before rows of
    # earlier turns (ties order by row); regrouping from it would group those rows again.
    first_message = min(
        int(old.position[r]) for r in old.members[head] if entries[r].role is not None
    )
    if any(0 <= old.turn_of[r] < head for r in old.order[p0:first_message]):
        return None
    kept_rows = [r for r in old.order[p0:] if not moved[r]]
    came.sort(key=lambda i: (entries[i].created_at, i))
    suffix = _merge_chronological(entries, kept_rows, came)
    sub = _group_rows(entries, suffix)
    turns = old.turns[:head] + sub.turns
    members = old.members[:head] + sub.members
    turn_of = np.full(n, -1, dtype=np.int64)
    turn_of[:n_old] = old.turn_of
    turn_of[moved] = -1
    turn_of[(turn_of >= head)] = -1
    for t, rows in enumerate(sub.members):
        turn_of[rows] = head + t
    grouped = _assemble(entries, mask, old.order[:p0] + suffix, turns, members, turn_of)
    return previous._grown(grouped, head)


def _resized(old: _Turns, n: int) -> _Turns:
    """`old` over n >= its rows; the rows beyond are ineligible (FILTERED, in no turn)."""

    def grow(values: npt.NDArray[Any], fill: int) -> npt.NDArray[Any]:
        out = np.full(n, fill, dtype=values.dtype)
        out[: values.size] = values
        return out

    return replace(
        old,
        turn_of=grow(old.turn_of, -1),
        reasons=grow(old.reasons, Reason.FILTERED),
        position=grow(old.position, -1),
    )


def _merge_chronological(
    entries: Sequence[ConversationEntry], a: list[int], b: list[int]
) -> list[int]:
    """Two row lists, each in (created_at, row) order, merged into one."""
    return list(heapq.merge(a, b, key=lambda i: (entries[i].created_at, i)))


def _index_of(
    entries: Sequence[ConversationEntry] | TurnIndex,
    eligible: BoolArray | None,
    estimate_tokens: EstimateTokens | None,
) -> TurnIndex:
    if isinstance(entries, TurnIndex):
        return entries
    return index_turns(entries, eligible, estimate_tokens)


def _too_large(grouped: _Turns, turn_cost: IntArray, budget: int) -> BoolArray:
    big = turn_cost > budget
    _mark_turns(grouped, np.flatnonzero(big), Reason.TOO_LARGE)
    return big


def _mark_turns(grouped: _Turns, turns: IntArray, reasons: int | npt.NDArray[np.integer]) -> None:
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
    grouped: _Turns,
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
    grouped: _Turns,
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
    if options.form is not Form.AUTO:
        form = Form.FULL if options.form is Form.FULL else Form.COMPRESSED
        costs = full[rows] if form is Form.FULL else comp[rows]
        return np.full(rows.size, int(form), dtype=np.int8), costs.astype(np.int64)
    smallest = np.minimum(full[rows], comp[rows])
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


def _turn_costs(grouped: _Turns, entry_cost: IntArray) -> IntArray:
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
    grouped: _Turns, shed_order: list[int], turn_cost: IntArray, options: SelectionOptions
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
