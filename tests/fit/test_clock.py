"""Times of day as minute marks (fit.clock, segment.clock_marks)."""

from __future__ import annotations

import numpy as np
import pytest
from sharedctx_server.fit import SegmentIndex, Segments, query_terms
from sharedctx_server.fit.clock import (
    MAX_RANGE_MINUTES,
    clock_query_terms,
    line_clock,
    recent_minutes,
    window_marks,
)
from sharedctx_server.fit.segment_relevance import (
    OUTSIDE_WINDOW,
    Relevance,
    notable_in_window_first,
    outside_window,
)
from sharedctx_server.segment.clock_marks import MIN_STAMPED, clock_terms


def test_a_question_asks_for_the_minute_of_each_time_it_names() -> None:
    assert clock_query_terms("what happened at 10:05?") == ["@10:05"]
    assert clock_query_terms("the error at 10:05:31.250") == ["@10:05"]
    assert clock_query_terms("at 3:05 pm, and at 12:30 am") == ["@15:05", "@00:30"]
    assert "@10:05" in query_terms("what happened at 10:05?")


def test_a_range_asks_for_every_minute_in_it() -> None:
    assert clock_query_terms("between 14:00 and 14:03") == ["@14:00", "@14:01", "@14:02", "@14:03"]
    assert clock_query_terms("from 23:58-00:01") == ["@23:58", "@00:01"]  # no range backwards
    # Too long a range asks for its ends only.
    assert clock_query_terms("from 08:00 to 12:00") == ["@08:00", "@12:00"]
    assert len(clock_query_terms("from 10:00 to 12:00")) == MAX_RANGE_MINUTES + 1


def test_dates_versions_and_ratios_are_no_times() -> None:
    for text in ("released 2026-12-06", "version 3.10.4", "ratio 3:2", "::1", "port 8080:80"):
        assert clock_query_terms(text) == [], text


def test_a_line_is_marked_by_the_time_its_stamp_opens_with() -> None:
    assert line_clock("2026-12-06 10:05:01,395 WARN timed out") == "@10:05"
    assert line_clock("2026-12-06T10:05:01Z ERROR x") == "@10:05"
    assert line_clock("Jun 14 15:16:01 combo sshd(pam_unix)[19939]: check pass") == "@15:16"
    assert line_clock("081109 203615 148 INFO dfs.DataNode") is None  # no colon, no time
    # A time far into the line is something it says, not when it was written.
    assert line_clock("x" * 80 + " retry at 10:05") is None


def test_only_a_timestamped_text_gets_marks() -> None:
    lines = [f"10:0{i}:00 step {i}" for i in range(MIN_STAMPED)] + ["plain"]
    assert clock_terms(lines, [0, 1, 2, 3, 4]) == {k: [f"@10:0{k}"] for k in range(MIN_STAMPED)}
    assert clock_terms(lines[1:], [0, 1, 2, 3]) == {}  # fewer than MIN_STAMPED


def test_in_the_asked_window_error_lines_come_first() -> None:
    rho = np.asarray([0.9, 0.6, 0.5, 0.4])
    window = np.asarray([False, True, True, True])
    errors = np.asarray([1.0, 0.0, 0.9, 0.3])
    under = 0.9 * (1 - 1e-6)
    lifted = notable_in_window_first(rho, window, errors)
    assert lifted.tolist() == [under, 0.6, 0.9, 0.4]  # the error in the window, not before it
    assert notable_in_window_first(rho, window, np.zeros(4)) is rho


def test_the_last_minutes_a_question_names_are_counted_back_from_the_newest_time() -> None:
    assert recent_minutes("which errors came in the last 10 minutes?") == 10
    assert recent_minutes("anything odd over the past hour") == 60
    assert recent_minutes("the previous 2 hrs") == 120
    assert recent_minutes("in the last half an hour") == 30
    assert recent_minutes("what happened in the last minute?") == 1
    for question in ("what was the last error?", "the last 3 retries", "why did it fail?"):
        assert recent_minutes(question) is None, question
    assert window_marks("@10:05", 3) == ["@10:02", "@10:03", "@10:04", "@10:05"]
    assert window_marks("@00:01", 2) == ["@23:59", "@00:00", "@00:01"]  # over midnight
    assert len(window_marks("@12:00", 600)) == MAX_RANGE_MINUTES + 1


def test_lines_stamped_outside_the_asked_window_count_a_share() -> None:
    index = SegmentIndex()
    segments = Segments(np.ones(4, dtype=np.int64), np.ones(4, dtype=np.int64), np.zeros(4))
    index.add(0, segments, [["error"], ["error"], ["error"], ["note"]])
    table = index.table()
    raw = np.asarray([4.0, 4.0, 2.0, 0.0])
    window = np.asarray([False, False, True, False])
    outside = np.asarray([True, False, False, False])
    candidates = np.ones(1, dtype=np.bool_)
    args = (table, raw, candidates, index.segments_of, 0.0, 0, 0, None, window)
    plain, narrowed = Relevance.of(*args), Relevance.of(*args, outside)
    assert narrowed.rho[0] == pytest.approx(OUTSIDE_WINDOW * plain.rho[0])
    assert narrowed.rho[1:].tolist() == plain.rho[1:].tolist()


def test_a_time_no_line_of_an_entry_was_written_at_leaves_its_lines_be() -> None:
    # Two entries of three segments; only the first has a line stamped in the window.
    bounds = np.asarray([0, 3, 6])
    window = np.asarray([False, True, False, False, False, False])
    stamped = np.asarray([True, True, True, True, False, True])
    asked = outside_window(window, stamped, bounds, every_entry=False)
    assert asked.tolist() == [True, False, True, False, False, False]
    # Counted back from the newest log time, the window is before no entry.
    counted_back = outside_window(window, stamped, bounds, every_entry=True)
    assert counted_back.tolist() == [True, False, True, True, False, True]
