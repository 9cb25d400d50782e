"""The lexical_relevance factor: BM25 of the query against entry texts (docs/fit.md).

`TermStats` keeps a namespace's term statistics incrementally (an entry put, overwritten or
deleted updates document frequencies and lengths) as an inverted index, so scoring a query
touches only the postings of the query's terms, never every entry. The terms come from
fit.lexical.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = ["BM25_B", "BM25_K1", "MARK_CHARS", "TermStats", "is_mark"]

BM25_K1 = 1.2
BM25_B = 0.75

# What mark terms start with (fit.superlatives, fit.clock, fit.definitions, fit.row_names): no
# term of any text starts with one. A mark says what a line is (the largest row, the minute it
# was written, the definition of a name, the row a table names), not how much of it is about
# the query: BM25 counts it as in a text of average length, so that a long record, a
# traceback or a function's whole hunk, weighs its mark as much as a short line does, and it
# adds nothing to its text's length (a marked line matches a query's words as its twins do).
MARK_CHARS = frozenset("↑↓@§¶")


def is_mark(term: str) -> bool:
    """Whether `term` is a mark term (MARK_CHARS)."""
    return term[:1] in MARK_CHARS


class TermStats:
    """Per-namespace BM25 statistics over documents identified by integer slots.

    A slot is the row the document occupies in the namespace's candidate arrays, so scores
    come back aligned with those arrays. Not thread-safe: the owner serialises updates.
    """

    def __init__(self) -> None:
        self._postings: dict[str, dict[int, int]] = {}
        self._doc_terms: dict[int, Counter[str]] = {}
        self._doc_len = np.zeros(0, dtype=np.float64)
        self._total_len = 0
        self._extent = 0  # one past the highest slot ever used
        # Postings as arrays, built on first use and dropped when the term's postings change.
        self._arrays: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}

    @property
    def documents(self) -> int:
        """How many documents are indexed."""
        return len(self._doc_terms)

    @property
    def average_length(self) -> float:
        """Mean document length in terms (0 when empty)."""
        return self._total_len / len(self._doc_terms) if self._doc_terms else 0.0

    def document_frequency(self, term: str) -> int:
        """How many documents contain `term`."""
        return len(self._postings.get(term, ()))

    def add(self, slot: int, terms: Iterable[str]) -> None:
        """Index the document in `slot` (replacing whatever the slot held)."""
        if slot < 0:
            raise ValueError(f"slot must be >= 0, got {slot}")
        self.remove(slot)
        counts = Counter(terms)
        self._doc_terms[slot] = counts
        # Its words, not its marks (as SegmentIndex counts a segment's length).
        length = sum(n for term, n in counts.items() if not is_mark(term))
        if slot >= self._doc_len.size:
            grown = np.zeros(max(slot + 1, 2 * self._doc_len.size, 64), dtype=np.float64)
            grown[: self._doc_len.size] = self._doc_len
            self._doc_len = grown
        self._doc_len[slot] = length
        self._total_len += length
        self._extent = max(self._extent, slot + 1)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[slot] = tf
            self._arrays.pop(term, None)

    def remove(self, slot: int) -> None:
        """Forget the document in `slot` (no-op when the slot is empty)."""
        counts = self._doc_terms.pop(slot, None)
        if counts is None:
            return
        self._total_len -= int(self._doc_len[slot])
        self._doc_len[slot] = 0
        for term in counts:
            postings = self._postings[term]
            del postings[slot]
            if not postings:
                del self._postings[term]
            self._arrays.pop(term, None)

    def _posting_arrays(
        self, term: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        cached = self._arrays.get(term)
        if cached is not None:
            return cached
        postings = self._postings.get(term)
        if not postings:
            return None
        slots = np.fromiter(postings.keys(), dtype=np.int64, count=len(postings))
        tfs = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
        self._arrays[term] = (slots, tfs)
        return slots, tfs

    def bm25_scores(
        self,
        query_terms: Iterable[str],
        size: int | None = None,
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
    ) -> npt.NDArray[np.float64]:
        """BM25 of the query against every slot, as an array of `size` (default: one past the
        highest slot ever used).

        Each distinct query term counts once; idf is the non-negative ln(1 + (N - df + .5) /
        (df + .5)); slots without a document score 0.
        """
        n_slots = self._extent if size is None else size
        scores = np.zeros(n_slots, dtype=np.float64)
        n_docs = len(self._doc_terms)
        if n_docs == 0:
            return scores
        avg_len = self._total_len / n_docs or 1.0
        for term in dict.fromkeys(query_terms):
            arrays = self._posting_arrays(term)
            if arrays is None:
                continue
            slots, tfs = arrays
            if size is not None and slots.size and int(slots.max()) >= size:
                keep = slots < size
                slots, tfs = slots[keep], tfs[keep]
            df = len(self._postings[term])
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            norm = k1 if is_mark(term) else k1 * (1.0 - b + b * self._doc_len[slots] / avg_len)
            scores[slots] += idf * tfs * (k1 + 1.0) / (tfs + norm)
        return scores
