"""A term's postings over a namespace's flat segment table, and each cut entry's own
postings as compact arrays (segment_index.py keeps them up to date as entries change).

Pure array code: an entry's postings are sorted by term id, so a term's are one slice of
them, and a change to the table moves every later position by the rows it gained.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.segments import Segments

__all__ = ["NO_ENTRY", "NO_POSTINGS", "EntryPostings", "Postings", "joined", "moved", "spliced"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class Postings(NamedTuple):
    """One term's postings over the flat table."""

    positions: IntArray
    counts: FloatArray
    in_text: BoolArray  # the segment's own text holds the term (not only the entry's name)


@dataclass(frozen=True, eq=False)
class EntryPostings:
    """One cut entry: its segments and their term-sorted postings."""

    segments: Segments
    term_ids: IntArray  # distinct term ids, ascending
    offsets: IntArray  # postings of term_ids[k] are [offsets[k], offsets[k+1])
    positions: IntArray  # the segment of each posting
    counts: FloatArray  # the term's count in that segment
    lengths: FloatArray  # terms per segment
    names: frozenset[int]  # ids of the terms that name the entry (in every segment once)
    shapes: IntArray  # each segment's shape (line_shape)

    def postings(self, at: int, base: int) -> Postings:
        """The postings of the entry's `at`-th term, its segments at flat positions from
        `base` on."""
        lo, hi = self.offsets[at], self.offsets[at + 1]
        counts = self.counts[lo:hi]
        # A name is in every segment once: the text holds the term beyond that.
        named = int(self.term_ids[at]) in self.names
        return Postings(
            self.positions[lo:hi] + base,
            counts,
            counts > 1 if named else np.ones(hi - lo, dtype=np.bool_),
        )


_NONE = np.zeros(0, dtype=np.int64)
NO_POSTINGS = Postings(_NONE, np.zeros(0), np.zeros(0, dtype=np.bool_))
# What a removed entry's rows are replaced with.
NO_ENTRY = EntryPostings(
    segments=Segments(_NONE, _NONE, np.zeros(0)),
    term_ids=_NONE,
    offsets=np.zeros(1, dtype=np.int64),
    positions=_NONE,
    counts=np.zeros(0),
    lengths=np.zeros(0),
    names=frozenset(),
    shapes=_NONE,
)


def spliced(bounds: IntArray, k: int, held: bool, inserted: bool, shift: int) -> IntArray:
    """Run bounds (run i is `bounds[i]` to `bounds[i + 1]`) with run k dropped if it was
    `held`, and a run put in its place if `inserted`, `shift` elements longer than the one
    dropped (or than none)."""
    return np.concatenate([bounds[: k + inserted], bounds[k + held :] + shift])


def moved(postings: Postings, a: int, b: int, shift: int, added: Postings) -> Postings:
    """Postings (ascending positions) after the table's rows [a, b) were replaced by rows
    holding `added`: those in [a, b) gone, `added` in their place, those after moved by
    `shift` (the rows gained)."""
    positions = postings.positions
    i, j = np.searchsorted(positions, (a, b)).tolist()
    if i == positions.size and not added.positions.size:
        return postings
    return joined((_part(postings, 0, i), added, _part(postings, j, None, shift)))


def _part(postings: Postings, start: int, stop: int | None, shift: int = 0) -> Postings:
    positions = postings.positions[start:stop]
    return Postings(
        positions + shift if shift else positions,
        postings.counts[start:stop],
        postings.in_text[start:stop],
    )


def joined(parts: Iterable[Postings]) -> Postings:
    """Postings one after another, as one."""
    listed = list(parts)
    if not listed:
        return NO_POSTINGS
    return Postings(*(np.concatenate(column) for column in zip(*listed, strict=True)))
