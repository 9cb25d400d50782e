"""Conversation turns of a namespace's entries, for the RELEVANT and RECENT strategies.

Message entries are grouped into turns with group_history_into_turns; tool outputs (and any
other entry without a role) attach to turns the way the kit (the TypeScript agent kit whose
relevance battery RELEVANT reproduces, docs/relevance.md) attaches tool calls. A TurnIndex
holds the grouping of one set of candidates and what RELEVANT needs of each turn; it is built
once (index_turns) and brought up to date after writes by regrouping only the turns a change
can reach (update_turns), since grouping and tokenising thousands of entries costs far more
than a selection.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.relevance import (
    EstimateTokens,
    HistoryTurn,
    Message,
    ToolCall,
    content_tokens,
    group_history_into_turns,
)
from sharedctx_server.fit.result import Reason

__all__ = ["ConversationEntry", "TurnIndex", "TurnTexts", "Turns", "index_turns", "update_turns"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
# update_turns carries RELEVANT's word->turns map over when it regroups at most this many turns.
_CARRY_POSTINGS_TURNS = 64


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
class Turns:
    """A grouping of candidate rows into turns, with each row's reason slot for a selection."""

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
) -> Turns:
    n = len(entries)
    mask = _eligible_mask(eligible, n)
    if order is None:
        rows = sorted(np.flatnonzero(mask).tolist(), key=lambda i: (entries[i].created_at, i))
    else:
        rows = order.tolist()
    grouped = _group_rows(entries, rows)
    turn_of = np.full(n, -1, dtype=np.int64)
    for t, members in enumerate(grouped.members):
        turn_of[members] = t
    return _assemble(entries, mask, rows, grouped.turns, grouped.members, turn_of)


def _eligible_mask(eligible: BoolArray | None, n: int) -> BoolArray:
    return np.ones(n, dtype=np.bool_) if eligible is None else np.array(eligible, dtype=np.bool_)


def _assemble(
    entries: Sequence[ConversationEntry],
    mask: BoolArray,
    order: list[int],
    turns: list[HistoryTurn],
    members: list[list[int]],
    turn_of: IntArray,
) -> Turns:
    """The Turns of a grouping: `order` the eligible rows chronologically, `turn_of` each
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
    return Turns(turns, members, turn_of, reasons, position, sizes, order, created, starts)


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
        grouped: Turns,
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

    def fresh(self) -> Turns:
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

    def _grown(self, grouped: Turns, head: int) -> TurnIndex:
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
    mask = _eligible_mask(eligible, n)
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


def _resized(old: Turns, n: int) -> Turns:
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
