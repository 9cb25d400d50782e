"""Which segments define a name, as definition marks for BM25 (fit.definitions says why;
docs/excerpts.md, "Definitions")."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import accumulate

from ..fit.definitions import defined_names, definition_marks

__all__ = ["definition_terms"]


def definition_terms(lines: Sequence[str], starts: Sequence[int]) -> dict[int, list[str]]:
    """Per segment (first lines `starts`) holding a line that defines a name, the marks of
    the names it defines."""
    text = "\n".join(lines)
    found = defined_names(text)
    if not found:
        return {}
    # Where each line starts in `text`, to tell the line, and so the segment, of each find.
    offsets = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    marks: dict[int, list[str]] = {}
    for offset, name in found:
        line = bisect.bisect_right(offsets, offset) - 1
        segment = bisect.bisect_right(starts, line) - 1
        if segment >= 0:
            held = marks.setdefault(segment, [])
            held.extend(mark for mark in definition_marks(name) if mark not in held)
    return marks
