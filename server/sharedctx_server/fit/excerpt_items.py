"""The fill items of excerpts: each hit, and each segment of a hit's context, as an item of
the walk that fills the budget (fit.selection), scored against whole entries
(docs/excerpts.md).

A hit is scored `entry_weight(entry score) * rho / best rho * quality`: the namespace's best
matching lines come first, each weighed, damped, by how much its entry matters, and all by
how good the best is (Relevance.quality); past the first REPEAT_FREE hits of one line shape,
each repeat counts REPEAT_SHARE of the one before, and past an entry's best ENTRY_FREE hits
(LIST_FREE when the question asks for a list), each further one ENTRY_SHARE of the one
before. The segments around a hit follow as items worth CONTEXT_SHARE of it (the next ones
out, up to CONTEXT_RINGS on each side, CONTEXT_SHARE of the one before), so a tight budget
takes the matching lines first and their surroundings after; its head (Segments.heads: a
table's header, the commit or folder it belongs to) and its head's head (a hunk's file's
commit) are worth HEAD_SHARE of it, a hit that is a head brings the first BLOCK_MEMBERS
segments it heads like neighbours, and the ERROR_MEMBERS segments of the block with the
strongest errors come worth HEAD_SHARE of it times their error evidence (the whole of it
when the question asks for a cause: Relevance.asks_cause). A hit that carries an error, or
whose head is the segment just before it, takes that segment along (a traceback is already
part of its record's segment), or comes alone, worth ALONE_SHARE of it, where the two do not
fit. Against whole entries, items rank by their score to the power ITEM_EXPONENT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.segment_index import SegmentTable
from sharedctx_server.fit.segment_relevance import ERROR_SHARE, MarkerTokens, Relevance

__all__ = [
    "ALONE_SHARE",
    "BLOCK_MEMBERS",
    "CONTEXT_RINGS",
    "CONTEXT_SHARE",
    "CONTEXT_SLACK",
    "ENTRY_EXPONENT",
    "ENTRY_FREE",
    "ENTRY_SHARE",
    "ERROR_MEMBERS",
    "HEAD_SHARE",
    "ITEM_EXPONENT",
    "LIST_FREE",
    "REPEAT_FREE",
    "REPEAT_SHARE",
    "SERIES_SHARE",
    "ExcerptItems",
    "Series",
    "entry_weight",
    "hit_items",
    "series_tails",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
_NONE = np.zeros(0, dtype=np.int64)

# How strongly an entry's score weighs its hits' (entry_weight).
ENTRY_EXPONENT = 0.25
# Items meet whole entries in one fill ranked by score: an item's score is raised to this
# power first. A line that matches half as well as the namespace's best still says more about
# the query than most whole entries that share none of its words (`Version:` in the
# `apt-cache show` entry the query names, the body of the failing test's block); linear, it
# ranked below them, and the budget went to them.
ITEM_EXPONENT = 0.5
# What a hit that carries an error is worth without the segment before it, which it brings
# along when both fit.
ALONE_SHARE = 0.9
# What a hit's neighbouring segment is worth, as a share of the hit's score.
CONTEXT_SHARE = 0.7
# How far context reaches on each side of a hit, in segments: a PostgreSQL error's statement
# is its second line after (docs/excerpts.md); a third changed no answer.
CONTEXT_RINGS = 2
# A neighbour up to this many tokens larger than its hit keeps its whole share (_sized).
CONTEXT_SLACK = 32
# What a hit's head is worth: more than a neighbour, since it says what the line is part of
# (which columns, which commit, which folder), and once shown it serves every hit below it.
HEAD_SHARE = 0.75
# A hit that heads a block (a folder in `ls -lR`, a commit) brings at most this many of the
# segments it heads as context, in order, each worth CONTEXT_SHARE of it.
BLOCK_MEMBERS = 16
# A hit in a block (or heading one) brings the ERROR_MEMBERS segments of the block that carry
# the strongest errors, each worth HEAD_SHARE of it times its error evidence (an `E` line's
# 0.83 puts it between the hit's first and second neighbours): they say what went wrong in
# what the hit is part of. pytest prints a failing test's source between its name and its
# `E` lines (the whole of a library function raised from: 250 lines); in text order, 800
# tokens of that source went in and `ValueError: day is out of range for month` did not.
ERROR_MEMBERS = 2
# Repeats of one line shape (line_shape) after the first REPEAT_FREE hits of that shape weigh
# REPEAT_SHARE of the one before, and so on: a few examples of a repeated line show what it
# says and how it varies, and the budget goes on to lines that say something else.
REPEAT_FREE = 3
# ENTRY_FREE when the question asks for a list ("which files were deleted?"): then many
# lines of one entry are the answer (fit.superlatives.list_asked). Repeats of one line shape
# still weigh less and less: a `git log --stat`'s `N files changed, ... deletions(-)` under
# every commit is no list of deleted files.
LIST_FREE = 12
REPEAT_SHARE = 0.5
# Hits of one entry past its best ENTRY_FREE weigh ENTRY_SHARE of the one before each.
ENTRY_FREE = 5
ENTRY_SHARE = 0.85
# Runs of one command (series_tails): the newest run's last segment, where a tool says how
# the run ended, is worth this share of the best hit of the older runs.
SERIES_SHARE = 0.9
# Hit items handed to a fill: enough that their costs add up to this many budgets; the
# neighbours of those within the first _CONTEXT_BUDGETS (only hits that go in can bring any).
_ITEM_BUDGETS = 4
_CONTEXT_BUDGETS = 2


def entry_weight(scores: FloatArray) -> FloatArray:
    """How much an entry's score weighs its hits: damped (ENTRY_EXPONENT), so that between
    two lines that match alike the better entry's wins, but a line that matches better wins
    over a slightly better entry's (entry scores differ by what the whole entry is about,
    which says little about one line)."""
    return np.asarray(np.power(np.maximum(scores, 0.0), ENTRY_EXPONENT), dtype=np.float64)


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


def hit_items(
    relevance: Relevance,
    entry_scores: FloatArray,
    budget: int,
    marker_tokens: MarkerTokens,
    series: Series | None = None,
) -> ExcerptItems:
    """Every hit and its context (_context) as fill items, keeping only the best whose costs
    add up to a few budgets (the rest could never be reached); with `series`, the newest
    run's end beside the hits of older runs of its command (series_tails)."""
    table = relevance.table
    hits = np.flatnonzero(relevance.rho > 0)
    slot, local = table.slot_of[hits], table.local[hits]
    # rho over the namespace's best: the best line in the namespace stands for its entry at
    # the entry's own score (rho alone tops out at 1 / (1 + ERROR_SHARE) for a quiet line,
    # which let whole entries without a single matching line outrank it).
    # Not over less than a quiet line's full match: when no line holds a word of the query,
    # error lines alone are no full match (a question whose words only a note held got 2,882
    # tokens of `Failed password` lines).
    top = max(float(relevance.rho.max()) if hits.size else 1.0, 1.0 / (1.0 + ERROR_SHARE))
    # Weighed by how good the best is (Relevance.quality): a best line that holds little of
    # the query, or only reports an error, stands for no full match.
    score = entry_weight(entry_scores[slot]) * relevance.rho[hits] / top * relevance.quality
    # Each repeat of a line shape past the first REPEAT_FREE weighs REPEAT_SHARE of the one
    # before: a few show what the line says, and the budget goes on to other lines and
    # entries (66 `Failed password` lines took 2,902 of 3,000 tokens from the note that
    # answered).
    beyond = _rank_in_group(table.shapes[hits], score, slot, local) - REPEAT_FREE + 1
    score *= np.power(REPEAT_SHARE, np.maximum(beyond, 0))
    # Likewise each hit of one entry past its first ENTRY_FREE: a larger budget goes on to
    # other entries, not only to more lines of the one (a knowledge-base article took 2,954
    # of 3,000 tokens beside the 31-token ticket that answered).
    entry_free = LIST_FREE if relevance.asks_list else ENTRY_FREE
    beyond = _rank_in_group(slot + 1, score, slot, local) - entry_free + 1
    score *= np.power(ENTRY_SHARE, np.maximum(beyond, 0))
    # A hit that carries an error brings the segment before it, unless that is much larger
    # than the hit (_sized): eslint's count of problems, `1 errors`, had brought 213 tokens of
    # another file's warnings.
    before_at = np.maximum(hits - 1, 0)
    # So does a hit whose head is the segment before it (a commit's message its header, a
    # table's first row its header): split, a near tie with another hit had left the head out.
    carries = (table.errors[hits] > 0) | (table.heads[hits] == local - 1)
    with_before = carries & (local > 0) & (_sized(table, hits, before_at) >= 1)
    before_tokens = np.where(with_before, table.tokens[before_at], 0)
    hit_cost = (table.tokens[hits] + before_tokens).astype(np.int64)
    # The best hits (ties: row, then segment) until their costs cover a few budgets, the
    # first of them with their context: a hit's neighbours rank below many weaker hits, but
    # only they can complete what the hit shows (the rest of a JSON item cut at max_lines),
    # and only beside it.
    ranked = np.lexsort((local, slot, -score))
    reach = np.cumsum(np.minimum(hit_cost[ranked], budget))
    wanted = np.zeros(hits.size, dtype=np.int8)  # 2: the hit and its context, 1: the hit
    wanted[ranked[: int(np.searchsorted(reach, _ITEM_BUDGETS * budget)) + 1]] = 1
    wanted[ranked[: int(np.searchsorted(reach, _CONTEXT_BUDGETS * budget)) + 1]] = 2
    # Only the items of wanted hits are built (the rest could never be reached): the hits
    # themselves, the context of those wanted with it, and (below) the error hits alone.
    # Each part keeps the order it has among all items, which breaks ties in the sort.
    own = np.flatnonzero(wanted >= 1)
    near = np.flatnonzero(wanted == 2)
    of_near, at, share = _context(table, hits[near], relevance.asks_cause)
    of_hit = near[of_near]
    # Such a hit also comes alone, worth ALONE_SHARE of it, for when the two do not fit: a
    # 187-token line in a 300-token Fit was left out for the 145 tokens before it. (Once
    # the two are in, the hit alone adds nothing.)
    alone = own[with_before[own]]
    tail_at, tail_score = (
        series_tails(table, series, relevance.candidates, slot[own], score[own])
        if series is not None
        else (_NONE, np.zeros(0))
    )
    row = np.concatenate([slot[own], slot[of_hit], slot[alone], table.slot_of[tail_at]])
    first = np.concatenate([local[own], table.local[at], local[alone], table.local[tail_at]])
    second = np.concatenate(
        [
            np.where(with_before[own], local[own] - 1, -1),
            np.full(of_hit.size + alone.size + tail_at.size, -1),
        ]
    )
    anchor = np.concatenate(
        [np.full(own.size, -1), local[of_hit], np.full(alone.size + tail_at.size, -1)]
    )
    # Ranked against whole entries by a root of their score (ITEM_EXPONENT), which keeps
    # their order among themselves.
    scores = np.power(
        np.concatenate([score[own], share * score[of_hit], ALONE_SHARE * score[alone], tail_score]),
        ITEM_EXPONENT,
    )
    cost = np.concatenate(
        [hit_cost[own], table.tokens[at], table.tokens[hits[alone]], table.tokens[tail_at]]
    ).astype(np.int64)
    lower = np.maximum(cost - marker_tokens(10**9), 1)
    keep = np.lexsort((first, row, -scores))
    return ExcerptItems(
        row[keep].astype(np.int64),
        first[keep].astype(np.int64),
        second[keep].astype(np.int64),
        anchor[keep].astype(np.int64),
        scores[keep],
        lower[keep],
    )


@dataclass(frozen=True, eq=False)
class Series:
    """Per candidate row: the command it may be a run of (0: none; series_tails), its place
    in time (larger: newer) and whether it echoes its command (then how it opens does not
    matter: the command says what it is a run of)."""

    command: IntArray
    order: IntArray
    echoed: BoolArray


def series_tails(
    table: SegmentTable,
    series: Series,
    candidates: BoolArray,
    hit_rows: IntArray,
    hit_scores: FloatArray,
) -> tuple[IntArray, FloatArray]:
    """The last segment (a flat position) of the newest run of each command some older run
    of which has a hit among `hit_rows`, worth SERIES_SHARE of that best hit.

    Agents run the same command again and again (the tests, the build, a status check), and
    the newest run is the state now. A question about it ("which tests are still failing?")
    matches the failures of the older runs, while the newest, which passed, holds none of its
    words: the budget went to the old failures and the agent was told they still fail. Runs
    of one command are cut tool outputs of one tool and thread that echo the same command
    (`$ make test`), or echo none and open alike (their first segments have one line_shape:
    pytest's `test session starts`, a listing's header); the end of a run is where tools say
    how it ended."""
    rows = table.slots
    command = series.command[rows]
    held = np.diff(table.bounds) > 0
    opening = np.where(held, table.shapes[np.minimum(table.bounds[:-1], len(table) - 1)], 0)
    opening = np.where(series.echoed[rows] & held, 1, opening)
    runs = (command > 0) & (opening != 0) & candidates[rows]
    if int(runs.sum()) < 2 or hit_rows.size == 0:
        return _NONE, np.zeros(0)
    # Group the runs by (command, opening); the newest of each group is its last in time.
    index = np.flatnonzero(runs)
    keys = np.stack([command[index], opening[index]])
    _, group = np.unique(keys, axis=1, return_inverse=True)
    group = group.reshape(-1)
    ranked = np.lexsort((series.order[rows[index]], group))  # by group, then time
    last_of_group = np.ones(ranked.size, dtype=np.bool_)
    last_of_group[:-1] = group[ranked][1:] != group[ranked][:-1]
    newest = np.empty(int(group.max()) + 1, dtype=np.int64)
    newest[group[ranked[last_of_group]]] = ranked[last_of_group]
    # Each row's best hit, then each group's best among its older runs.
    best = np.full(series.command.size, -np.inf)
    np.maximum.at(best, hit_rows, hit_scores)
    older = index != index[newest[group]]
    lead = np.full(newest.size, -np.inf)
    np.maximum.at(lead, group[older], best[rows[index[older]]])
    wanted = np.flatnonzero(np.isfinite(lead))
    last = table.bounds[index[newest[wanted]] + 1] - 1
    return last.astype(np.int64), SERIES_SHARE * lead[wanted]


def _context(
    table: SegmentTable, hits: IntArray, asks_cause: bool = False
) -> tuple[IntArray, IntArray, FloatArray]:
    """The context items of `hits` (flat positions): for each, the index of its hit, the
    segment's flat position and its share of the hit's score. A hit's context is its
    neighbours, its head and its head's head, and, when the hit is itself a head (a folder,
    a commit), the first BLOCK_MEMBERS segments it heads: what that folder holds, what that
    commit changed."""
    local = table.local[hits]
    head = table.heads[hits]
    headed = head >= 0
    # The head's own head, worth as much: the commit of a hunk's file says what the line is
    # part of as its file does, and more than the hunks beside it.
    outer = np.where(headed, table.heads[hits - local + np.maximum(head, 0)], -1)
    outer_headed = outer >= 0
    parts: list[tuple[IntArray, IntArray, float | FloatArray]] = [
        (np.flatnonzero(headed), (hits - local + head)[headed], HEAD_SHARE),
        (np.flatnonzero(outer_headed), (hits - local + outer)[outer_headed], HEAD_SHARE),
    ]
    for ring in range(1, CONTEXT_RINGS + 1):
        # The k-th segment before and after the hit, inside its entry, worth CONTEXT_SHARE**k,
        # less when it is much larger than the hit (_sized); a head before it is one already
        # (a commit's header just above its message: as a neighbour, a long one had come
        # after the next hunk, and the message went without its commit).
        before = (local >= ring) & (head != local - ring) & (outer != local - ring)
        after = table.followed(hits, ring)
        share = CONTEXT_SHARE**ring
        for side, step in ((before, -ring), (after, ring)):
            at = hits[side] + step
            parts.append((np.flatnonzero(side), at, share * _sized(table, hits[side], at)))
    which, member = table.members_of(hits)
    keep = member != hits[which] + 1  # the neighbour after the hit is context already
    which, member = which[keep], member[keep]
    # `which` ascends, each head's members a run in it: the first BLOCK_MEMBERS of each run.
    first = np.arange(which.size) - np.searchsorted(which, which) < BLOCK_MEMBERS
    parts.append((which[first], member[first], CONTEXT_SHARE))
    parts.append(_error_members(table, hits, local, head, 1.0 if asks_cause else HEAD_SHARE))
    return (
        np.concatenate([p[0] for p in parts]).astype(np.int64),
        np.concatenate([p[1] for p in parts]).astype(np.int64),
        np.concatenate([np.broadcast_to(p[2], p[0].shape) for p in parts]),
    )


def _sized(table: SegmentTable, hits: IntArray, at: IntArray) -> FloatArray:
    """How much of its share a neighbour `at` keeps beside its hit: all of it up to
    CONTEXT_SLACK tokens more than the hit, then the hit's tokens (plus the slack) over its
    own. A neighbour says what surrounds a line; one that costs many times the line is
    another block: eslint's 213 tokens of another file's warnings beside its 32-token count
    of problems had gone in before the 116-token block that held the error asked about."""
    room = table.tokens[hits] + CONTEXT_SLACK
    return np.asarray(np.minimum(1.0, room / np.maximum(table.tokens[at], 1)), dtype=np.float64)


def _error_members(
    table: SegmentTable, hits: IntArray, local: IntArray, head: IntArray, share: float
) -> tuple[IntArray, IntArray, FloatArray]:
    """The context part (_context) of the segments that carry an error in each hit's block
    (the block of its head, or the one it heads): the ERROR_MEMBERS of each but the hit whose
    error is strongest (ties: the first). A line of source that raises an error carries one
    too, weaker than the error it raised, and so is worth less."""
    owner = np.where(head >= 0, hits - local + head, hits)
    which, member = table.members_of(owner)
    keep = (table.errors[member] > 0) & (member != hits[which])
    which, member = which[keep], member[keep]
    order = np.lexsort((member, -table.errors[member], which))
    which, member = which[order], member[order]
    first = np.arange(which.size) - np.searchsorted(which, which) < ERROR_MEMBERS
    return which[first], member[first], share * table.errors[member[first]]


def _rank_in_group(groups: IntArray, score: FloatArray, row: IntArray, local: IntArray) -> IntArray:
    """Per hit, how many hits of its group (a line shape, an entry) rank above it (best first;
    ties: row, segment); 0 for hits in no group (group 0)."""
    by_group = np.lexsort((local, row, -score, groups))
    grouped = groups[by_group]
    at = np.arange(grouped.size)
    starts = np.ones(grouped.size, dtype=np.bool_)
    starts[1:] = grouped[1:] != grouped[:-1]
    rank = np.empty(grouped.size, dtype=np.int64)
    rank[by_group] = at - np.maximum.accumulate(np.where(starts, at, 0))
    return np.where(groups == 0, 0, rank)
