"""How each segment of the namespace's cut entries relates to one query (docs/excerpts.md).

    rho = (lexical + ERROR_SHARE * error) / (1 + ERROR_SHARE)

`lexical` is the segment's BM25 over the namespace's segments divided by the best segment's,
`error` its error evidence: a failing line that matches the query beats an equally matching
quiet one, and an error line with no query word still counts a little. Segments with rho > 0
are hits.

Dividing by the best segment makes the best line a full match however little of the query it
holds. `quality` says how good that best is: its BM25 over FULL_SHARE of what a full match
would score (`full`, SegmentIndex.full_match: a segment holding every query term the
namespace holds), at most 1, and 1 when the namespace holds none of the query's terms. Hits
weigh it against whole entries (excerpt_items): lines that share one common word with the
question (`key` in `KeyError`, the `3` of "Figure 3"), or none and only report errors, no
longer outrank the short note that says all of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.segment_index import SegmentTable
from sharedctx_server.fit.segments import Segments

__all__ = [
    "ERROR_SHARE",
    "FULL_SHARE",
    "NOTABLE_ERROR",
    "OUTSIDE_WINDOW",
    "STRONG_MATCH",
    "MarkerTokens",
    "Relevance",
    "SegmentView",
    "frequent_shape_first",
    "notable_in_window_first",
    "ordinal_first",
    "outside_window",
    "segment_relevance",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# The token count of an omission marker line standing for that many lines (the caller's).
MarkerTokens = Callable[[int], int]

# Weight of a segment's error evidence beside its lexical match (rho above).
ERROR_SHARE = 0.3
# The share of a full match (every query term the namespace holds, once) the best segment
# must score for its hits to weigh fully against whole entries (quality above).
FULL_SHARE = 0.5


# A strong match scores at least this share of the best BM25 (its words, not its error
# evidence: "which job started last?" is about the `started` lines, not the traceback that
# matches "job" and is an error): "the most common error" is the shape with the most copies
# among them (frequent_shape_first), "the last error" the last of them (ordinal_first); a
# line that shares a lesser word of the question is not a candidate.
STRONG_MATCH = 0.5


def frequent_shape_first(
    rho: FloatArray, lexical: FloatArray, shapes: IntArray, direction: int
) -> FloatArray:
    """`rho` with the segments of the shape that occurs most (`direction` 1) or least (-1)
    often among the strong matches (`lexical`, BM25 over the best's, at least STRONG_MATCH,
    with a shape) lifted to the best's relevance. "The most common error" is the error line
    with the most copies, and no word of the question tells it from the other error lines;
    lifted, it comes first, and its excerpt says how many copies there are (fit.repeats)."""
    if not direction:
        return rho
    strong = (lexical >= STRONG_MATCH) & (shapes != 0)
    if not strong.any():
        return rho
    kinds, counts = np.unique(shapes[strong], return_counts=True)
    pick = counts.max() if direction > 0 else counts.min()
    return _lifted(rho, strong & np.isin(shapes, kinds[counts == pick]))


def ordinal_first(
    rho: FloatArray,
    lexical: FloatArray,
    times: FloatArray,
    direction: int,
    places: IntArray | None = None,
) -> FloatArray:
    """`rho` with the last (`direction` 1) or first (-1) of the strong matches (`lexical`,
    BM25 over the best's, at least STRONG_MATCH) lifted to the best's relevance: in the
    newest (oldest) entry by `times` (each segment's entry's), its last (first) such
    segment in time (`places`: each segment's place in its entry's time; default, text
    order). "The last error" is the error line written last, and every error line matches
    the question alike."""
    strong = np.flatnonzero(lexical >= STRONG_MATCH)
    if not direction or not strong.size:
        return rho
    # By entry time, then by place in time within the entry (`places`: default, text order).
    order = np.lexsort((strong if places is None else places[strong], times[strong]))
    pick = np.zeros(rho.shape, dtype=np.bool_)
    pick[strong[order[-1] if direction > 0 else order[0]]] = True
    return _lifted(rho, pick)


# A segment whose error evidence reaches this is an error (or warning) line for
# notable_in_window_first.
NOTABLE_ERROR = 0.5


# A question that names a time window ("at 10:05", "in the last 10 minutes") is not about the
# lines written at other times: a line stamped outside it counts this share of its relevance.
# "Which errors came in the last 10 minutes?" matched every error line by its words, and
# showed an error of an hour before beside the one in the window.
OUTSIDE_WINDOW = 0.2


def outside_window(
    window: BoolArray, stamped: BoolArray, bounds: IntArray, every_entry: bool
) -> BoolArray:
    """The segments (of entries laid end to end, entry k at `bounds[k]` to `bounds[k + 1]`)
    that open with a time outside the asked `window`: in every entry, for a window counted
    back from the newest log time (an entry written before it is outside it), else only in
    the entries with a line stamped in it: a time no line of an entry was written at may be
    one its lines say (a boot line's `#1 Tue May 12 12:55:24 2004`)."""
    outside = stamped & ~window
    if every_entry or not outside.any():
        return outside
    holds = np.logical_or.reduceat(stamped & window, bounds[:-1])
    return np.asarray(outside & np.repeat(holds, np.diff(bounds)), dtype=np.bool_)


def notable_in_window_first(rho: FloatArray, window: BoolArray, errors: FloatArray) -> FloatArray:
    """`rho` with the error lines among the segments of the asked time window (`window`: they
    carry the mark of a minute the query names, fit.clock) lifted to the best's relevance.
    "What happened at 10:10?" is first of all what went wrong then: a traceback of five lines
    had matched the minute's mark less than each short line of that minute (before marks
    counted as in a text of average length), and its minute held 160 lines of two dozen
    kinds, any of which may be the best hit of the namespace."""
    return _lifted(rho, window & (errors >= NOTABLE_ERROR))


# How far under the best a segment that was not lifted stays (_lifted). One unit in the last
# place was too little: scaled by an entry's weight, which moves with its recency, the two
# rounded alike in some Fits and not in others, and the lifted segment came first in some.
_JUST_UNDER = 1e-6


def _lifted(rho: FloatArray, lift: BoolArray) -> FloatArray:
    """`rho` with the segments of `lift` at the best's relevance and every other just under
    it (a lifted segment must come first, and lines alike all score the best: every `ERROR
    payment ... declined` line of a log); `rho` itself when nothing is lifted or nothing
    matched."""
    top = float(rho.max()) if rho.size else 0.0
    if top <= 0 or not lift.any():
        return rho
    return np.where(lift, top, np.minimum(rho, top * (1.0 - _JUST_UNDER)))


# Relevances closer than this are one: segments that match alike (a file's diff header in
# each commit that changed it) differ in BM25 by a unit in the last place, summed in another
# order, and multiplied by an entry's weight, which moves with its recency, such a pair
# swapped from one Fit to the next. Equal, they keep their order (segment order breaks ties).
_RELEVANCE_DECIMALS = 9


def segment_relevance(raw: FloatArray, errors: FloatArray, top: float) -> FloatArray:
    """rho of each segment: its BM25 `raw` over the namespace's best `top`, blended with its
    error evidence (to _RELEVANCE_DECIMALS)."""
    rho = ERROR_SHARE * errors
    if top > 0:
        rho = rho + raw / top
    rho = np.round(rho / (1.0 + ERROR_SHARE), _RELEVANCE_DECIMALS)
    return np.asarray(rho, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class SegmentView:
    """One cut candidate as a Fit sees it: its segments and their relevance to the query."""

    row: int
    segments: Segments
    relevance: FloatArray


@dataclass(frozen=True, eq=False)
class Relevance:
    """One query's relevance of every segment of the namespace's cut entries: `rho` is
    aligned with `table` and 0 for entries that are not `candidates` (a mask over entry
    rows); `lexical` is each segment's BM25 over the best candidate segment's; `asks_cause`:
    the query asks why (fit.superlatives.cause_asked), so a hit's block's errors weigh more;
    `asks_list`: it asks for a list (list_asked), so more hits of one entry come first
    (fit.excerpt_items)."""

    table: SegmentTable
    rho: FloatArray
    lexical: FloatArray
    candidates: BoolArray
    segments_of: Callable[[int], Segments]
    quality: float = 1.0
    asks_cause: bool = False
    asks_list: bool = False

    @classmethod
    def of(
        cls,
        table: SegmentTable,
        raw: FloatArray,
        candidates: BoolArray,
        segments_of: Callable[[int], Segments],
        full: float = 0.0,
        frequency: int = 0,
        ordinal: int = 0,
        times: FloatArray | None = None,
        window: BoolArray | None = None,
        outside: BoolArray | None = None,
        places: IntArray | None = None,
        asks_cause: bool = False,
        asks_list: bool = False,
    ) -> Relevance:
        """From the segments' BM25 `raw` and `candidates`, a mask over entry rows, what a
        full match would score (`full`; 0: unknown, quality 1), whether the query asks for
        what occurs most (1) or least (-1) often (frequent_shape_first), and whether it asks
        for the last (1) or first (-1) of its matches (`ordinal`, ordinal_first, by each
        segment's entry's time: `times`, needed then, and its place in time within the entry:
        `places`, text order without), and which segments are in the time
        window it names (`window`, notable_in_window_first) and which are stamped outside it
        (`outside`, outside_window: they count OUTSIDE_WINDOW of their relevance), and
        whether it asks for a cause (`asks_cause`) or for a list (`asks_list`)."""
        eligible = candidates[table.slot_of] if len(table) else np.zeros(0, dtype=np.bool_)
        raw = np.where(eligible, raw, 0.0)
        top = float(raw.max()) if raw.size else 0.0
        # Only segments that match or carry an error have a relevance: computed for those
        # alone (most of a namespace's segments are neither, and this runs on every Fit).
        live = np.flatnonzero(eligible & ((raw > 0) | (table.errors > 0)))
        rho = np.zeros(raw.shape, dtype=np.float64)
        rho[live] = segment_relevance(raw[live], table.errors[live], top)
        lexical = raw / top if top > 0 else raw
        rho = frequent_shape_first(rho, lexical, table.shapes, frequency)
        if ordinal:
            if times is None:
                raise ValueError("ordinal needs the segments' entry times")
            rho = ordinal_first(rho, lexical, times, ordinal, places)
        if window is not None:
            if outside is not None:
                rho = np.where(outside, OUTSIDE_WINDOW * rho, rho)
            rho = notable_in_window_first(rho, window & eligible, table.errors)
        quality = min(1.0, top / (FULL_SHARE * full)) if full > 0 else 1.0
        return cls(table, rho, lexical, candidates, segments_of, quality, asks_cause, asks_list)

    @cached_property
    def hits(self) -> tuple[IntArray, IntArray]:
        """The segments with rho > 0 (flat positions) and the table index of each one's
        entry: per-entry sums and maxima of what only hits hold read these, not the table
        (a namespace's logs hold tens of thousands of segments, a query's hits hundreds)."""
        positions = np.flatnonzero(self.rho > 0)
        return positions, self.table.entries_of(positions)

    def per_entry_max(self, values: FloatArray) -> FloatArray:
        """The largest of `values` (aligned with the table) in each cut entry, table order."""
        starts = self.table.bounds[:-1]
        return np.maximum.reduceat(values, starts) if starts.size else np.zeros(0)

    def view(self, row: int) -> SegmentView:
        """The cut entry in `row` with its segments' relevance."""
        return SegmentView(row, self.segments_of(row), self.rho[self.table.span(row)])
