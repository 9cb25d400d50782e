"""Which segments open with a time of day, as minute marks for BM25 (fit.clock says why;
docs/excerpts.md, "Times of day")."""

from __future__ import annotations

from collections.abc import Sequence

from ..fit.clock import line_clock

__all__ = ["MIN_STAMPED", "clock_terms"]

# Segments that must open with a time before any is marked: a timestamped log's, not a time
# a paragraph of prose happens to open with.
MIN_STAMPED = 4


def clock_terms(lines: Sequence[str], starts: Sequence[int]) -> dict[int, list[str]]:
    """Per segment (first lines `starts`) whose first line opens with a time of day, the mark
    of its minute; none when fewer than MIN_STAMPED segments do."""
    marks = {}
    for k, start in enumerate(starts):
        mark = line_clock(lines[start]) if start < len(lines) else None
        if mark is not None:
            marks[k] = [mark]
    return marks if len(marks) >= MIN_STAMPED else {}
