"""The namespace's segment index, changed entry by entry, against one built at once."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import SegmentIndex, Segments

WORDS = ["alpha", "beta", "gamma", "delta", "error", "retry"]
COLUMNS = ("slots", "bounds", "slot_of", "local", "tokens", "errors", "heads", "in_compressed")

_entry = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1, max_size=5)
_change = st.one_of(
    st.tuples(st.just("put"), st.integers(0, 6), _entry),
    st.tuples(st.just("remove"), st.integers(0, 6), st.just([])),
    st.tuples(st.just("fit"), st.just(0), st.just([])),
)


def segments_for(terms: list[list[str]]) -> Segments:
    n = len(terms)
    heads = np.full(n, -1, dtype=np.int64)
    heads[1:] = 0
    return Segments(
        np.ones(n, dtype=np.int64),
        np.asarray([len(t) for t in terms], dtype=np.int64),
        np.asarray([float("error" in t) for t in terms]),
        heads,
    )


@given(st.lists(_change, max_size=30))
@settings(max_examples=150, deadline=None)
def test_an_index_changed_entry_by_entry_equals_one_built_at_once(changes: list) -> None:
    # Puts, rewrites and removals, with Fits between them (a Fit builds the table and the
    # postings, which each change after is spliced into): what a Fit reads must not depend
    # on when the index was built (a replica that loads the namespace builds it at once).
    index = SegmentIndex()
    held: dict[int, list[list[str]]] = {}
    for verb, slot, terms in changes:
        if verb == "put":
            index.add(slot, segments_for(terms), terms)
            held[slot] = terms
        elif verb == "remove":
            index.remove(slot)
            held.pop(slot, None)
        else:
            index.table()
            index.bm25(["alpha", "error"])
    fresh = SegmentIndex()
    for slot, terms in sorted(held.items()):
        fresh.add(slot, segments_for(terms), terms)
    for column in COLUMNS:
        a, b = getattr(index.table(), column), getattr(fresh.table(), column)
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), column
    for query in (["alpha"], ["error", "retry"], WORDS):
        assert np.allclose(index.bm25(query), fresh.bm25(query))


def test_a_mark_adds_nothing_to_the_length_of_its_segment_or_entry() -> None:
    """`PAM 1 more authentication failure` marked as its log's smallest `PAM` row scores as
    its unmarked twin for a query that asks for no mark (longer by its marks, it had ranked
    below the plural lines of another template)."""
    from sharedctx_server.fit import TermStats

    words = ["pam", "1", "more", "failure", "root"]
    terms = [words, [*words, "↓", "↓pam"], ["other", "line", "said", "this"]]
    segments = Segments(
        np.ones(3, dtype=np.int64),
        np.asarray([len(t) for t in terms], dtype=np.int64),
        np.zeros(3),
        np.full(3, -1, dtype=np.int64),
    )
    index = SegmentIndex()
    index.add(0, segments, terms)
    scores = index.bm25(["failure", "pam"])
    assert scores[0] == scores[1] > 0
    stats = TermStats()
    for slot, own in enumerate(terms):
        stats.add(slot, own)
    scores = stats.bm25_scores(["failure", "pam"], size=3)
    assert scores[0] == scores[1] > 0
