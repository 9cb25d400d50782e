"""A Fit's selection told in domain terms: the chosen entries with what the reply and the
content read need, and (explain) every candidate's numbers. Built while the namespace state
is held, since the rows it reads may be reused after."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..fit import FACTORS, Form, Reason, Relevance, SegmentView, Selection, Strategy
from ..fit.repeats import repeated_records
from ..model import Kind
from ..state.nsstate import NamespaceState
from .fit_model import CandidateNote, FitAnswer, FitItem, FitQuery, SegmentNote

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

# explain lists, per cut candidate, the segments its excerpt shows plus this many best others.
_EXPLAIN_SEGMENTS = 5
_FORMS = {int(form): form for form in Form}
_KINDS = {int(kind): kind for kind in Kind}


@dataclass
class Selected:
    """What a strategy decided, with the numbers behind it."""

    selection: Selection
    scores: FloatArray
    candidates: BoolArray  # live rows (the candidates counted in the answer)
    factors: FloatArray | None = None
    gain: FloatArray | None = None
    relevance: Relevance | None = None  # of the segments of cut entries, when excerpts are on


def answer(query: FitQuery, state: NamespaceState, selected: Selected) -> FitAnswer:
    """The FitAnswer of a selection over `state`."""
    sel = selected.selection
    live = selected.candidates
    items = []
    rows = sel.indices
    # Each column read once for all chosen rows, and enum members looked up, not made: a Fit
    # answers with dozens of items, and per-item numpy scalars and enum calls added up.
    for idx, rank, form, tokens, score, event_ms, kind, version in zip(
        rows.tolist(),
        sel.ranks.tolist(),
        sel.forms.tolist(),
        sel.tokens.tolist(),
        selected.scores[rows].tolist(),
        state.event_ms[rows].tolist(),
        state.kind[rows].tolist(),
        state.entry_version[rows].tolist(),
        strict=True,
    ):
        info = state.info[idx]
        excerpt = sel.excerpts.get(idx)
        items.append(
            FitItem(
                key=info.key if info is not None else "",
                rank=rank,
                score=score,
                form=_FORMS[form],
                tokens=tokens,
                event_ms=int(event_ms),
                kind=_KINDS[int(kind)],
                thread=info.thread if info is not None else "",
                version=int(version),
                line_ranges=tuple(excerpt.ranges()) if excerpt is not None else (),
                total_lines=excerpt.total_lines if excerpt is not None else 0,
                repeats=_repeats(selected.relevance, idx, excerpt.covered)
                if excerpt is not None and selected.relevance is not None
                else (),
            )
        )
    counts = np.bincount(sel.reasons[live].astype(np.int64), minlength=len(Reason))
    weights = {}
    if query.strategy is Strategy.SCORED:
        weights = dict(zip(FACTORS, query.weights.tolist(), strict=True))
    candidates = int(live.sum())
    return FitAnswer(
        items=items,
        candidates=candidates,
        left_out=candidates - int(sel.indices.size),
        left_out_by_reason={
            Reason(code).label: count
            for code, count in enumerate(counts.tolist())
            if count and code != Reason.SELECTED
        },
        weights=weights,
        explain=_explain(state, selected) if query.explain else [],
    )


def _repeats(relevance: Relevance, row: int, covered: list[int]) -> tuple[tuple[int, int], ...]:
    """How often the excerpt of `row`'s matches (segments sharing a term with the query)
    repeat in its entry."""
    try:
        span = relevance.table.span(row)
    except KeyError:  # not among the segments this query scored (a turn strategy's own)
        return ()
    matched = np.where(relevance.lexical[span] > 0, relevance.rho[span], 0.0)
    records = repeated_records(
        relevance.segments_of(row), relevance.table.shapes[span], matched, covered
    )
    return tuple(records)


def _explain(state: NamespaceState, selected: Selected) -> list[CandidateNote]:
    """Every candidate, best score first (ties: newer first)."""
    rows = np.flatnonzero(selected.candidates)
    order = rows[np.lexsort((state.sequence[rows], -selected.scores[rows]))]
    notes = []
    for i in order.tolist():
        info = state.info[i]
        factors: dict[str, float] = {}
        if selected.factors is not None:
            factors = dict(zip(FACTORS, selected.factors[i].tolist(), strict=True))
            if not state.embedded[i]:
                # Not embedded yet: the semantic factor is unknown, not zero.
                factors.pop("semantic_similarity", None)
        segments: tuple[SegmentNote, ...] = ()
        if selected.relevance is not None and i in state.segments:
            excerpt = selected.selection.excerpts.get(i)
            view = selected.relevance.view(i)
            segments = _segment_notes(view, excerpt.covered if excerpt is not None else [])
        notes.append(
            CandidateNote(
                key=info.key if info is not None else "",
                score=float(selected.scores[i]),
                reason=selected.selection.reason_of(i).label,
                factors=factors,
                neighbour_gain=float(selected.gain[i]) if selected.gain is not None else 0.0,
                embedded=bool(state.embedded[i]),
                original_tokens=int(state.original_tokens[i]),
                compressed_tokens=int(state.compressed_tokens[i]),
                segments=segments,
            )
        )
    return notes


def _segment_notes(view: SegmentView, chosen: list[int]) -> tuple[SegmentNote, ...]:
    """The segments an excerpt shows and the best others, in text order."""
    relevance = view.relevance
    best = np.argsort(-relevance, kind="stable")[:_EXPLAIN_SEGMENTS]
    shown = sorted(set(chosen) | {int(i) for i in best if relevance[i] > 0})
    starts, lines, tokens = view.segments.starts, view.segments.lines, view.segments.tokens
    picked = set(chosen)
    return tuple(
        SegmentNote(
            first_line=int(starts[i]) + 1,
            last_line=int(starts[i] + lines[i]),
            tokens=int(tokens[i]),
            relevance=float(relevance[i]),
            chosen=i in picked,
        )
        for i in shown
    )
