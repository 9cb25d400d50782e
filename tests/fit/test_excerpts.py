"""Excerpts: segment BM25, excerpt costs and text, and the fill where they compete with
whole entries (docs/excerpts.md)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import (
    Fill,
    Form,
    Reason,
    Relevance,
    SegmentIndex,
    Segments,
    SegmentView,
    SelectionOptions,
    TermStats,
    excerpt_offer,
    lexical_terms,
    omission_marker,
    render_excerpt,
    select_entries,
)
from sharedctx_server.fit.excerpt_items import (
    BLOCK_MEMBERS,
    CONTEXT_SLACK,
    ITEM_EXPONENT,
    REPEAT_FREE,
    SERIES_SHARE,
    Series,
    series_tails,
)
from sharedctx_server.fit.excerpts import (
    LEAD,
    Excerpt,
    plan_excerpt,
    smallest_excerpt,
    widened_excerpt,
)
from sharedctx_server.fit.segment_index import HEAD_TERM_SHARE, line_shape
from sharedctx_server.fit.segments import shown_line

SETTINGS = settings(max_examples=120, deadline=None)


def marker_tokens(lines: int) -> int:
    """A stand-in token count for a marker line: one per word, as count_words counts."""
    return count_words(omission_marker(lines) + "\n")


def count_words(text: str) -> int:
    return len(text.split()) + text.count("\n")


def segments_of(lines: list[str], sizes: list[int]) -> Segments:
    """Segments of `sizes` lines each, counted with count_words."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    texts = ["\n".join(lines[a : a + n]) + "\n" for a, n in zip(starts, sizes, strict=True)]
    return Segments(
        lines=np.asarray(sizes, dtype=np.int64),
        tokens=np.asarray([count_words(t) for t in texts], dtype=np.int64),
        errors=np.zeros(len(sizes)),
    )


# --- segment BM25 -------------------------------------------------------------------------


def one_line_segments(count: int) -> Segments:
    return Segments(np.ones(count, dtype=np.int64), np.ones(count, dtype=np.int64), np.zeros(count))


def test_segment_bm25_equals_entry_bm25_over_the_same_documents() -> None:
    docs = [
        "job resize-images started",
        "job resize-images failed: ConnectionError",
        "job send-digest started",
        "cache purge finished in 12 ms",
    ]
    index = SegmentIndex()
    index.add(9, one_line_segments(2), [lexical_terms(d) for d in docs[2:]])
    index.add(7, one_line_segments(2), [lexical_terms(d) for d in docs[:2]])
    reference = TermStats()
    for i, d in enumerate(docs):
        reference.add(i, lexical_terms(d))
    query = lexical_terms("why did the resize-images job fail with a ConnectionError?")
    table = index.table()
    assert table.slots.tolist() == [7, 9] and table.slot_of.tolist() == [7, 7, 9, 9]
    assert np.allclose(index.bm25(query), reference.bm25_scores(query, size=4))
    assert index.bm25(query).tolist() == index.bm25(query).tolist()  # cached postings


def test_segment_index_keeps_the_postings_of_its_latest_terms_only() -> None:
    from sharedctx_server.fit.segment_index import _CACHED_TERMS

    index = SegmentIndex()
    words = [f"word{k}" for k in range(_CACHED_TERMS + 50)]
    index.add(0, one_line_segments(len(words)), [[w] for w in words])
    before = index.bm25(words[:1]).tolist()
    for word in words:  # every query new, as a namespace read with ever new questions
        assert index.bm25([word]).any()
    assert len(index._flat) == _CACHED_TERMS
    assert index.bm25(words[:1]).tolist() == before  # evicted, then found again alike


def test_segment_index_extended_by_new_entries_equals_one_built_at_once() -> None:
    # Entries added after every other extend the built table and cached postings; whatever
    # the order of adds, replacements, removals and queries, the answers are those of an
    # index that never saw the history.
    rng = np.random.default_rng(7)
    words = [f"w{k}" for k in range(40)]
    index, held = SegmentIndex(), {}
    for step in range(300):
        op = rng.random()
        if op < 0.55 or not held:
            slot = max(held, default=-1) + 1 if rng.random() < 0.8 else int(rng.integers(0, 60))
            count = int(rng.integers(1, 6))
            terms = [list(rng.choice(words, size=int(rng.integers(1, 5)))) for _ in range(count)]
            heads = np.asarray([-1] + [int(rng.integers(-1, k)) for k in range(1, count)])
            segments = Segments(
                rng.integers(1, 4, count), rng.integers(1, 50, count), rng.random(count),
                heads=heads, in_compressed=rng.integers(-1, 2, count),
            )  # fmt: skip
            names = ["tool"] if rng.random() < 0.5 else []
            index.add(slot, segments, terms, names=names)
            held[slot] = (segments, terms, names)
        elif op < 0.7:
            slot = list(held)[int(rng.integers(0, len(held)))]
            index.remove(slot)
            del held[slot]
        query = list(rng.choice(words, size=3))
        if step % 7 == 0:
            fresh = SegmentIndex()
            for slot in sorted(held):
                segments, terms, names = held[slot]
                fresh.add(slot, segments, terms, names=names)
            ours, theirs = index.table(), fresh.table()
            for column in dataclasses.fields(theirs):
                assert np.array_equal(getattr(ours, column.name), getattr(theirs, column.name))
            assert index.bm25(query).tolist() == fresh.bm25(query).tolist(), step
        else:
            index.bm25(query)  # builds and caches what the next add may extend


def test_segment_index_forgets_removed_and_replaced_entries() -> None:
    index = SegmentIndex()
    index.add(1, one_line_segments(2), [["alpha"], ["beta"]])
    index.add(2, one_line_segments(1), [["alpha"]])
    index.add(1, one_line_segments(1), [["gamma"]])  # replaces slot 1
    assert index.segments == 2 and index.entries == 2
    assert not index.bm25(["beta"]).any()
    index.remove(2)
    assert not index.bm25(["alpha"]).any()
    assert index.bm25(["gamma"]).tolist()[0] > 0 and len(index.table()) == 1


def test_a_spliced_table_equals_one_built_at_once_to_its_types() -> None:
    # Each change splices the table built before it; a removal once spliced in an empty
    # list, which made the slots floats, and the next Fit indexed with them (INTERNAL).
    index = SegmentIndex()
    for slot in (1, 2, 3):
        index.add(slot, one_line_segments(2), [["alpha"], ["beta"]])
    for change in ("remove 2", "replace 1", "remove 3", "add 4"):
        index.table()  # built, so that the change is spliced into it
        verb, slot = change.split()
        if verb == "remove":
            index.remove(int(slot))
        else:
            index.add(int(slot), one_line_segments(1), [["gamma"]])
        fresh = SegmentIndex()
        for kept in index.table().slots.tolist():
            fresh.add(kept, index.segments_of(kept), [["x"]] * len(index.segments_of(kept)))
        spliced, built = index.table(), fresh.table()
        for column in ("slots", "bounds", "slot_of", "local", "tokens", "errors", "heads"):
            a, b = getattr(spliced, column), getattr(built, column)
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), (change, column)


def test_an_entrys_name_adds_to_its_matching_lines_and_makes_none_match() -> None:
    lines = ["cache warm", "metrics system started", "org.mortbay.log: Started HttpServer2"]
    index = SegmentIndex()
    index.add(0, one_line_segments(3), [lexical_terms(t) for t in lines], names=["hadoop", "log"])
    index.add(1, one_line_segments(1), [lexical_terms("server started")])
    scores = index.bm25(lexical_terms("hadoop log: started")).tolist()
    assert scores[0] == 0.0  # the name alone matches nothing
    assert scores[1] > scores[3] > 0  # the named entry's line wins over the same words elsewhere


def test_a_heads_query_words_count_for_the_lines_under_it_at_a_share() -> None:
    # `ps aux`: the header row heads every process row; a JSON item elsewhere also says valkey.
    rows = ["USER PID %CPU COMMAND", "root 7 0.1 valkey-server", "root 9 0.0 sshd"]
    heads = np.asarray([-1, 0, 0], dtype=np.int64)
    index = SegmentIndex()
    ps = Segments(np.ones(3, dtype=np.int64), np.ones(3, dtype=np.int64), np.zeros(3), heads)
    index.add(0, ps, [lexical_terms(r) for r in rows])
    index.add(1, one_line_segments(1), [lexical_terms('"name": "valkey-server"')])
    query = lexical_terms("what is the PID of the valkey-server process?")
    scores = index.bm25(query)
    alone = index.bm25(lexical_terms("valkey-server"))
    # The row gains half of what `pid` scores in the header; the item elsewhere gains nothing.
    pid_in_header = index.bm25(lexical_terms("pid"))[0]
    assert scores[1] == pytest.approx(alone[1] + HEAD_TERM_SHARE * pid_in_header)
    assert scores[3] == pytest.approx(alone[3]) and scores[1] > scores[3]
    assert scores[2] == 0.0  # a head's words make no line match by themselves


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_head_words_count_as_the_sum_of_each_terms_better_of_own_and_heads_share(
    data: st.DataObject,
) -> None:
    words = st.sampled_from(["a1", "b2", "c3", "d4", "e5"])
    headed, plain = SegmentIndex(), SegmentIndex()
    heads_of: list[int] = []  # flat position of each segment's head (-1: none)
    for slot in range(data.draw(st.integers(1, 3))):
        n = data.draw(st.integers(1, 8))
        heads = [-1] + [data.draw(st.integers(-1, i - 1)) for i in range(1, n)]
        terms = [data.draw(st.lists(words, max_size=4)) for _ in range(n)]
        base = len(heads_of)
        heads_of += [base + h if h >= 0 else -1 for h in heads]
        ones = np.ones(n, dtype=np.int64)
        headed.add(slot, Segments(ones, ones, np.zeros(n), np.asarray(heads)), terms)
        plain.add(slot, Segments(ones, ones, np.zeros(n)), terms)
    query = data.draw(st.lists(words, min_size=1, max_size=3, unique=True))
    head = np.asarray(heads_of)
    expected = np.zeros(head.size)
    matched = np.zeros(head.size, dtype=np.bool_)
    for term in query:
        own = plain.bm25([term])  # the term's BM25 gain where a segment's text holds it
        inherited = np.where(head >= 0, HEAD_TERM_SHARE * own[np.maximum(head, 0)], 0.0)
        expected += np.maximum(own, inherited)
        matched |= own > 0
    assert np.allclose(headed.bm25(query), np.where(matched, expected, 0.0))


# --- excerpt costs and text ---------------------------------------------------------------


LINES = [f"line {i} word" for i in range(12)]
SEGS = segments_of(LINES, [1, 2, 1, 3, 1, 1, 2, 1])


def test_excerpt_text_shows_the_chosen_lines_with_markers_counting_the_rest() -> None:
    excerpt = Excerpt(SEGS, marker_tokens)
    excerpt.add([3])
    excerpt.add([4])
    assert excerpt.ranges() == [(5, 8)]
    text = render_excerpt(LINES, excerpt.ranges())
    assert text == (
        "[... 4 lines omitted ...]\nline 4 word\nline 5 word\nline 6 word\nline 7 word\n"
        "[... 4 lines omitted ...]\n"
    )
    assert excerpt.tokens == count_words(text)
    assert omission_marker(1) == "[... 1 line omitted ...]"


def test_room_left_shows_the_long_lines_an_excerpt_cut_first_to_last_while_they_fit() -> None:
    lines = ["short one", "word " * 260, "short two", "word " * 230, "word " * 5000]
    ranges = [(2, 5)]
    text = render_excerpt(lines, ranges)
    assert text.count(" chars omitted ...]") == 3
    tokens = count_words(text)
    second, fourth = (count_words(lines[i]) - count_words(shown_line(lines[i])) for i in (1, 3))
    assert second > fourth > 0
    # Room for line 2's tail only, then for line 4's too, then for line 5's (4,800 words).
    rooms = ((second, [2]), (second + fourth - 1, [2]), (second + fourth, [2, 4]))
    for room, widened_lines in (*rooms, (1_000, [2, 4]), (10_000, [2, 4, 5])):
        widened = widened_excerpt(lines, ranges, tokens, room, count_words)
        assert widened is not None
        expected = render_excerpt(lines, ranges, widened_lines)
        assert widened == (expected, count_words(expected))
        assert widened[1] - tokens <= room
    assert widened_excerpt(lines, ranges, tokens, min(second, fourth) - 1, count_words) is None
    assert widened_excerpt(lines, [(1, 1), (3, 3)], 5, 10_000, count_words) is None


@SETTINGS
@given(st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=2), max_size=10))
def test_an_excerpts_cost_is_its_rendered_texts_tokens_whatever_the_order(
    picks: list[list[int]],
) -> None:
    excerpt = Excerpt(SEGS, marker_tokens)
    for pick in picks:
        predicted = excerpt.cost_with(pick)
        excerpt.add(pick)
        assert excerpt.tokens == predicted
    if excerpt.covered:
        assert excerpt.tokens == count_words(render_excerpt(LINES, excerpt.ranges()))
        assert excerpt.covered == sorted(set(excerpt.covered))


def test_plan_takes_the_best_hits_then_their_neighbours_within_the_allowance() -> None:
    relevance = np.zeros(len(SEGS))
    relevance[5] = 1.0
    view = SegmentView(0, SEGS, relevance)
    tight = plan_excerpt(view, 16, marker_tokens)  # one line and a marker either side
    assert tight is not None and tight.covered == [5] and tight.tokens == 16
    roomy = plan_excerpt(view, 40, marker_tokens)
    assert roomy is not None and roomy.covered == [4, 5, 6]
    assert plan_excerpt(view, 2, marker_tokens) is None


def test_plan_shows_no_neighbours_of_a_hit_it_could_not_show() -> None:
    lines = [f"line {i} word" for i in range(9)]
    lines[4] = " ".join(["dump"] * 60)  # the best hit: too large for the allowance
    segs = segments_of(lines, [1] * 9)
    relevance = np.zeros(9)
    relevance[4], relevance[8] = 1.0, 0.5
    plan = plan_excerpt(SegmentView(0, segs, relevance), 30, marker_tokens)
    assert plan is not None and 4 not in plan.covered
    assert 3 not in plan.covered and 5 not in plan.covered  # the big hit's neighbours
    assert 8 in plan.covered and 7 in plan.covered  # the other hit, with its neighbour


def test_plan_without_a_match_shows_the_end() -> None:
    view = SegmentView(0, SEGS, np.zeros(len(SEGS)))
    plan = plan_excerpt(view, 12, marker_tokens)
    assert plan is not None and plan.covered[-1] == len(SEGS) - 1


def test_plan_without_a_match_shows_the_tail_or_nothing() -> None:
    # The last line does not fit: no line from further up stands in for the end.
    lines = [f"line {i} word" for i in range(8)] + [" ".join(["dump"] * 60)]
    view = SegmentView(0, segments_of(lines, [1] * 9), np.zeros(9))
    assert plan_excerpt(view, 30, marker_tokens) is None
    assert smallest_excerpt(view, marker_tokens) > 30
    lines[-1] = "done"
    view = SegmentView(0, segments_of(lines, [1] * 9), np.zeros(9))
    plan = plan_excerpt(view, 30, marker_tokens)
    assert plan is not None and plan.covered == list(range(9 - len(plan.covered), 9))


# --- the fill -----------------------------------------------------------------------------


def fill(
    scores: list[float],
    costs: list[int],
    views: list[SegmentView],
    cut: frozenset[int] | None = None,
    terms: list[list[str]] | None = None,
    segs: Segments = SEGS,
    **opts: Any,
) -> Any:
    """select_entries with excerpts of `views` (every row in `cut` is cut; the others of
    them have no hits); `terms`: each segment's terms (default: a word of its own)."""
    n = len(scores)
    full = np.asarray(costs, dtype=np.int64)
    comp = np.asarray(opts.pop("comp", costs), dtype=np.int64)
    lexical = opts.pop("lexical", None)
    rewritten = opts.pop("rewritten", None)
    asks_cause = opts.pop("asks_cause", False)
    asks_list = opts.pop("asks_list", False)
    options = SelectionOptions(**opts)
    rho = {v.row: v.relevance for v in views}
    index = SegmentIndex()
    for row in sorted((cut or frozenset()) | rho.keys()):
        index.add(row, segs, terms or [[chr(ord("a") + k) * 3] for k in range(len(segs))])
    table = index.table()
    flat = np.concatenate(
        [np.zeros(0)] + [rho.get(r, np.zeros(len(segs))) for r in table.slots.tolist()]
    )
    relevance = Relevance(
        table,
        flat,
        flat,
        np.ones(n, dtype=np.bool_),
        index.segments_of,
        asks_cause=asks_cause,
        asks_list=asks_list,
    )
    whole = full if options.form is Form.FULL else np.minimum(full, comp)
    offer = excerpt_offer(
        relevance,
        np.asarray(scores, dtype=np.float64),
        whole,
        options.budget_tokens,
        marker_tokens,
        full_costs=None if options.form is Form.FULL else full,  # as the Fit service
        lexical=None if lexical is None else np.asarray(lexical, dtype=np.float64),
        rewritten=None if rewritten is None else np.asarray(rewritten, dtype=np.bool_),
    )
    return select_entries(
        np.asarray(scores, dtype=np.float64),
        np.arange(n, dtype=np.float64),
        full,
        comp,
        options,
        excerpts=offer,
    )


def needle(row: int, at: int = 5) -> SegmentView:
    relevance = np.zeros(len(SEGS))
    relevance[at] = 1.0
    return SegmentView(row, SEGS, relevance)


def test_an_entry_too_large_for_the_budget_comes_back_as_an_excerpt() -> None:
    big = int(SEGS.tokens.sum())
    sel = fill([0.9, 0.75], [big, 5], [needle(0)], budget_tokens=25, keep_recent=0)
    assert sel.indices.tolist() == [0, 1]
    assert sel.forms.tolist() == [Form.EXCERPT, Form.COMPRESSED]
    assert 5 in sel.excerpts[0].covered
    assert sel.tokens[0] == sel.excerpts[0].tokens and sel.total_tokens <= 25


def test_an_entry_whose_excerpt_lost_the_budget_to_others_was_left_out_for_budget() -> None:
    big = int(SEGS.tokens.sum())
    # The newest entry (row 1, kept first by keep_recent) leaves too little for any of row
    # 0's lines: row 0 could have gone in as an excerpt, so budget is why, not its size.
    sel = fill([0.9, 0.1], [big, 24], [needle(0)], budget_tokens=25, keep_recent=1)
    assert sel.indices.tolist() == [1]
    assert sel.reason_of(0) is Reason.BUDGET


def test_an_entry_with_a_hit_that_fits_is_left_out_for_budget_however_weak_the_hit() -> None:
    # Twelve entries full of strong hits: the fill is handed only the best few budgets' worth
    # of items, none of row 12's. Its line would still have fitted: budget is why, not size.
    big = int(SEGS.tokens.sum())
    strong = [SegmentView(row, SEGS, np.ones(len(SEGS))) for row in range(12)]
    weak = dataclasses.replace(needle(12), relevance=0.1 * needle(12).relevance)
    sel = fill([0.9] * 12 + [0.5], [big] * 13, [*strong, weak], budget_tokens=25, keep_recent=0)
    assert 12 not in sel.indices.tolist()
    assert sel.reason_of(12) is Reason.BUDGET


def test_without_an_offer_the_same_entry_is_too_large() -> None:
    big = int(SEGS.tokens.sum())
    sel = select_entries(
        np.asarray([0.9, 0.5]),
        np.arange(2.0),
        np.asarray([big, 5]),
        np.asarray([big, 5]),
        SelectionOptions(budget_tokens=20, keep_recent=0),
    )
    assert sel.reason_of(0) is Reason.TOO_LARGE and not sel.excerpts


def test_matching_lines_win_over_a_whole_entry_that_would_eat_the_budget() -> None:
    # Entry 0 fits whole (40 of 60 tokens) but its match is one small segment: an excerpt
    # leaves room for entry 1, which is nearly as good.
    whole = int(SEGS.tokens.sum())
    sel = fill([0.9, 0.85], [whole, 20], [needle(0)], budget_tokens=60, keep_recent=0)
    assert sel.forms.tolist() == [Form.EXCERPT, Form.COMPRESSED]


def test_the_entry_that_clearly_leads_goes_in_whole_when_it_fits() -> None:
    # Entry 0 scores LEAD times entry 1 or more: what the query is about, whole, shows its
    # lines that match weakly too, which the excerpt would leave to entry 1.
    whole = int(SEGS.tokens.sum())
    sel = fill([0.9, 0.9 / LEAD], [whole, 20], [needle(0)], budget_tokens=60, keep_recent=0)
    assert sel.indices.tolist() == [0] and sel.forms.tolist() == [Form.COMPRESSED]
    # Not when it does not fit, nor when its whole form is a compressed one that left lines out.
    sel = fill([0.9, 0.85], [whole, 20], [needle(0)], budget_tokens=whole - 1, keep_recent=0)
    assert sel.forms.tolist() == [Form.EXCERPT, Form.COMPRESSED]
    sel = fill([0.9, 0.85], [whole, 20], [needle(0)], comp=[4, 20], budget_tokens=60,
               keep_recent=0)  # fmt: skip
    assert sel.forms.tolist() == [Form.EXCERPT, Form.COMPRESSED]


def test_a_full_form_request_turns_an_excerpt_whole_when_the_budget_allows() -> None:
    big = int(SEGS.tokens.sum())
    # Entry 1 (one token), nearly as good, does not match: entry 0 leads no one by LEAD.
    opts: dict[str, Any] = {"budget_tokens": big + 6, "keep_recent": 0}
    sel = fill([0.9, 0.87], [big, 1], [needle(0)], form=Form.FULL, **opts)
    assert sel.forms.tolist() == [Form.FULL, Form.FULL] and not sel.excerpts
    sel = fill([0.9, 0.87], [big, 1], [needle(0)], **opts)
    assert sel.forms[0] == Form.EXCERPT  # the compressed form may lack the lines


def test_a_large_newest_entry_is_not_promised_a_place_whole() -> None:
    big = int(SEGS.tokens.sum())
    # Row 1 is the newest and fits whole, but would take most of the budget: it competes
    # instead, and row 0's matching lines go first.
    sel = fill([0.9, 0.85], [big, big], [needle(0)], cut=frozenset({0, 1}), budget_tokens=big + 2)
    assert sel.forms[sel.indices.tolist().index(0)] == Form.EXCERPT


def test_a_compressed_form_that_may_lack_the_matching_lines_does_not_stand_in_for_them() -> None:
    big = int(SEGS.tokens.sum())
    # Cheap enough whole (4 of 100 tokens), but compressed: only the excerpt surely holds the
    # line that matched.
    sel = fill([0.9], [big], [needle(0)], comp=[4], budget_tokens=100, keep_recent=0)
    assert sel.forms.tolist() == [Form.EXCERPT] and 5 in sel.excerpts[0].covered
    # A whole form that is the text itself, or close to it (re-spaced), may go in whole.
    for comp in (big, int(0.9 * big)):
        sel = fill([0.9], [big], [needle(0)], comp=[comp], budget_tokens=4 * big, keep_recent=0)
        assert sel.forms.tolist() == [Form.COMPRESSED]


def test_a_compressed_form_known_to_lack_the_best_line_does_not_stand_in() -> None:
    big = int(SEGS.tokens.sum())

    def shown(flags: list[int]) -> Segments:
        return dataclasses.replace(SEGS, in_compressed=np.asarray(flags, dtype=np.int64))

    # Every line matches a little, line 5 best: not concentrated, so a small compressed form
    # goes in whole when it is not known to leave line 5 out (no flags, or flags that say
    # it shows it), and only an excerpt goes in when it is.
    spread = SegmentView(0, SEGS, np.full(len(SEGS), 0.6))
    spread.relevance[5] = 1.0
    lacks = [0 if k == 5 else 1 for k in range(len(SEGS))]
    shows = [1 if k == 5 else 0 for k in range(len(SEGS))]
    for segs, form in ((SEGS, Form.COMPRESSED), (shown(shows), Form.COMPRESSED),
                       (shown(lacks), Form.EXCERPT)):  # fmt: skip
        sel = fill([0.9], [big], [spread], comp=[4], segs=segs, budget_tokens=100, keep_recent=0)
        assert sel.forms.tolist() == [form]
    assert 5 in sel.excerpts[0].covered


def test_a_compressed_form_that_rewrites_every_line_stands_in_for_the_matching_ones() -> None:
    big = int(SEGS.tokens.sum())
    lacks = dataclasses.replace(
        SEGS, in_compressed=np.asarray([0 if k == 5 else 1 for k in range(len(SEGS))])
    )
    # A git status said once per folder: no line of it is written as the full form writes
    # it, yet every path is there. Whole, where it fits, it shows every line that matched
    # (all the deleted files, where an excerpt showed a few); too large, the excerpt goes in.
    for comp, budget, form in ((big // 2, 2 * big, Form.COMPRESSED), (big // 2, 20, Form.EXCERPT)):
        options = {"comp": [comp], "segs": lacks, "budget_tokens": budget, "keep_recent": 0}
        sel = fill([0.9], [big], [needle(0)], rewritten=[True], **options)
        assert sel.forms.tolist() == [form]
        # Not known to rewrite: a form this much smaller is taken to leave lines out.
        assert fill([0.9], [big], [needle(0)], **options).forms.tolist() == [Form.EXCERPT]


def test_a_rewriting_form_larger_than_a_quarter_of_the_budget_goes_whole_for_a_list() -> None:
    big = int(SEGS.tokens.sum())
    # Beside a small entry that scores nearly as well (no clear lead), with room for the
    # whole form but more than a quarter of the budget: asked for one line (a function's
    # definition in a search), the excerpt says it in fewer tokens; asked for many alike
    # lines (every deleted file of a status), more than an excerpt shows freely, the whole
    # form lists them all.
    one = needle(0)
    many = SegmentView(0, SEGS, np.where(np.arange(len(SEGS)) % 2 == 0, 1.0, 0.0))
    options = {"comp": [big // 2, 5], "budget_tokens": big, "keep_recent": 0}
    for view, form in ((one, Form.EXCERPT), (many, Form.COMPRESSED)):
        sel = fill([0.9, 0.85], [big, 5], [view], rewritten=[True, False], **options)
        assert sel.forms[sel.indices.tolist().index(0)] == form


def test_a_full_form_larger_than_a_quarter_of_the_budget_goes_whole_for_a_list() -> None:
    big = int(SEGS.tokens.sum())
    # As a rewriting form: the full form shows every line, so asked for many alike lines
    # it lists them all where it fits (form: full, or an entry its compressor left whole);
    # asked for one, the excerpt says it in fewer tokens.
    one = needle(0)
    many = SegmentView(0, SEGS, np.where(np.arange(len(SEGS)) % 2 == 0, 1.0, 0.0))
    for options in (
        {"form": Form.FULL, "budget_tokens": big, "keep_recent": 0},
        {"comp": [big, 5], "budget_tokens": big, "keep_recent": 0},
    ):
        for view, whole in ((one, False), (many, True)):
            sel = fill([0.9, 0.85], [big, 5], [view], **options)
            form = Form(int(sel.forms[sel.indices.tolist().index(0)]))
            assert (form is not Form.EXCERPT) == whole, (options, form)


def test_the_line_that_matches_best_wins_over_a_slightly_better_entrys_line() -> None:
    big = int(SEGS.tokens.sum())

    def line(row: int, rho: float) -> SegmentView:
        relevance = np.zeros(len(SEGS))
        relevance[5] = rho
        return SegmentView(row, SEGS, relevance)

    one = Excerpt(SEGS, marker_tokens)
    one.add([5])
    # Room for one such excerpt: entry 0 is the better entry, entry 1 has the better line.
    sel = fill([1.1, 0.95], [big, big], [line(0, 0.8), line(1, 0.84)],
               budget_tokens=one.tokens + 2, keep_recent=0)  # fmt: skip
    assert sel.indices.tolist() == [1] and sel.excerpts[1].covered == [5]
    # Lines that match alike: the better entry's.
    sel = fill([1.1, 0.95], [big, big], [line(0, 0.84), line(1, 0.84)],
               budget_tokens=one.tokens + 2, keep_recent=0)  # fmt: skip
    assert sel.indices.tolist() == [0]


def test_an_excerpt_only_entry_goes_before_whole_entries_it_outscores() -> None:
    # Entry 0 (0.9) matches weakly next to entry 2's strong line (in an entry that matters
    # little), so its line scores far below entry 1 (0.8), a whole entry without a match that
    # would fill the budget alone. Kept from going in whole to show its lines, entry 0 still
    # goes before entries it outscores; and entry 2's line, which matches better, goes no
    # later than entry 0's: lifted, a weak line does not pass better lines of others.
    big = int(SEGS.tokens.sum())
    two = Excerpt(SEGS, marker_tokens)
    two.add([5])
    budget = 2 * two.tokens + 2
    weak, strong = needle(0), needle(2)
    weak.relevance[5] = 0.4  # between entry 2's line and that line's neighbours
    sel = fill([0.9, 0.8, 0.05], [big, budget - 1, big], [weak, strong],
               budget_tokens=budget, keep_recent=0)  # fmt: skip
    assert sorted(sel.indices.tolist()) == [0, 2]
    assert sel.excerpts[0].covered == [5] and sel.excerpts[2].covered == [5]
    assert sel.reason_of(1) is Reason.BUDGET
    # Room for one line: the better one.
    sel = fill([0.9, 0.8, 0.05], [big, two.tokens + 1, big], [weak, strong],
               budget_tokens=two.tokens + 2, keep_recent=0)  # fmt: skip
    assert sel.indices.tolist() == [2]
    # A whole entry that shares a word with the query (a note that says the answer) keeps its
    # place: the weak line is not lifted over it, nor are the better lines of others with it.
    sel = fill([0.9, 0.8, 0.05], [big, budget - 1, big], [weak, strong],
               budget_tokens=budget, keep_recent=0, lexical=[1.0, 2.0, 1.0])  # fmt: skip
    assert sel.indices.tolist() == [1]


def test_repeats_of_one_line_give_way_to_a_line_that_says_something_else() -> None:
    # The one-line segments 0, 2, 4, 5 say the same with other numbers and match best; the
    # last matches less but says something else.
    last, alike = len(SEGS) - 1, [0, 2, 4, 5]
    assert all(SEGS.lines[k] == 1 for k in [*alike, last])
    repeats = [["retry", "connect", str(k)] if k in alike else ["other" * (k + 1)]
               for k in range(len(SEGS))]  # fmt: skip
    repeats[last] = ["refused"]
    distinct = [[*terms, "x" * (k + 1)] for k, terms in enumerate(repeats)]
    assert line_shape(repeats[0]) == line_shape(repeats[2]) != line_shape(distinct[2])
    assert line_shape(["42", "0x1f"]) == 0  # nothing but numbers: no shape
    relevance = np.zeros(len(SEGS))
    relevance[alike] = 0.9
    relevance[last] = 0.7  # 0.7 / 0.9 of the best lines: above their neighbours' CONTEXT_SHARE
    expected = [*alike[:REPEAT_FREE], last]
    room = Excerpt(SEGS, marker_tokens)
    room.add(expected)
    big = int(SEGS.tokens.sum())
    view = SegmentView(0, SEGS, relevance)
    sel = fill([0.9], [big], [view], terms=repeats, budget_tokens=room.tokens, keep_recent=0)
    assert sel.excerpts[0].covered == expected
    # Were each line its own, the better lines would have taken the budget.
    sel = fill([0.9], [big], [view], terms=distinct, budget_tokens=room.tokens, keep_recent=0)
    assert sel.excerpts[0].covered == alike


def test_a_hit_keeps_its_context_however_many_weaker_hits_there_are() -> None:
    # Sixty one-line segments of 10 tokens: the best hit at 30, weaker hits at every other
    # even line (enough to cover many budgets). Each weaker hit would cost a marker too; the
    # best hit's neighbour only its own line, which is all the budget has room for.
    segs = Segments(np.ones(60, dtype=np.int64), np.full(60, 10, dtype=np.int64), np.zeros(60))
    relevance = np.zeros(60)
    relevance[2:58:2] = 0.6  # never at an end, where a line would replace a marker
    relevance[30] = 1.0
    best = Excerpt(segs, marker_tokens)
    best.add([30])
    budget = best.tokens + 13  # room for a neighbour (10), not for a hit and its marker (16)
    sel = fill([0.9], [600], [SegmentView(0, segs, relevance)], segs=segs,
               budget_tokens=budget, keep_recent=0)  # fmt: skip
    covered = sel.excerpts[0].covered
    assert 30 in covered and len(covered) == 2 and ({29, 31} & set(covered))


def test_an_error_hit_brings_the_segment_before_it_or_comes_alone_when_both_do_not_fit() -> None:
    # Twenty one-line segments of 10 tokens; the hit at 10 carries an error.
    errors = np.zeros(20)
    errors[10] = 0.9
    segs = Segments(np.ones(20, dtype=np.int64), np.full(20, 10, dtype=np.int64), errors)
    relevance = np.zeros(20)
    relevance[10] = 1.0
    pair, single = Excerpt(segs, marker_tokens), Excerpt(segs, marker_tokens)
    pair.add([9, 10])
    single.add([10])
    view = SegmentView(0, segs, relevance)
    for budget, shown in ((pair.tokens, [9, 10]), (pair.tokens - 1, [10])):
        sel = fill([0.9], [200], [view], segs=segs, budget_tokens=budget, keep_recent=0)
        assert sorted(sel.excerpts[0].covered) == shown
    assert single.tokens < pair.tokens


def test_a_neighbour_much_larger_than_its_hit_gives_way_to_a_weaker_hit() -> None:
    # Twenty segments of 10 tokens but the 9th, 200 tokens (another file's block of
    # warnings); the best hit at 10 carries an error (eslint's count of problems), a weaker
    # one at 3. With room for the hit and the large segment before it, the weaker hit and
    # the hit's small neighbours go in instead: the large one is neither brought by the
    # error nor worth its share as context.
    errors = np.zeros(20)
    errors[10] = 0.9
    tokens = np.full(20, 10, dtype=np.int64)
    tokens[9] = 200
    segs = Segments(np.ones(20, dtype=np.int64), tokens, errors)
    relevance = np.zeros(20)
    relevance[10], relevance[3] = 1.0, 0.5
    pair = Excerpt(segs, marker_tokens)
    pair.add([9, 10])
    view = SegmentView(0, segs, relevance)
    sel = fill([0.9], [400], [view], segs=segs, budget_tokens=pair.tokens, keep_recent=0)
    covered = sel.excerpts[0].covered
    assert {3, 10, 11} <= set(covered) and 9 not in covered
    # A neighbour no larger than its hit plus CONTEXT_SLACK still comes first.
    tokens[9] = 10 + CONTEXT_SLACK
    segs = Segments(np.ones(20, dtype=np.int64), tokens, errors)
    pair = Excerpt(segs, marker_tokens)
    pair.add([9, 10])
    view = SegmentView(0, segs, relevance)
    sel = fill([0.9], [400], [view], segs=segs, budget_tokens=pair.tokens, keep_recent=0)
    assert sorted(sel.excerpts[0].covered) == [9, 10]


def test_a_hit_brings_its_head_before_its_neighbours_when_the_budget_allows() -> None:
    # Forty one-line segments of 10 tokens, each headed by segment 0 (a table's header row):
    # the hit at 20 shows the header first, then its neighbours, as the budget grows.
    n = 40
    heads = np.zeros(n, dtype=np.int64)
    heads[0] = -1
    segs = Segments(np.ones(n, dtype=np.int64), np.full(n, 10, dtype=np.int64), np.zeros(n), heads)
    relevance = np.zeros(n)
    relevance[20] = 1.0
    view = SegmentView(0, segs, relevance)
    hit = Excerpt(segs, marker_tokens)
    hit.add([20])
    with_head = Excerpt(segs, marker_tokens)
    with_head.add([0, 20])

    def covered(budget: int) -> list[int]:
        sel = fill([0.9], [10 * n], [view], segs=segs, budget_tokens=budget, keep_recent=0)
        return list(sel.excerpts[0].covered)

    assert covered(hit.tokens) == [20]
    assert covered(with_head.tokens) == [0, 20]
    assert covered(with_head.tokens + 20) == [0, 19, 20, 21]


def test_a_hit_brings_its_heads_head_after_its_head() -> None:
    # `git log -p`: a commit's header (segment 2) heads its files' headers (10, 30); each file
    # header heads its hunks. "Which commit added LIST_FREE?" matches a hunk (20) alone: it
    # shows its file and its commit, then its neighbours.
    n = 40
    heads = np.full(n, -1, dtype=np.int64)
    heads[[10, 30]] = 2
    heads[11:30], heads[31:] = 10, 30
    segs = Segments(np.ones(n, dtype=np.int64), np.full(n, 10, dtype=np.int64), np.zeros(n), heads)
    relevance = np.zeros(n)
    relevance[20] = 1.0
    view = SegmentView(0, segs, relevance)
    wanted = Excerpt(segs, marker_tokens)
    wanted.add([2, 10, 20])

    def covered(budget: int) -> list[int]:
        sel = fill([0.9], [10 * n], [view], segs=segs, budget_tokens=budget, keep_recent=0)
        return list(sel.excerpts[0].covered)

    assert covered(wanted.tokens) == [2, 10, 20]
    assert covered(wanted.tokens + 20) == [2, 10, 19, 20, 21]


def test_a_hit_just_under_its_head_brings_it_along() -> None:
    # A commit's header (4) and its message (5, the hit); another entry's line (1 of row 1)
    # matches a little less well. The message comes with its header, as one item, before the
    # other line: the header is what says which commit. Where the two do not fit, the
    # message comes alone.
    n = 12
    heads = np.full(n, -1, dtype=np.int64)
    heads[5:] = 4
    segs = Segments(np.ones(n, dtype=np.int64), np.full(n, 10, dtype=np.int64), np.zeros(n), heads)
    message = np.zeros(n)
    message[5] = 1.0
    other = np.zeros(n)
    other[1] = 0.85
    pair = Excerpt(segs, marker_tokens)
    pair.add([4, 5])
    views = [SegmentView(0, segs, message), SegmentView(1, segs, other)]
    sel = fill([0.9, 0.9], [10 * n] * 2, views, segs=segs, budget_tokens=pair.tokens,
               keep_recent=0)  # fmt: skip
    assert list(sel.excerpts[0].covered) == [4, 5] and 1 not in sel.excerpts
    alone = Excerpt(segs, marker_tokens)
    alone.add([5])
    sel = fill([0.9, 0.9], [10 * n] * 2, views, segs=segs, budget_tokens=alone.tokens,
               keep_recent=0)  # fmt: skip
    assert list(sel.excerpts[0].covered) == [5]


def test_a_hit_that_heads_a_block_brings_the_block() -> None:
    # A folder line (segment 10) heads segments 11..29, as in `ls -lR`: a hit on the folder
    # shows what it holds, in order, as far as the budget goes and BLOCK_MEMBERS allows.
    n = 40
    heads = np.full(n, -1, dtype=np.int64)
    heads[11:30] = 10
    segs = Segments(np.ones(n, dtype=np.int64), np.full(n, 10, dtype=np.int64), np.zeros(n), heads)
    relevance = np.zeros(n)
    relevance[10] = 1.0
    view = SegmentView(0, segs, relevance)
    sel = fill([0.9], [10 * n], [view], segs=segs, budget_tokens=150, keep_recent=0)
    covered = list(sel.excerpts[0].covered)
    assert covered[:2] == [9, 10] or covered[:2] == [10, 11]
    assert set(range(10, 19)) <= set(covered) and max(covered) < 30
    sel = fill([0.9], [10 * n], [view], segs=segs, budget_tokens=390, keep_recent=0)
    assert set(range(10, 10 + 1 + BLOCK_MEMBERS)) <= set(sel.excerpts[0].covered)
    assert not set(range(10 + 2 + BLOCK_MEMBERS, 30)) & set(sel.excerpts[0].covered)


def test_a_hit_in_a_block_brings_the_blocks_strongest_error_after_its_neighbours() -> None:
    # A failing test's block: its name (segment 2) heads the test's body (4, the hit), the
    # library source pytest prints (5..24) and the `E` line (25). A line of source that
    # raises carries a weaker error (10). The `E` line comes after the hit's neighbours and
    # before the rest of the block.
    n = 40
    heads = np.full(n, -1, dtype=np.int64)
    heads[3:26] = 2
    errors = np.zeros(n)
    errors[10], errors[25] = 0.3, 0.8
    segs = Segments(np.ones(n, dtype=np.int64), np.full(n, 10, dtype=np.int64), errors, heads)
    relevance = np.zeros(n)
    relevance[2], relevance[4] = 0.5, 1.0
    view = SegmentView(0, segs, relevance)
    wanted = Excerpt(segs, marker_tokens)
    wanted.add([2, 3, 4, 5, 25])

    def covered(budget: int) -> list[int]:
        sel = fill([0.9], [10 * n], [view], segs=segs, budget_tokens=budget, keep_recent=0)
        return list(sel.excerpts[0].covered)

    assert covered(wanted.tokens) == [2, 3, 4, 5, 25]


def test_a_question_of_cause_brings_the_blocks_error_before_the_second_neighbours() -> None:
    # `kubectl describe pod`: the container's block (head 2) holds `Restart Count: 14` (the
    # hit, 10) and, five lines up, `Reason: OOMKilled` (5, error 0.6). "Why does the pod keep
    # restarting?" asks for what went wrong, which shares no word with it: the error comes
    # right after the hit's nearest neighbours, before the next ones out.
    n = 30
    heads = np.full(n, -1, dtype=np.int64)
    heads[3:20] = 2
    errors = np.zeros(n)
    errors[5] = 0.6
    segs = Segments(np.ones(n, dtype=np.int64), np.full(n, 10, dtype=np.int64), errors, heads)
    relevance = np.zeros(n)
    relevance[10] = 1.0
    view = SegmentView(0, segs, relevance)
    wanted = Excerpt(segs, marker_tokens)
    wanted.add([2, 5, 9, 10, 11])

    def covered(asks_cause: bool) -> list[int]:
        sel = fill(
            [0.9], [10 * n], [view], segs=segs, budget_tokens=wanted.tokens, keep_recent=0,
            asks_cause=asks_cause,
        )  # fmt: skip
        return list(sel.excerpts[0].covered)

    assert covered(True) == [2, 5, 9, 10, 11]
    # Asked only what the block holds, its error weighs less than the second neighbours.
    assert 5 not in covered(False)


def test_a_question_for_a_list_takes_more_lines_of_one_entry_before_another_entrys() -> None:
    # A status's eight `new file:` lines match alike; another entry has one line that matches
    # a little less. Past an entry's fifth hit, each weighs less: asked "which new files
    # are staged?", the list is the answer, and all eight come first.
    n = 12
    segs = Segments(np.ones(n, dtype=np.int64), np.full(n, 10, dtype=np.int64), np.zeros(n))
    listed = SegmentView(0, segs, np.where(np.arange(n) < 8, 1.0, 0.0))
    other = SegmentView(1, segs, np.where(np.arange(n) == 3, 0.9, 0.0))
    wanted = Excerpt(segs, marker_tokens)
    wanted.add(list(range(8)))

    def covered(asks_list: bool) -> list[int]:
        sel = fill(
            [0.9, 0.9], [10 * n, 10 * n], [listed, other], segs=segs,
            budget_tokens=wanted.tokens, keep_recent=0, asks_list=asks_list,
        )  # fmt: skip
        return list(sel.excerpts[0].covered) if 0 in sel.excerpts else []

    assert covered(True) == list(range(8))
    assert covered(False) != list(range(8))


def test_max_entries_counts_an_excerpt_as_one_entry_that_can_still_grow() -> None:
    sel = fill([0.9, 0.8], [100, 5], [needle(0)], budget_tokens=60, keep_recent=0, max_entries=1)
    assert sel.indices.tolist() == [0]
    assert sel.excerpts[0].covered == [3, 4, 5, 6, 7]  # the hit and two segments each side
    assert sel.reason_of(1) is Reason.MAX_ENTRIES


def test_an_entry_that_could_only_be_an_excerpt_is_left_out_by_max_entries_when_it_would_fit() -> (
    None
):
    # Entry 0 is too large whole and offered only as an excerpt; with no entry allowed, it is
    # max_entries, not the budget, that keeps it out.
    sel = fill([0.9, 0.8], [500, 5], [needle(0)], budget_tokens=60, keep_recent=0, max_entries=0)
    assert sel.indices.tolist() == []
    assert sel.reason_of(0) is Reason.MAX_ENTRIES
    assert sel.reason_of(1) is Reason.MAX_ENTRIES


@st.composite
def scenes(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 8))
    scores = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    costs = draw(st.lists(st.integers(1, 120), min_size=n, max_size=n))
    views = []
    for row in draw(st.sets(st.integers(0, n - 1))):
        relevance = np.asarray(
            draw(st.lists(st.sampled_from([0.0, 0.2, 0.7, 1.0]), min_size=8, max_size=8))
        )
        views.append(SegmentView(row, SEGS, relevance))
        costs[row] = max(costs[row], int(SEGS.tokens.sum()))
    return {
        "scores": scores,
        "costs": costs,
        "views": sorted(views, key=lambda v: v.row),
        "budget_tokens": draw(st.integers(1, 150)),
        "keep_recent": draw(st.integers(0, 3)),
        "fill": draw(st.sampled_from([Fill.SKIP, Fill.STOP])),
        "form": draw(st.sampled_from([Form.COMPRESSED, Form.FULL, Form.AUTO])),
        "max_entries": draw(st.none() | st.integers(0, 4)),
    }


@SETTINGS
@given(scenes())
def test_the_budget_holds_and_an_entry_is_whole_or_an_excerpt_never_both(
    scene: dict[str, Any],
) -> None:
    sel = fill(**scene)
    again = fill(**scene)
    assert sel.total_tokens <= scene["budget_tokens"]
    assert sel.indices.tolist() == again.indices.tolist()  # deterministic
    assert sel.tokens.tolist() == again.tokens.tolist()
    assert len(set(sel.indices.tolist())) == sel.indices.size
    for row, form, tokens in zip(sel.indices, sel.forms, sel.tokens, strict=True):
        if form == Form.EXCERPT:
            excerpt = sel.excerpts[int(row)]
            assert tokens == excerpt.tokens == count_words(render_excerpt(LINES, excerpt.ranges()))
        else:
            assert int(row) not in sel.excerpts
    if scene["max_entries"] is not None:
        assert sel.indices.size <= scene["max_entries"]
    for row in range(len(scene["scores"])):
        assert (sel.reason_of(row) is Reason.SELECTED) == (row in sel.indices)


@pytest.mark.parametrize("budget", [24, 30, 60])
def test_excerpts_never_need_the_whole_entry_to_fit(budget: int) -> None:
    sel = fill([0.5], [10_000], [needle(0, at=3)], budget_tokens=budget, keep_recent=0)
    assert sel.total_tokens <= budget
    assert sel.indices.tolist() == [0] and 3 in sel.excerpts[0].covered


def test_context_goes_in_only_beside_its_match() -> None:
    # The match (3 lines and two markers) does not fit; its 1-line neighbour would, alone.
    sel = fill([0.5], [10_000], [needle(0, at=3)], budget_tokens=20, keep_recent=0)
    assert sel.indices.size == 0


def test_a_line_that_matches_half_as_well_goes_before_a_whole_entry_that_matches_nothing() -> None:
    # Entry 0's second line matches half as well as its best: ranked by the root of its score
    # (ITEM_EXPONENT), it goes before entry 1, a whole entry with no matching line that scores
    # above its linear score (0.5) and below its root (0.71).
    assert ITEM_EXPONENT == 0.5
    big = int(SEGS.tokens.sum())
    lines = SegmentView(0, SEGS, np.zeros(len(SEGS)))
    lines.relevance[[0, 7]] = [0.5, 1.0]  # the first and the last segment: no neighbour between
    both = Excerpt(SEGS, marker_tokens)
    both.add([0, 7])
    best = Excerpt(SEGS, marker_tokens)
    best.add([7])
    sel = fill([1.0, 0.65], [big, both.tokens - best.tokens], [lines],
               budget_tokens=both.tokens, keep_recent=0)  # fmt: skip
    assert sel.indices.tolist() == [0] and sel.excerpts[0].covered[:1] == [0]
    assert 7 in sel.excerpts[0].covered and sel.reason_of(1) is Reason.BUDGET


def test_the_newest_run_of_a_command_ends_beside_the_older_runs_hits() -> None:
    # Slots 0, 1, 2: runs of one command (oldest first), opening alike; slot 3: the same
    # command's output opening otherwise; slot 4: another command.
    opening, other = ["test", "session", "start"], ["collect", "items"]
    index = SegmentIndex()
    for slot, first in ((0, opening), (1, opening), (2, opening), (3, other), (4, opening)):
        index.add(slot, one_line_segments(3), [first, ["fail", "x"], ["summary"]])
    table = index.table()
    series = Series(
        command=np.array([1, 1, 1, 1, 2]),
        order=np.array([10, 20, 30, 40, 50]),
        echoed=np.zeros(5, dtype=np.bool_),
    )
    everyone = np.ones(5, dtype=np.bool_)
    at, score = series_tails(table, series, everyone, np.array([0, 1]), np.array([0.4, 0.6]))
    # The newest run (slot 2) ends beside them, at SERIES_SHARE of their best hit.
    assert table.slot_of[at].tolist() == [2] and table.local[at].tolist() == [2]
    assert score.tolist() == pytest.approx([SERIES_SHARE * 0.6])
    # Hits of the newest run alone bring nothing; nor of a command run once.
    assert (
        series_tails(table, series, everyone, np.array([2, 4]), np.array([1.0, 1.0]))[0].size == 0
    )
    # The newest among the candidates stands for the runs; echoed runs need not open alike.
    no_two = everyone.copy()
    no_two[2] = False
    at, _ = series_tails(table, series, no_two, np.array([0]), np.array([0.5]))
    assert table.slot_of[at].tolist() == [1]
    echoing = dataclasses.replace(series, echoed=np.array([True, True, True, True, False]))
    at, _ = series_tails(table, echoing, everyone, np.array([0]), np.array([0.5]))
    assert table.slot_of[at].tolist() == [3]
