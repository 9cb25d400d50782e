"""How often an excerpt's matches repeat in their entry (fit.repeats)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from sharedctx_server.fit.repeats import MAX_REPEATS, repeated_records
from sharedctx_server.fit.segments import Segments


def _segments(lines: list[int]) -> Segments:
    n = len(lines)
    return Segments(np.asarray(lines, dtype=np.int64), np.ones(n, dtype=np.int64), np.zeros(n))


def _case(
    shapes: list[int], relevance: list[float], lines: list[int] | None = None
) -> tuple[Segments, npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    segments = _segments(lines or [1] * len(shapes))
    return segments, np.asarray(shapes, dtype=np.int64), np.asarray(relevance)


def test_a_shown_match_counts_every_record_of_its_shape() -> None:
    # Segments 1, 4 and 6 say the same (shape 7); the excerpt shows 1 and 4.
    segments, shapes, relevance = _case([3, 7, 3, 5, 7, 3, 7], [0, 0.9, 0, 0, 0.8, 0, 0.9])
    assert repeated_records(segments, shapes, relevance, [1, 2, 4]) == [(2, 3)]


def test_lines_are_the_first_line_of_the_shown_record() -> None:
    segments, shapes, relevance = _case([3, 7, 7], [0, 1.0, 1.0], lines=[4, 2, 1])
    assert repeated_records(segments, shapes, relevance, [1]) == [(5, 2)]


def test_nothing_is_said_of_context_shapes_without_copies_or_no_shape() -> None:
    # Context (relevance 0), a match shown in all its copies, a match with no shape (0).
    segments, shapes, relevance = _case([3, 7, 7, 0, 0, 3], [0, 1, 1, 1, 1, 0])
    assert repeated_records(segments, shapes, relevance, [0, 1, 2, 3]) == []
    assert repeated_records(segments, shapes, relevance, []) == []


def test_the_best_match_comes_first_and_weak_ones_not_at_all() -> None:
    shapes = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    relevance = [0.6, 0, 1.0, 0, 0.7, 0, 0.8, 0, 0.2, 0]
    segments, s, r = _case(shapes, relevance)
    found = repeated_records(segments, s, r, [0, 2, 4, 6, 8])
    # Shape 5 scores under half of the best: a line sharing a common word, not the answer.
    assert found == [(3, 2), (7, 2), (5, 2)][:MAX_REPEATS]
