"""How often an excerpt's matches repeat in their entry (docs/excerpts.md).

Repeats give way in a fill (fit.excerpt_items): past the first few copies of a line shape,
each further one counts less, so an excerpt shows a few examples of a repeated line and
spends the rest of the budget on lines that say something else. The agent that asked "how
many times did the payments call time out?" then sees three timeouts of 54. This module
says how many there are: for each shape among the excerpt's matches that has more copies in
the entry than the excerpt shows, the first shown record of it and the entry's count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.segments import Segments

__all__ = ["MAX_REPEATS", "STRONG_SHARE", "repeated_records"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Repeats reported per excerpt, best match first: a question is about one or two lines.
MAX_REPEATS = 3
# A match counts when it scores at least this share of the excerpt's best: a line that shares
# only a common word of the query ("payments" in "how many times did payments time out?") is
# context, and its count (284 `payments handled GET` lines) no answer.
STRONG_SHARE = 0.5


def repeated_records(
    segments: Segments,
    shapes: IntArray,
    relevance: FloatArray,
    covered: Sequence[int],
) -> list[tuple[int, int]]:
    """(first line, 1-based, of a shown match; records of the entry of its shape) for each
    shape among the shown segments that match the query (`relevance` > 0, at least
    STRONG_SHARE of the best shown) with more copies in the entry than shown, the best
    match's shape first, at most MAX_REPEATS. `shapes` and `relevance` are aligned with
    `segments`; shape 0 is no shape (fit.segment_index)."""
    shown = sorted(set(covered))
    if not shown or not shapes.size:
        return []
    # A Fit asks this of every excerpt it returns, whose shown segments are a few dozen at
    # most: they are read as lists, and only their matches' shapes counted in the entry.
    shown_shapes = shapes[shown].tolist()
    matches = [
        (r, shape, segment)
        for r, shape, segment in zip(relevance[shown].tolist(), shown_shapes, shown, strict=True)
        if r > 0 and shape != 0
    ]
    if not matches:
        return []
    floor = STRONG_SHARE * max(r for r, _, _ in matches)
    # Best match first; ties in text order.
    matches = sorted((m for m in matches if m[0] >= floor), key=lambda m: (-m[0], m[2]))
    copies_shown = Counter(shown_shapes)
    first_shown: dict[int, int] = {}
    for shape, segment in zip(shown_shapes, shown, strict=True):
        first_shown.setdefault(shape, segment)
    out: list[tuple[int, int]] = []
    seen: set[int] = set()
    for _, shape, _ in matches:
        if shape in seen:
            continue
        seen.add(shape)
        in_entry = int(np.count_nonzero(shapes == shape))
        if in_entry > copies_shown[shape]:
            out.append((int(segments.starts[first_shown[shape]]) + 1, in_entry))
            if len(out) == MAX_REPEATS:
                break
    return out
