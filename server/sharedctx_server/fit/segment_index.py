"""BM25 over the segments of a namespace's cut entries (docs/excerpts.md).

The namespace's segments are the documents: document frequencies count segments, lengths are
segment lengths in terms, so a rare log line stands out however long its entry is. Each cut
entry keeps its postings as compact arrays (term id -> its segments and term counts, sorted by
term id); scoring a query is one `searchsorted` per entry for all query terms at once, plus the
gathers of the hits. A namespace of 2,000-line logs keeps a few dozen bytes per line, not a
Python object per posting.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.lexical import BM25_B, BM25_K1

__all__ = ["SegmentIndex"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class _Postings:
    """One entry's segments as a term-sorted index."""

    term_ids: IntArray  # distinct term ids, ascending
    offsets: IntArray  # postings of term_ids[k] are [offsets[k], offsets[k+1])
    segments: IntArray  # the segment of each posting
    counts: FloatArray  # the term's count in that segment
    lengths: FloatArray  # terms per segment


class SegmentIndex:
    """Per-namespace BM25 statistics over the segments of cut entries, by entry slot.

    Not thread-safe: the owner serialises updates (like TermStats).
    """

    def __init__(self) -> None:
        self._vocabulary: dict[str, int] = {}
        self._df = np.zeros(1024, dtype=np.int64)  # segments holding each term id
        self._entries: dict[int, _Postings] = {}
        self._segments = 0
        self._total_length = 0.0

    @property
    def entries(self) -> int:
        """How many cut entries are indexed."""
        return len(self._entries)

    @property
    def segments(self) -> int:
        """How many segments are indexed."""
        return self._segments

    def __contains__(self, slot: int) -> bool:
        return slot in self._entries

    def add(self, slot: int, segment_terms: Sequence[Sequence[str]]) -> None:
        """Index the cut entry in `slot`, one term list per segment (replacing what it held)."""
        self.remove(slot)
        pairs: list[int] = []  # term id, segment, count, flattened
        lengths = np.zeros(len(segment_terms), dtype=np.float64)
        for segment, terms in enumerate(segment_terms):
            lengths[segment] = len(terms)
            for term, count in Counter(terms).items():
                pairs += (self._id(term), segment, count)
        table = np.asarray(pairs, dtype=np.int64).reshape(-1, 3)
        table = table[np.lexsort((table[:, 1], table[:, 0]))]
        term_ids, first = np.unique(table[:, 0], return_index=True)
        postings = _Postings(
            term_ids=term_ids,
            offsets=np.append(first, table.shape[0]).astype(np.int64),
            segments=table[:, 1].copy(),
            counts=table[:, 2].astype(np.float64),
            lengths=lengths,
        )
        np.add.at(self._df, table[:, 0], 1)
        self._entries[slot] = postings
        self._segments += lengths.size
        self._total_length += float(lengths.sum())

    def remove(self, slot: int) -> None:
        """Forget the entry in `slot` (no-op when it is not indexed)."""
        postings = self._entries.pop(slot, None)
        if postings is None:
            return
        spans = np.diff(postings.offsets)
        np.subtract.at(self._df, postings.term_ids, spans)
        self._segments -= postings.lengths.size
        self._total_length -= float(postings.lengths.sum())

    def _id(self, term: str) -> int:
        found = self._vocabulary.get(term)
        if found is not None:
            return found
        new = self._vocabulary[term] = len(self._vocabulary)
        if new >= self._df.size:
            self._df = np.concatenate([self._df, np.zeros(self._df.size, dtype=np.int64)])
        return new

    def scores(
        self,
        query_terms: Iterable[str],
        slots: Iterable[int],
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
    ) -> dict[int, FloatArray]:
        """BM25 of the query against every segment of each indexed slot in `slots` that holds
        a query term (one array per slot, in segment order).

        Each distinct query term counts once; idf is ln(1 + (N - df + .5) / (df + .5)) with
        N the namespace's segments, as TermStats does for entries.
        """
        ids, idfs = [], []
        for term in dict.fromkeys(query_terms):
            term_id = self._vocabulary.get(term)
            df = int(self._df[term_id]) if term_id is not None else 0
            if df > 0:
                ids.append(term_id)
                idfs.append(math.log(1.0 + (self._segments - df + 0.5) / (df + 0.5)))
        out: dict[int, FloatArray] = {}
        if not ids:
            return out
        query = np.asarray(ids, dtype=np.int64)
        order = np.argsort(query)
        query, idf = query[order], np.asarray(idfs)[order]
        average = self._total_length / self._segments if self._segments else 1.0
        for slot in slots:
            postings = self._entries.get(slot)
            if postings is None or postings.term_ids.size == 0:
                continue
            at = np.searchsorted(postings.term_ids, query)
            at = np.minimum(at, postings.term_ids.size - 1)
            held = postings.term_ids[at] == query
            if not held.any():
                continue
            scores = np.zeros(postings.lengths.size, dtype=np.float64)
            norm = k1 * (1.0 - b + b * postings.lengths / (average or 1.0))
            for k, weight in zip(at[held].tolist(), idf[held].tolist(), strict=True):
                lo, hi = postings.offsets[k], postings.offsets[k + 1]
                segments, tf = postings.segments[lo:hi], postings.counts[lo:hi]
                scores[segments] += weight * tf * (k1 + 1.0) / (tf + norm[segments])
            out[slot] = scores
        return out
