"""Superlative questions: which query words ask for a column's largest or smallest row."""

from __future__ import annotations

import numpy as np
from sharedctx_server.fit import lexical_terms, query_terms
from sharedctx_server.fit.row_names import row_name_query_terms
from sharedctx_server.fit.segment_relevance import (
    frequent_shape_first,
    ordinal_first,
    segment_relevance,
)
from sharedctx_server.fit.superlatives import (
    LEAST,
    MOST,
    cause_asked,
    column_words,
    frequency_asked,
    list_asked,
    ordinal_asked,
    superlative_terms,
)


def test_a_column_is_asked_by_its_names_words_folded() -> None:
    assert column_words("%MEM") == ["mem"]
    assert column_words("MEMORY(bytes)") == ["memory", "byt"]  # as "bytes" in any text
    assert column_words("RESTARTS") == ["restart"]
    assert column_words("ID") == []  # too short to be asked by a prefix


def test_a_joined_column_name_is_asked_by_its_last_word() -> None:
    # cProfile's `tottime` and `ncalls`: "the most time", "the most calls".
    tails = column_words("tottime", tails=True)
    assert tails[0] == column_words("tottime")[0]
    (time,) = column_words("time")
    (calls,) = column_words("calls")
    assert time in tails and calls in column_words("ncalls", tails=True)
    assert MOST + time in superlative_terms("which function takes the most time?")
    # Without `tails` (the words a query implies), a name stays whole.
    assert column_words("duration") == [column_words("duration", tails=True)[0]]


def test_a_query_without_a_superlative_asks_for_no_mark() -> None:
    assert superlative_terms("how much memory does the worker use?") == []
    assert superlative_terms("") == []
    # "most" of a word no column measures asks for no value: recency and frequency are not.
    assert superlative_terms("what is the most recent error?") == []
    assert superlative_terms("which warning is the most common?") == []
    assert superlative_terms("what most likely broke the build?") == []
    assert MOST in superlative_terms("the most recent pod with the most restarts")


def test_a_superlative_asks_for_each_words_prefixes_so_memory_finds_mem() -> None:
    terms = superlative_terms("which process uses the most memory?")
    assert MOST + "mem" in terms and MOST + "memory" in terms
    assert MOST + "process" in terms
    assert MOST + "me" not in terms  # prefixes of three letters or more
    assert not any(term.startswith(LEAST) for term in terms)
    # Stop words and the superlative itself ask for nothing.
    assert MOST + "whi" not in terms and MOST + "mos" not in terms


def test_words_are_folded_as_column_names_are() -> None:
    asked = superlative_terms("which pod restarted the most times?")
    assert MOST + column_words("RESTARTS")[0] in asked


def test_fewest_asks_for_the_smallest_and_an_adjective_names_its_quantity() -> None:
    assert LEAST + "unit" in superlative_terms("which store sold the fewest units?")
    # The quantity a word implies is asked for as its column's word is written: folded.
    (size,) = column_words("size")
    (duration,) = column_words("duration")
    assert MOST + size in superlative_terms("what is the largest file?")
    assert LEAST + duration in superlative_terms("which test was fastest?")
    # Also a word that is no superlative itself, in a superlative question.
    (price,) = column_words("price")
    assert MOST + price in superlative_terms("which is the most expensive product?")
    assert LEAST + price in superlative_terms("what is the cheapest plan?")
    assert superlative_terms("is the plan expensive?") == []
    (age,) = column_words("age")
    assert MOST + age in superlative_terms("which pod is the oldest?")
    assert LEAST + age in superlative_terms("which pod is the newest?")
    # "By itself" asks for a `self` column (python -X importtime, perf).
    (own,) = column_words("self")
    assert MOST + own in superlative_terms("which module took the most time by itself?")


def test_query_terms_are_the_lexical_terms_then_the_marks() -> None:
    query = "which process uses the most memory?"
    asked = lexical_terms(query) + superlative_terms(query) + row_name_query_terms(query)
    assert query_terms(query) == asked
    # A mark is no word: no text's terms can hold one.
    assert not any(t.startswith((MOST, LEAST)) for t in lexical_terms(f"{MOST}mem {LEAST}cpu"))


def test_how_often_is_a_superlative_of_its_own() -> None:
    assert frequency_asked("what is the most common error in the api log?") == 1
    assert frequency_asked("which test fails most often?") == 1
    assert frequency_asked("the most frequently failing job") == 1
    assert frequency_asked("which warning is least common?") == -1
    assert frequency_asked("what is the rarest event?") == -1
    # Asked of a value, or of nothing: no frequency.
    assert frequency_asked("which process uses the most memory?") == 0
    assert frequency_asked("what is the most recent error?") == 0
    assert frequency_asked("how often does the job run?") == 0
    assert superlative_terms("what is the most common error?") == []  # and no marks


def test_the_most_frequent_strong_match_is_lifted_to_the_top() -> None:
    # Shapes 1 (two copies) and 2 (three) match strongly; 3 weakly (four copies); 0 no shape.
    rho = np.asarray([0.9, 0.8, 0.7, 0.75, 0.72, 0.2, 0.2, 0.2, 0.2, 0.6])
    shapes = np.asarray([1, 1, 2, 2, 2, 3, 3, 3, 3, 0])
    under = 0.9 * (1 - 1e-6)  # what was at the top: just under a lifted segment
    most = frequent_shape_first(rho, rho / 0.9, shapes, 1)
    assert most.tolist() == [under, 0.8, 0.9, 0.9, 0.9, 0.2, 0.2, 0.2, 0.2, 0.6]
    least = frequent_shape_first(rho, rho / 0.9, shapes, -1)
    assert least.tolist() == [0.9, 0.9, 0.7, 0.75, 0.72, 0.2, 0.2, 0.2, 0.2, 0.6]
    assert frequent_shape_first(rho, rho, shapes, 0) is rho
    zeros = np.zeros(3)
    assert frequent_shape_first(zeros, zeros, np.ones(3, dtype=np.int64), 1).tolist() == [0, 0, 0]


def test_last_and_first_ask_for_a_place_in_time_unless_they_measure_a_span() -> None:
    assert ordinal_asked("what was the last error in the api log?") == 1
    assert ordinal_asked("when did the latest deploy fail?") == 1
    assert ordinal_asked("what was the most recent warning?") == 1
    assert ordinal_asked("which test failed first?") == -1
    assert ordinal_asked("the earliest timeout") == -1
    assert ordinal_asked("errors in the last hour") == 0
    assert ordinal_asked("what failed in the last 5 minutes?") == 0
    assert ordinal_asked("which process uses the most memory?") == 0


def test_the_last_strong_match_of_the_newest_entry_is_lifted() -> None:
    rho = np.asarray([0.9, 0.6, 0.2, 0.7, 0.8, 0.3])
    times = np.asarray([2.0, 2.0, 2.0, 1.0, 1.0, 1.0])  # segments 0-2 of the newer entry
    under = 0.9 * (1 - 1e-6)  # the best before: just under the lifted one
    lexical = rho / 0.9
    assert ordinal_first(rho, lexical, times, 1).tolist() == [under, 0.9, 0.2, 0.7, 0.8, 0.3]
    assert ordinal_first(rho, lexical, times, -1).tolist() == [under, 0.6, 0.2, 0.9, 0.8, 0.3]
    assert ordinal_first(rho, lexical, times, 0) is rho
    # Strong by its words, not by its error evidence: a line that matches no word is none.
    assert ordinal_first(rho, np.zeros(6), times, 1) is rho


def test_a_lifted_segment_stays_first_and_equal_matches_stay_equal_whatever_the_weight() -> None:
    # Fill items are a segment's rho times its entry's weight, which moves with the entry's
    # recency from one Fit to the next: the order must not.
    rho = np.asarray([0.9, 0.6, 0.2, 0.9])
    lifted = ordinal_first(rho, rho / 0.9, np.ones(4), 1)  # the last of the best two
    for weight in np.linspace(0.5, 1.5, 2001):
        scaled = lifted * weight
        assert scaled[3] > scaled[0] > scaled[1]
    # BM25 sums a segment's terms in its own order: matches alike may differ in the last place.
    raw = np.asarray([3.7, np.nextafter(3.7, 0.0)])
    rho = segment_relevance(raw, np.zeros(2), 3.7)
    assert rho[0] == rho[1]


def test_a_question_of_cause_is_told_by_its_words() -> None:
    for query in (
        "why does the payments-api pod keep restarting?",
        "what caused the outage at 10:05?",
        "the reason the deploy failed",
        "how come the build is red?",
    ):
        assert cause_asked(query), query
    for query in ("which pods restarted?", "what is the memory limit?", "because of what"):
        assert not cause_asked(query), query


def test_a_question_for_a_list_is_told_by_a_plural_after_its_question_word() -> None:
    for query in (
        "which files were deleted?",
        "which new files are staged for commit?",
        "what errors did gcc report?",
        "list the failing tests",
    ):
        assert list_asked(query), query
    for query in (
        "which file has the eslint error?",
        "what does the server return for /reports/weekly.csv?",
        "which process uses the most memory?",
        "what is the status of the deploy?",
        "how many tests failed?",
        "what happens in copytree when the destination exists?",
        "what causes the restarts?",
    ):
        assert not list_asked(query), query
