"""RELEVANT and RECENT strategies over message and tool-output entries."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import (
    ConversationEntry,
    Form,
    Reason,
    SelectionOptions,
    TurnIndex,
    TurnTexts,
    index_turns,
    select_entries,
    select_recent,
    select_relevant,
    update_turns,
)
from sharedctx_server.fit.relevance import content_tokens, turn_relevance


def estimate(text: str) -> int:
    return 0 if not text else math.ceil(len(text) / 4)


def ts(i: int) -> str:
    return f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"


def conversation(pairs: list[tuple[str, str]]) -> list[ConversationEntry]:
    out = []
    for i, (question, answer) in enumerate(pairs):
        out.append(ConversationEntry(ts(2 * i), "user", question))
        out.append(ConversationEntry(ts(2 * i + 1), "assistant", answer))
    return out


def tokens(entries: list[ConversationEntry], each: int = 10) -> np.ndarray:
    return np.full(len(entries), each, dtype=np.int64)


def relevant(entries: list[ConversationEntry], query: str, budget: int, **kw: Any) -> Any:
    t = kw.pop("tokens", tokens(entries))
    floors = {k: kw.pop(k) for k in ("floor_min", "floor_max", "floor_curve") if k in kw}
    opts = SelectionOptions(budget_tokens=budget, **kw)
    return select_relevant(entries, query, t, t, opts, estimate_tokens=estimate, **floors)


PAIRS = [
    ("how do we deploy the staging database", "run the migration then deploy"),
    ("what is for lunch", "pizza"),
    ("any news on the weather", "sunny all week"),
    ("and tomorrow", "rain"),
]


def test_relevant_keeps_matching_turns_and_the_recent_ones() -> None:
    entries = conversation(PAIRS)
    result = relevant(entries, "deploy the staging database", 1000)
    assert result.selection.indices.tolist() == [0, 1, 4, 5, 6, 7]
    assert [result.selection.reason_of(i) for i in (2, 3)] == [Reason.FLOOR] * 2
    assert result.turn_of.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert result.relevance[0] == 1.0 and result.floor is not None


def test_relevant_sheds_the_oldest_non_recent_turns_until_the_budget_holds() -> None:
    pairs = [(f"deploy staging step {i}", f"done deploying {i}") for i in range(5)]
    entries = conversation(pairs)
    result = relevant(entries, "deploy staging", 60, floor_min=0.0, floor_max=0.0)
    # Three turns of 20 tokens fit: the oldest two are shed, the two recent ones stay.
    assert result.selection.indices.tolist() == [4, 5, 6, 7, 8, 9]
    assert result.selection.total_tokens == 60
    assert result.selection.reason_of(0) is Reason.BUDGET


def test_relevant_sheds_recent_turns_last_and_never_exceeds_the_budget() -> None:
    entries = conversation(PAIRS)
    result = relevant(entries, "deploy the staging database", 25, keep_recent=2)
    # Only one 20-token turn fits: the newest.
    assert result.selection.indices.tolist() == [6, 7]


def test_tool_outputs_attach_to_their_turn_and_count_towards_relevance() -> None:
    entries = conversation(PAIRS[:2]) + [
        ConversationEntry(ts(2), None, tool="grep", args="found the staging database config"),
        ConversationEntry("2025-01-01T00:00:00Z", None, tool="ls", args="older than every turn"),
    ]
    result = relevant(entries, "staging database config", 1000, keep_recent=0)
    assert result.turn_of.tolist()[4:] == [1, -1]
    assert result.selection.reason_of(5) is Reason.UNATTACHED
    assert 4 in result.selection.indices.tolist() and 2 in result.selection.indices.tolist()


def test_filtered_entries_take_no_part() -> None:
    entries = conversation(PAIRS)
    eligible = np.ones(len(entries), dtype=bool)
    eligible[7] = False
    t = tokens(entries)
    opts = SelectionOptions(budget_tokens=1000, keep_recent=1)
    result = select_relevant(entries, "", t, t, opts, estimate_tokens=estimate, eligible=eligible)
    assert result.selection.reason_of(7) is Reason.FILTERED
    assert result.selection.indices.tolist() == [6]  # the last turn is now the user message


def test_a_turn_larger_than_the_budget_is_too_large() -> None:
    entries = conversation(PAIRS)
    t = tokens(entries)
    t[7] = 500
    result = relevant(entries, "", 100, tokens=t)
    assert result.selection.reason_of(6) is Reason.TOO_LARGE
    assert result.selection.indices.tolist() == [4, 5]


def test_recent_is_newest_first_and_stops_at_the_first_turn_that_does_not_fit() -> None:
    entries = conversation(PAIRS)
    t = tokens(entries)
    t[3] = 100
    result = select_recent(entries, t, t, SelectionOptions(budget_tokens=60))
    assert result.selection.indices.tolist() == [4, 5, 6, 7]
    assert result.selection.reason_of(0) is Reason.BUDGET


def test_recent_passes_over_a_newest_turn_that_can_never_fit() -> None:
    entries = conversation(PAIRS)
    t = tokens(entries)
    t[7] = 1000
    result = select_recent(entries, t, t, SelectionOptions(budget_tokens=40))
    assert result.selection.reason_of(7) is Reason.TOO_LARGE
    assert result.selection.indices.tolist() == [2, 3, 4, 5]


def test_recent_respects_max_entries_by_whole_turns() -> None:
    entries = conversation(PAIRS)
    result = select_recent(
        entries,
        tokens(entries),
        tokens(entries),
        SelectionOptions(budget_tokens=1000, max_entries=3),
    )
    assert result.selection.indices.tolist() == [6, 7]
    assert result.selection.reason_of(5) is Reason.MAX_ENTRIES


def test_auto_form_in_turn_strategies_keeps_every_chosen_turn_within_budget() -> None:
    entries = conversation(PAIRS)
    full = np.full(len(entries), 30, dtype=np.int64)
    comp = np.full(len(entries), 10, dtype=np.int64)
    opts = SelectionOptions(budget_tokens=100, form=Form.AUTO)
    result = select_recent(entries, full, comp, opts)
    sel = result.selection
    # The newest entry takes its full form (30) only because the other seven still fit
    # compressed (70); the rest go compressed.
    assert sel.indices.size == 8 and sel.total_tokens == 100
    newest = sel.indices.tolist().index(7)
    assert sel.forms[newest] == Form.FULL and sel.ranks[newest] == 1


def test_auto_form_past_the_threshold_is_the_smaller_form_alike_in_every_strategy() -> None:
    """Past compress_threshold AUTO returns the smaller form, compressed on a tie, whether
    SCORED or a turn strategy chose the entries: entry 0 has nothing to compress (tie), entry
    1 a caller-supplied compressed form larger than its full one."""
    entries = conversation(PAIRS)[:2]
    full = np.array([10, 10], dtype=np.int64)
    comp = np.array([10, 12], dtype=np.int64)
    opts = SelectionOptions(budget_tokens=100, form=Form.AUTO, compress_threshold=0, keep_recent=0)
    turns = select_recent(entries, full, comp, opts).selection
    scored = select_entries(np.array([0.9, 0.8]), np.array([0.0, 1.0]), full, comp, opts)
    for sel in (turns, scored):
        forms = dict(zip(sel.indices.tolist(), sel.forms.tolist(), strict=True))
        assert forms == {0: Form.COMPRESSED, 1: Form.FULL}
        assert sel.total_tokens == 20


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[ConversationEntry], np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 20))
    entries = []
    for _ in range(n):
        role = draw(st.sampled_from(["user", "assistant", "assistant", None]))
        text = draw(st.sampled_from(["deploy staging", "lunch", "database config", "ok"]))
        entries.append(ConversationEntry(ts(draw(st.integers(0, 30))), role, text, "tool", text))
    full = np.asarray(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)), dtype=np.int64)
    comp = np.asarray([draw(st.integers(0, int(f))) for f in full], dtype=np.int64)
    return entries, full, comp


@settings(max_examples=80, deadline=None)
@given(
    histories(),
    st.integers(1, 150),
    st.integers(0, 3),
    st.sampled_from([Form.FULL, Form.COMPRESSED, Form.AUTO]),
    st.none() | st.integers(0, 8),
)
def test_turn_strategies_never_exceed_the_budget_and_give_every_entry_a_reason(
    history: tuple[list[ConversationEntry], np.ndarray, np.ndarray],
    budget: int,
    keep_recent: int,
    form: Form,
    max_entries: int | None,
) -> None:
    entries, full, comp = history
    opts = SelectionOptions(
        budget_tokens=budget, keep_recent=keep_recent, form=form, max_entries=max_entries
    )
    for result in (
        select_relevant(
            entries, "deploy staging database", full, comp, opts, estimate_tokens=estimate
        ),
        select_recent(entries, full, comp, opts),
    ):
        sel = result.selection
        assert sel.total_tokens <= budget
        assert max_entries is None or sel.indices.size <= max_entries
        assert sel.reasons.size == len(entries)
        assert (sel.reasons == Reason.SELECTED).sum() == sel.indices.size
        # whole turns only
        chosen = set(sel.indices.tolist())
        for t in set(result.turn_of[sel.indices].tolist()):
            members = set(np.flatnonzero(result.turn_of == t).tolist())
            assert members <= chosen


@settings(max_examples=80, deadline=None)
@given(
    histories(),
    st.lists(st.integers(1, 150), min_size=1, max_size=3),
    st.integers(0, 3),
    st.sampled_from(["deploy staging database", "lunch", "", "config ok"]),
)
def test_a_reused_turn_index_selects_as_fresh_grouping_does_and_as_the_spec_scores(
    history: tuple[list[ConversationEntry], np.ndarray, np.ndarray],
    budgets: list[int],
    keep_recent: int,
    query: str,
) -> None:
    """Fit keeps one TurnIndex across requests; reusing it, for several budgets and queries
    in a row, must change nothing, and its relevance and floor are turn_relevance's."""
    entries, full, comp = history
    index = index_turns(entries, None, estimate)
    for budget in budgets:
        opts = SelectionOptions(budget_tokens=budget, keep_recent=keep_recent)
        reused = select_relevant(index, query, full, comp, opts, estimate_tokens=estimate)
        fresh = select_relevant(entries, query, full, comp, opts, estimate_tokens=estimate)
        assert reused.selection.indices.tolist() == fresh.selection.indices.tolist()
        assert reused.selection.reasons.tolist() == fresh.selection.reasons.tolist()
        relevance, floor = turn_relevance(
            index.turns, query, estimate_tokens=estimate, history_budget=budget,
            keep_recent=keep_recent,
        )  # fmt: skip
        assert reused.relevance.tolist() == relevance
        assert reused.floor == floor
        recent = select_recent(index, full, comp, opts).selection
        again = select_recent(entries, full, comp, opts).selection
        assert recent.indices.tolist() == again.indices.tolist()


def test_turn_texts_carried_between_indexes_never_serve_a_stale_text() -> None:
    """Fit hands each new index the TurnTexts of the previous one; a changed turn text must
    be tokenised anew, an unchanged one may be reused."""
    texts = TurnTexts()
    before = conversation(PAIRS)
    after = [*before[:-1], ConversationEntry(before[-1].created_at, "assistant", "lunch menu")]
    calls: list[str] = []

    def counting(text: str) -> int:
        calls.append(text)
        return estimate(text)

    first = index_turns(before, None, counting, texts=texts)
    first.qa_tokens()
    calls.clear()
    second = index_turns(after, None, counting, texts=texts)
    fresh = index_turns(after, None, estimate)
    assert second.qa_tokens().tolist() == fresh.qa_tokens().tolist()
    assert calls == [second.turns[-1].qa]  # only the changed turn was counted again
    query = content_tokens("lunch menu staging")
    assert second.relevance(query).tolist() == fresh.relevance(query).tolist()


def _index_view(index: TurnIndex) -> tuple[Any, ...]:
    g = index.fresh()
    return (
        [t.qa for t in g.turns],
        [t.created_at for t in g.turns],
        g.members,
        g.turn_of.tolist(),
        g.reasons.tolist(),
        g.position.tolist(),
        g.sizes.tolist(),
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "assistant", None]),
                  st.sampled_from(["deploy staging", "lunch", "config ok"])),
        min_size=0, max_size=24,
    ),
    st.integers(0, 24),
    st.lists(st.booleans(), min_size=24, max_size=24),
    st.booleans(),
)  # fmt: skip
def test_extending_a_turn_index_by_new_entries_equals_building_it_anew(
    items: list[tuple[str | None, str]], split: int, eligible_bits: list[bool], warm: bool
) -> None:
    """Fit extends its kept index when entries were only added; the result must be exactly
    what grouping everything from scratch gives, whatever the old last turn looked like."""
    entries = [ConversationEntry(ts(i), role, text, "tool", text)
               for i, (role, text) in enumerate(items)]  # fmt: skip
    split = min(split, len(entries))
    eligible = np.asarray(eligible_bits[: len(entries)], dtype=np.bool_)
    before = index_turns(entries[:split], eligible[:split], estimate)
    query = content_tokens("deploy config lunch")
    if warm:  # what the old index worked out is carried over, not recomputed
        before.qa_tokens()
        before.relevance(query)
    grown = update_turns(before, entries, eligible, list(range(split, len(entries))))
    if grown is None:
        assert not before.turns  # appending regroups at most the last turn, if there is one
        return
    anew = index_turns(entries, eligible, estimate)
    assert _index_view(grown) == _index_view(anew)
    assert grown.qa_tokens().tolist() == anew.qa_tokens().tolist()
    assert grown.relevance(query).tolist() == anew.relevance(query).tolist()
    opts = SelectionOptions(budget_tokens=60, keep_recent=1)
    assert (
        select_relevant(grown, "deploy config", np.full(len(entries), 5), np.full(len(entries), 3),
                        opts, estimate_tokens=estimate).selection.indices.tolist()
        == select_relevant(entries, "deploy config", np.full(len(entries), 5),
                           np.full(len(entries), 3), opts, estimate_tokens=estimate,
                           eligible=eligible).selection.indices.tolist()
    )  # fmt: skip


def test_a_change_before_every_turn_needs_a_rebuild() -> None:
    entries = conversation(PAIRS)
    before = index_turns(entries[:4], None, estimate)
    older = [*entries[:4], ConversationEntry(ts(0), "user", "imported from the past")]
    assert update_turns(before, older, None, [4]) is None


@settings(max_examples=300, deadline=None)
@given(
    st.integers(3, 80).flatmap(lambda span: st.tuples(
        st.lists(
            st.tuples(st.sampled_from(["user", "assistant", "assistant", None]),
                      st.sampled_from(["deploy staging", "lunch", "config ok"]),
                      st.integers(0, span)),
            min_size=0, max_size=20,
        ),
        st.lists(
            st.tuples(st.sampled_from(["add", "rewrite", "remove", "hide", "show"]),
                      st.integers(0, 40),
                      st.sampled_from(["user", "assistant", None]),
                      st.integers(0, span + 20)),
            min_size=1, max_size=6,
        ),
    )),
    st.booleans(),
)  # fmt: skip
def test_updating_a_turn_index_after_any_edits_equals_building_it_anew(
    history: tuple[list[tuple[str | None, str, int]], list[tuple[str, int, str | None, int]]],
    warm: bool,
) -> None:
    """Fit brings its kept index up to date after puts, overwrites (which may move an entry
    in time), removals and expiry; the result must be what grouping from scratch gives.
    Small time spans make ties in created_at common (rows then order by position)."""
    items, edits = history
    entries = [ConversationEntry(ts(t), role, text, "tool", text) for role, text, t in items]
    eligible = np.ones(len(entries), dtype=np.bool_)
    before = index_turns(entries, eligible, estimate)
    query = content_tokens("deploy config lunch")
    if warm:
        before.qa_tokens()
        before.relevance(query)
    entries, eligible = list(entries), eligible.copy()
    changed: list[int] = []
    for op, row, role, t in edits:
        if op == "add" or not entries:
            entries.append(ConversationEntry(ts(t), role, "new words here", "tool", "x"))
            eligible = np.append(eligible, True)
            changed.append(len(entries) - 1)
            continue
        row %= len(entries)
        if op == "rewrite":
            entries[row] = ConversationEntry(ts(t), role, "rewritten staging", "tool", "y")
            eligible[row] = True
            changed.append(row)
        elif op == "remove":
            entries[row] = ConversationEntry("", None)
            eligible[row] = False
            changed.append(row)
        else:  # expiry or a filter: the entry stays, its eligibility changes
            eligible[row] = op == "show"
    updated = update_turns(before, entries, eligible, changed)
    anew = index_turns(entries, eligible, estimate)
    if updated is None:
        return  # a rebuild: always right
    assert _index_view(updated) == _index_view(anew)
    assert updated.qa_tokens().tolist() == anew.qa_tokens().tolist()
    assert updated.relevance(query).tolist() == anew.relevance(query).tolist()


def test_a_tool_call_tied_with_a_turn_start_does_not_regroup_the_turn_before() -> None:
    """A call sharing its time with the closing message of one turn and the first message
    of the next sorts before both (ties order by row) yet belongs to the later turn."""
    t0, t1, t2 = ts(0), ts(1), ts(2)
    entries = [
        ConversationEntry(t1, None, "", "grep", "deploy"),
        ConversationEntry(t0, "user", "first question"),
        ConversationEntry(t1, "assistant", "first answer"),
        ConversationEntry(t1, "user", "second question"),
    ]
    before = index_turns(entries, None, estimate)
    after = [*entries, ConversationEntry(t2, "assistant", "second answer")]
    updated = update_turns(before, after, None, [4])
    anew = index_turns(after, None, estimate)
    assert updated is None or _index_view(updated) == _index_view(anew)
