"""Definitions of names in code as marks (fit.definitions, segment.definition_marks), and
marks counted as in a text of average length (fit.bm25.is_mark)."""

from __future__ import annotations

import numpy as np
import pytest
from sharedctx_server.fit import SegmentIndex, Segments, TermStats, lexical_terms, query_terms
from sharedctx_server.fit.bm25 import MARK_CHARS, is_mark
from sharedctx_server.fit.clock import CLOCK_MARK
from sharedctx_server.fit.definitions import (
    DEFINITION_MARK,
    defined_names,
    definition_marks,
    definition_query_terms,
)
from sharedctx_server.fit.row_names import ROW_NAME_MARK
from sharedctx_server.fit.superlatives import LEAST, MOST
from sharedctx_server.segment.definition_marks import definition_terms


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("def render_total(lines):", "render_total"),
        ("    async def fetch(self) -> None:", "fetch"),
        ("class OrderBook(Base):", "OrderBook"),
        ("+def widened(lines,", "widened"),  # an added line of a diff
        ("-class Old:", "Old"),
        ("@@ -128,17 +128,21 @@ class Excerpt:", "Excerpt"),  # a hunk's function
        ("export default function App() {", "App"),
        ("func (s *Server) HandleFit(ctx context.Context) error {", "HandleFit"),
        ("pub(crate) fn parse_args<T>() -> T {", "parse_args"),
        ("type Config struct {", "Config"),
        ("interface Props {", "Props"),
        ("module Billing", "Billing"),
        ("MAX_KEYS = 300", "MAX_KEYS"),  # a module's constant
        ('+REWRITING: frozenset[str] = frozenset({"status"})', "REWRITING"),  # with its type
        ("export const apiBase = '/v1'", "apiBase"),
        ("const MAX_RETRIES: u32 = 5;", "MAX_RETRIES"),
    ],
)
def test_a_line_that_defines_a_name_is_found_in_each_language(line: str, name: str) -> None:
    assert defined_names(f"x = 1\n{line}\n") == [(6, name)]


@pytest.mark.parametrize(
    "line",
    [
        "class names are not definitions",
        "the type of x is unknown",
        "2026-12-06 10:05:01 INFO module loaded: billing",
        '  File "app.py", line 12, in render_total',
        "    return render_total(lines)",
        "HTTP/1.1 200 OK",
        "ERROR == 4",  # a comparison
        "Total = 4",  # not a constant's upper case
    ],
)
def test_prose_logs_and_calls_define_nothing(line: str) -> None:
    assert defined_names(line) == []


def test_a_question_asks_for_the_marks_of_the_names_it_writes_as_code() -> None:
    assert definition_query_terms("what changed in render_total?") == [
        DEFINITION_MARK + term for term in ("render", "total", "rendertotal")
    ]
    assert definition_query_terms("what does OrderBook do") == definition_marks("OrderBook")
    assert definition_query_terms("what is `fit` for?") == definition_marks("fit")
    assert definition_query_terms("what does build() return?") == definition_marks("build")
    # Called a function or a class in words.
    assert definition_query_terms("what does the parse function do?") == definition_marks("parse")
    assert definition_query_terms("show me class Ledger") == definition_marks("Ledger")
    # A constant by its upper case (four letters or more).
    assert definition_query_terms("what is in REWRITING?") == definition_marks("REWRITING")
    # Plain questions name no code.
    assert definition_query_terms("why did the nightly job fail?") == []
    assert definition_query_terms("is the API up?") == []
    assert definition_query_terms("which function failed?") == []  # "which" is no term
    assert set(definition_marks("render_total")) <= set(query_terms("what is render_total?"))


def test_each_segment_is_marked_by_the_names_its_lines_define() -> None:
    lines = [
        "import os",
        "",
        "def render_total(lines):",
        "    return sum(lines)",
        "",
        "class Ledger:",
        "    def add(self, x):",
        "        return render_total([x])",
    ]
    marks = definition_terms(lines, [0, 2, 5])
    assert marks == {
        1: definition_marks("render_total"),
        2: definition_marks("Ledger") + definition_marks("add"),
    }
    assert definition_terms(["2026-12-06 10:05 INFO up"] * 3, [0, 1, 2]) == {}


def test_marks_are_their_own_characters() -> None:
    for mark in (MOST, LEAST, CLOCK_MARK, DEFINITION_MARK, ROW_NAME_MARK):
        assert is_mark(mark + "x") and mark in MARK_CHARS
    words = "def render_total(x): return x  # 10:05 § ↑ @ ¶ notes/a.b café"
    assert not any(map(is_mark, lexical_terms(words)))


def test_a_mark_weighs_the_same_in_a_long_segment_as_in_a_short_one() -> None:
    # A function's whole hunk holds its definition's mark as much as a one-line segment does;
    # a word is diluted by length, as BM25 has it.
    mark = DEFINITION_MARK + "total"
    short = ["total", mark]
    long = ["total", mark, *(f"filler{i}" for i in range(60))]
    others = [[f"other{i}", "word"] for i in range(20)]
    index = SegmentIndex()
    segment_terms = [short, long, *others]
    n = len(segment_terms)
    segments = Segments(np.ones(n, dtype=np.int64), np.ones(n, dtype=np.int64), np.zeros(n))
    index.add(0, segments, segment_terms)
    by_mark, by_word = index.bm25([mark]), index.bm25(["total"])
    assert by_mark[0] == pytest.approx(by_mark[1]) and by_mark[0] > 0
    assert by_word[0] > by_word[1] > 0
    # The entries' BM25 the same way.
    stats = TermStats()
    stats.add(0, short)
    stats.add(1, long)
    for i, terms in enumerate(others, start=2):
        stats.add(i, terms)
    entries = stats.bm25_scores([mark])
    assert entries[0] == pytest.approx(entries[1]) and entries[0] > 0
