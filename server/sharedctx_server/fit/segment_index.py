"""A namespace's cut entries: their segments, laid end to end, and BM25 over them
(docs/excerpts.md).

The namespace's segments are the documents: document frequencies count segments, lengths are
segment lengths in terms, so a rare log line stands out however long its entry is. Each cut
entry keeps its postings as compact arrays (term id -> its segments and term counts, sorted by
term id), a few dozen bytes per line rather than a Python object per posting.

A Fit reads the segments as one flat table (every cut entry's segments end to end, entries by
slot) and gets BM25 as one array aligned with it; the table and each query term's postings in
it are built once after a change and reused by every Fit until the next, so scoring is a few
array operations per query term whatever the number of cut entries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.bm25 import BM25_B, BM25_K1, is_mark
from sharedctx_server.fit.postings import (
    NO_ENTRY,
    NO_POSTINGS,
    EntryPostings,
    Postings,
    joined,
    moved,
    spliced,
)
from sharedctx_server.fit.segments import Segments

__all__ = ["HEAD_TERM_SHARE", "SegmentIndex", "SegmentTable", "line_shape"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# Terms whose postings a namespace keeps between Fits (each as large as the lines holding it).
_CACHED_TERMS = 256
_MAX_SPLICES = 64  # changes the cached postings are brought up to date with; then dropped
BoolArray = npt.NDArray[np.bool_]

# What a query term in a segment's head is worth to the segment (bm25), as a share of what it
# scores in the head. Half: a head's words say where a line is, less than the line's own
# words say what it is. Measured on real tool output, the full share made the commit line of
# `git log --stat` lift every file line under it past the one the query named.
HEAD_TERM_SHARE = 0.5


def line_shape(terms: Sequence[str]) -> int:
    """What a segment says once its numbers, ids and other digit-bearing terms are masked:
    equal for the repeats of one log statement (`retrying in 5 s`, `retrying in 10 s`), 0
    (no shape, never a repeat of anything) when nothing is left. A hash: only equality
    within one process matters."""
    words = tuple(t for t in terms if t.isalpha())
    return (hash(words) or 1) if words else 0


@dataclass(frozen=True, eq=False)
class SegmentTable:
    """Every cut entry's segments end to end: entry `slots[k]` holds flat positions
    `bounds[k]` to `bounds[k + 1]`; per flat position, its entry's slot, its index inside the
    entry, its tokens, error evidence, shape (line_shape), head (Segments.heads: an index
    inside the entry, or -1) and whether the compressed form shows it (Segments.in_compressed:
    1, 0, or -1 for not known)."""

    slots: IntArray
    bounds: IntArray
    slot_of: IntArray
    local: IntArray
    tokens: IntArray
    errors: FloatArray
    shapes: IntArray
    heads: IntArray
    in_compressed: IntArray

    def __len__(self) -> int:
        return int(self.slot_of.size)

    @cached_property
    def blocks(self) -> tuple[IntArray, IntArray]:
        """The segments that have a head, ordered by their head's flat position, and those
        positions: what each head heads is one searchsorted away. Built once per table (a
        table lives until the namespace's segments change), not once per Fit."""
        members = np.flatnonzero(self.heads >= 0)
        head_at = members - self.local[members] + self.heads[members]
        order = np.argsort(head_at, kind="stable")
        return members[order], head_at[order]

    @cached_property
    def entry_tokens(self) -> IntArray:
        """Each cut entry's segments' tokens together (table order): its text's."""
        return np.asarray(np.add.reduceat(self.tokens, self.bounds[:-1]), dtype=np.int64)

    def entries_of(self, positions: IntArray) -> IntArray:
        """The table index (into `slots`) of the entry each of `positions` is in."""
        return np.searchsorted(self.bounds, positions, side="right") - 1

    def members_of(self, positions: IntArray) -> tuple[IntArray, IntArray]:
        """The segments each of `positions` heads, one head after another and each head's in
        text order: for every one, the index in `positions` of its head, and its position."""
        members, member_head = self.blocks
        lo = np.searchsorted(member_head, positions, "left")
        counts = np.searchsorted(member_head, positions, "right") - lo
        which = np.repeat(np.arange(positions.size, dtype=np.int64), counts)
        # Each head's run of members, laid out one run after another.
        first = np.repeat(lo - np.cumsum(counts) + counts, counts)
        return which, members[first + np.arange(which.size)]

    def followed(self, positions: IntArray, by: int = 1) -> BoolArray:
        """Whether the segment `by` after each of `positions` is one of the same entry."""
        n = len(self)
        later = np.minimum(positions + by, n - 1)
        same = (positions + by < n) & (self.slot_of[later] == self.slot_of[positions])
        return np.asarray(same, dtype=np.bool_)

    def span(self, slot: int) -> slice:
        """The flat positions of `slot`'s segments."""
        k = int(np.searchsorted(self.slots, slot))
        if k >= self.slots.size or self.slots[k] != slot:
            raise KeyError(slot)
        return slice(int(self.bounds[k]), int(self.bounds[k + 1]))


class SegmentIndex:
    """Per-namespace segments and BM25 statistics of cut entries, by entry slot.

    Not thread-safe: the owner serialises updates (like TermStats).
    """

    def __init__(self) -> None:
        self._vocabulary: dict[str, int] = {}
        self._df = np.zeros(1024, dtype=np.int64)  # segments holding each term id
        self._entries: dict[int, EntryPostings] = {}
        self._segments = 0
        self._total_length = 0.0
        self._table: SegmentTable | None = None
        self._norm: FloatArray | None = None  # BM25's length normalisation per flat position
        # Term id -> its postings, and how many of the splices since were applied to them.
        self._flat: dict[int, tuple[int, Postings]] = {}
        # Changes since the cached postings were made (_splice): the table's rows [a, b)
        # replaced by the entry's (shift: rows gained). Applied to a term's postings when it
        # is next used, not on every write to all _CACHED_TERMS of them (5 ms).
        self._splices: list[tuple[int, int, int, EntryPostings]] = []
        # Every cut entry's distinct term ids end to end (table order), where each entry's
        # start, and the entries: which entries hold a term is one comparison, not a search
        # per entry (built with the table, on the first new term after a change).
        self._term_ids: tuple[IntArray, IntArray, list[EntryPostings]] | None = None

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

    def segments_of(self, slot: int) -> Segments:
        """The segments of the cut entry in `slot` (KeyError when it is not cut)."""
        return self._entries[slot].segments

    def add(
        self,
        slot: int,
        segments: Segments,
        segment_terms: Sequence[Sequence[str]],
        names: Sequence[str] = (),
        shape_terms: Sequence[Sequence[str] | None] = (),
    ) -> None:
        """Index the cut entry in `slot`, one term list per segment (replacing what it held).

        `names` are the terms that name the entry (its key, tool, kind): they count once in
        every segment, as a title field does, but make no segment match by themselves (bm25).
        `shape_terms`: per segment, the terms its shape (line_shape) is read from where they
        are not its own (a JSON record's level and message, segment.json_lines), else None.
        """
        if len(segment_terms) != len(segments):
            raise ValueError("one term list per segment")
        if shape_terms and len(shape_terms) != len(segments):
            raise ValueError("one shape term list (or None) per segment")
        old = self._entries.pop(slot, None)
        if old is not None:
            self._forget(old)
        names = list(dict.fromkeys(names))
        # Every segment's terms end to end (its own, then the names), as term ids, numbered in
        # order of first use; then one count per (term, segment) pair, sorted by term, then
        # segment. Array work: a Counter per segment took half of indexing a 1 MiB log.
        flat = [term for own in segment_terms for term in (*own, *names)]
        ids = {term: self._id(term) for term in dict.fromkeys(flat)}
        term_of = np.fromiter(map(ids.__getitem__, flat), dtype=np.int64, count=len(flat))
        held = np.fromiter(
            (len(own) + len(names) for own in segment_terms),
            dtype=np.int64,
            count=len(segment_terms),
        )
        segment_of = np.repeat(np.arange(len(segment_terms), dtype=np.int64), held)
        # A segment's length counts its words, not its marks: a mark says what the line is
        # (the smallest `PAM 1 more` of a log, a definition), and as length it made that line
        # weigh less than its unmarked twins for every query that asks for no mark.
        mark_ids = [term_id for term, term_id in ids.items() if is_mark(term)]
        marked = segment_of[np.isin(term_of, mark_ids)] if mark_ids else segment_of[:0]
        lengths = (held - np.bincount(marked, minlength=held.size)).astype(np.float64)
        width = max(len(segment_terms), 1)
        pairs, counts = np.unique(term_of * width + segment_of, return_counts=True)
        pair_terms = pairs // width
        term_ids, first = np.unique(pair_terms, return_index=True)
        np.add.at(self._df, pair_terms, 1)
        entry = self._entries[slot] = EntryPostings(
            segments=segments,
            term_ids=term_ids,
            offsets=np.append(first, pairs.size).astype(np.int64),
            positions=pairs % width,
            counts=counts.astype(np.float64),
            lengths=lengths,
            names=frozenset(self._id(term) for term in names),
            shapes=np.asarray(
                [
                    line_shape(own if own is not None else terms)
                    for terms, own in zip(
                        segment_terms, shape_terms or [None] * len(segment_terms), strict=True
                    )
                ],
                dtype=np.int64,
            ),
        )
        self._segments += lengths.size
        self._total_length += float(lengths.sum())
        self._splice(slot, old is not None, entry)

    def remove(self, slot: int) -> None:
        """Forget the entry in `slot` (no-op when it is not indexed)."""
        entry = self._entries.pop(slot, None)
        if entry is None:
            return
        self._forget(entry)
        self._splice(slot, True, None)

    def _forget(self, entry: EntryPostings) -> None:
        np.subtract.at(self._df, entry.term_ids, np.diff(entry.offsets))
        self._segments -= entry.lengths.size
        self._total_length -= float(entry.lengths.sum())

    def _splice(self, slot: int, held: bool, entry: EntryPostings | None) -> None:
        """What was built for the entries, with the rows of `slot` (if it `held` segments)
        replaced by those of `entry` (None: removed): the table, the term ids and the cached
        postings spliced; the length normalisation, which the average moves, made again on
        use. Rebuilt instead, an overwrite, a delete or an expiry in a namespace of 1,100 cut
        outputs cost the next Fit about 17 ms, and 1-4 ms per query term for its postings."""
        self._norm = None
        table = self._table
        if table is None:
            return
        k = int(np.searchsorted(table.slots, slot))
        a, b = int(table.bounds[k]), int(table.bounds[k + held])
        inserted = entry is not None
        new = entry if entry is not None else NO_ENTRY
        count = len(new.segments)
        shift = count - (b - a)

        def rows(column: npt.NDArray[Any], part: npt.ArrayLike) -> npt.NDArray[Any]:
            return np.concatenate([column[:a], np.asarray(part, dtype=column.dtype), column[b:]])

        self._table = SegmentTable(
            # (The slot as an array of its type: an empty list would make the slots floats.)
            slots=np.concatenate(
                [table.slots[:k], np.full(int(inserted), slot, np.int64), table.slots[k + held :]]
            ),
            bounds=spliced(table.bounds, k, held, inserted, shift),
            slot_of=rows(table.slot_of, np.full(count, slot)),
            local=rows(table.local, np.arange(count)),
            tokens=rows(table.tokens, new.segments.tokens),
            errors=rows(table.errors, new.segments.errors),
            shapes=rows(table.shapes, new.shapes),
            heads=rows(table.heads, new.segments.heads),
            in_compressed=rows(table.in_compressed, new.segments.in_compressed),
        )
        if self._term_ids is not None:
            ids, starts, entries = self._term_ids
            lo, hi = int(starts[k]), int(starts[k + held])
            self._term_ids = (
                np.concatenate([ids[:lo], new.term_ids, ids[hi:]]),
                spliced(starts, k, held, inserted, new.term_ids.size - (hi - lo)),
                [*entries[:k], *[new] * inserted, *entries[k + held :]],
            )
        if not self._flat:
            self._splices.clear()
        elif len(self._splices) >= _MAX_SPLICES:
            self._flat.clear()  # made again on use, as cheaply as so many splices applied
            self._splices.clear()
        else:
            self._splices.append((a, b, shift, new))

    def _id(self, term: str) -> int:
        found = self._vocabulary.get(term)
        if found is not None:
            return found
        new = self._vocabulary[term] = len(self._vocabulary)
        if new >= self._df.size:
            self._df = np.concatenate([self._df, np.zeros(self._df.size, dtype=np.int64)])
        return new

    def table(self) -> SegmentTable:
        """The flat table of every cut entry's segments (built once per change)."""
        if self._table is None:
            slots = np.asarray(sorted(self._entries), dtype=np.int64)
            entries = [self._entries[s] for s in slots.tolist()]
            counts = np.asarray([len(e.segments) for e in entries], dtype=np.int64)
            bounds = np.zeros(counts.size + 1, dtype=np.int64)
            np.cumsum(counts, out=bounds[1:])
            local = np.arange(int(bounds[-1]), dtype=np.int64) - np.repeat(bounds[:-1], counts)

            def flat(column: str, dtype: type) -> npt.NDArray[np.generic]:
                parts = [getattr(e.segments, column) for e in entries]
                return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

            self._table = SegmentTable(
                slots=slots,
                bounds=bounds,
                slot_of=np.repeat(slots, counts),
                local=local,
                tokens=flat("tokens", np.int64),  # type: ignore[arg-type]
                errors=flat("errors", np.float64),  # type: ignore[arg-type]
                shapes=np.concatenate([e.shapes for e in entries])
                if entries
                else np.zeros(0, np.int64),
                heads=flat("heads", np.int64),  # type: ignore[arg-type]
                in_compressed=flat("in_compressed", np.int64),  # type: ignore[arg-type]
            )
        return self._table

    def _lengths_norm(self, k1: float, b: float) -> FloatArray:
        if self._norm is None:
            parts = [self._entries[s].lengths for s in self.table().slots.tolist()]
            lengths = np.concatenate(parts) if parts else np.zeros(0)
            average = self._total_length / self._segments if self._segments else 1.0
            self._norm = k1 * (1.0 - b + b * lengths / (average or 1.0))
        return self._norm

    def _postings(self, term_id: int) -> Postings:
        """The term's postings as flat table positions, counts and whether the text itself
        holds the term there (not only the entry's name); cached for the last _CACHED_TERMS
        terms, and brought up to date with the entries changed since when used again."""
        cached = self._flat.get(term_id)
        if cached is not None:
            done, found = cached
            for a, b, shift, entry in self._splices[done:]:
                at = int(np.searchsorted(entry.term_ids, term_id))
                holds = at < entry.term_ids.size and entry.term_ids[at] == term_id
                found = moved(found, a, b, shift, entry.postings(at, a) if holds else NO_POSTINGS)
            if done < len(self._splices):
                self._flat[term_id] = (len(self._splices), found)
            return found
        table = self.table()
        if self._term_ids is None:
            entries = [self._entries[slot] for slot in table.slots.tolist()]
            sizes = np.asarray([e.term_ids.size for e in entries], dtype=np.int64)
            starts = np.zeros(sizes.size + 1, dtype=np.int64)
            np.cumsum(sizes, out=starts[1:])
            ids = np.concatenate([e.term_ids for e in entries]) if entries else starts[:0]
            self._term_ids = (ids, starts, entries)
        ids, starts, entries = self._term_ids
        # An entry's term ids are distinct: at most one match per entry, in table order.
        where = np.flatnonzero(ids == term_id)
        holders = np.searchsorted(starts, where, side="right") - 1
        found = joined(
            entries[k].postings(at, int(table.bounds[k]))
            for k, at in zip(holders.tolist(), (where - starts[holders]).tolist(), strict=True)
        )
        if len(self._flat) >= _CACHED_TERMS:
            # The oldest goes first: a namespace read with ever new queries kept every term's
            # postings until its next write (60 MB for 1,261 terms over 5,000 entries).
            del self._flat[next(iter(self._flat))]
        self._flat[term_id] = (len(self._splices), found)
        return found

    def full_match(self, query_terms: Iterable[str], in_namespace: Callable[[str], bool]) -> float:
        """What a segment of average length holding each query term once would score: the sum
        of the idf of every distinct query term the namespace holds somewhere (`in_namespace`:
        in a whole entry, if not in a segment; such a term has the highest idf here). Terms
        the namespace never holds are left out: nothing can match them."""
        total = 0.0
        for term in dict.fromkeys(query_terms):
            term_id = self._vocabulary.get(term)
            df = int(self._df[term_id]) if term_id is not None else 0
            if df > 0 or in_namespace(term):
                total += math.log(1.0 + (self._segments - df + 0.5) / (df + 0.5))
        return total

    def bm25(
        self, query_terms: Iterable[str], *, k1: float = BM25_K1, b: float = BM25_B
    ) -> FloatArray:
        """BM25 of the query against every segment, aligned with table().

        Each distinct query term counts once; idf is ln(1 + (N - df + .5) / (df + .5)) with
        N the namespace's segments, as TermStats does for entries. A segment scores only when
        a query term is in its own text: the entry's name adds to the lines that match, it
        makes none match. So does a segment's head (SegmentTable.heads): a query term the head
        holds counts for the segment HEAD_TERM_SHARE of what it scores in the head, unless
        the segment's own text scores more for it: "the PID of the valkey-server process"
        finds the `ps aux` row of valkey-server (its header says `PID`) before the items of
        another output that only say `valkey`.
        """
        table = self.table()
        headed = bool(table.blocks[0].size)
        scores = np.zeros(len(table), dtype=np.float64)
        matched = np.zeros(scores.size, dtype=np.bool_)
        for term in dict.fromkeys(query_terms):
            term_id = self._vocabulary.get(term)
            df = int(self._df[term_id]) if term_id is not None else 0
            if term_id is None or df <= 0:
                continue
            idf = math.log(1.0 + (self._segments - df + 0.5) / (df + 0.5))
            postings = self._postings(term_id)
            positions, tf = postings.positions, postings.counts
            norm = k1 if is_mark(term) else self._lengths_norm(k1, b)[positions]
            gain = idf * tf * (k1 + 1.0) / (tf + norm)
            scores[positions] += gain
            if headed:
                _inherit(scores, table, positions, gain)
            matched[positions[postings.in_text]] = True
        return np.where(matched, scores, 0.0)


def _inherit(
    scores: FloatArray, table: SegmentTable, positions: IntArray, gain: FloatArray
) -> None:
    """Add to `scores` what one query term's `gain` at `positions` (ascending) is worth to
    the segments those positions head (SegmentTable.members_of): HEAD_TERM_SHARE of it, less
    what the term already scores in the segment itself. Touches only those segments, not the
    table: a namespace of long logs and a few tables pays for the tables' rows alone."""
    which, heirs = table.members_of(positions)
    if not heirs.size:
        return
    inherited = HEAD_TERM_SHARE * gain[which]
    at = np.minimum(np.searchsorted(positions, heirs), positions.size - 1)
    own = np.where(positions[at] == heirs, gain[at], 0.0)
    scores[heirs] += np.maximum(inherited - own, 0.0)
