"""What the Fit playground shows of a FitResult: the budget bar, the packed context, and every
candidate with its factors, score make-up and reason in plain words."""

from __future__ import annotations

from dataclasses import dataclass

from ..fit_table import format_repeats
from ..types import FitCandidate, FitEntry, FitResult
from .explain import FACTORS, Factor, Reason, reason
from .fitform import FitForm
from .omissions import MarkedText, mark

__all__ = ["CandidateView", "FitView", "build"]


@dataclass(frozen=True)
class FactorValue:
    """One factor of one candidate: its value in [0, 1] (None: not known, e.g. no embedding
    yet) and its weight in this Fit (None when the strategy does not weigh factors)."""

    factor: Factor
    value: float | None
    weight: float | None


@dataclass(frozen=True)
class CandidateView:
    """A candidate as the playground's table shows it."""

    candidate: FitCandidate
    entry: FitEntry | None  # set when selected
    factors: tuple[FactorValue, ...]
    weighted: float | None  # the weighted sum of the factors
    from_neighbours: float  # what neighbour expansion added to the score
    reason: Reason
    detail: str  # the reason with this candidate's numbers


@dataclass(frozen=True)
class Packed:
    """One selected entry of the packed context, in the order an agent gets them."""

    entry: FitEntry
    text: MarkedText


@dataclass(frozen=True)
class FitView:
    """Everything the result part of the playground shows."""

    result: FitResult
    budget: int
    bar: tuple[FitEntry, ...]  # selected entries in fill order (rank)
    packed: tuple[Packed, ...]  # chronological, as returned
    context: str  # the packed texts joined as an agent would join them
    candidates: tuple[CandidateView, ...]
    left_out: tuple[tuple[Reason, int], ...]
    anchors: dict[str, int]  # key -> its row in `candidates` (1-based), for links
    scored: bool  # candidates carry factor values (SCORED); RELEVANT and RECENT have none


def _counted(c: FitCandidate, form: str) -> int:
    """What the request counts of a candidate: its tokens in the requested form (`auto`
    counts the smaller until the form is settled)."""
    if form == "full":
        return c.original_tokens
    if form == "auto":
        return min(c.original_tokens, c.compressed_tokens)
    return c.compressed_tokens


def _tokens(n: int) -> str:
    return "1 token" if n == 1 else f"{n:,} tokens"


def _detail(
    code: Reason, c: FitCandidate, entry: FitEntry | None, counted: int, form: FitForm
) -> str:
    """The reason with this candidate's numbers (turn strategies judge whole turns)."""
    if entry is not None:
        how = {"excerpt": "as an excerpt", "full": "in full", "compressed": "compressed"}
        lines = ""
        if entry.form == "excerpt":
            shown = sum(b - a + 1 for a, b in entry.line_ranges)
            lines = f" ({shown:,} of {entry.total_lines:,} lines)"
            if entry.repeats:
                lines += f" ({format_repeats(entry)})"
        return (
            f"Went in {how.get(entry.form, entry.form)}{lines}, number {entry.rank} in the "
            f"fill, {_tokens(entry.tokens)}."
        )
    turns = form.strategy != "scored"
    if code.code == "too_large" and turns:
        return (
            f"Its conversation turn is larger than the whole budget ({form.budget:,}); turns "
            "go in whole (only a large tool output or log in one can come as an excerpt)."
        )
    if code.code == "too_large":
        return (
            f"Needs {_tokens(counted)}, more than the whole budget ({form.budget:,}), and no "
            "excerpt of it fit."
        )
    if code.code == "budget" and turns:
        return "Its turn did not fit what the newer (or more relevant) turns left of the budget."
    if code.code == "budget":
        return f"Needs {_tokens(counted)}: entries that scored higher had used the budget first."
    if code.code == "min_score" and form.min_score is not None:
        return f"Its score {c.score:.3f} is under min_score {form.min_score:g}."
    return code.text


def _candidate(
    c: FitCandidate, entry: FitEntry | None, weights: dict[str, float], form: FitForm
) -> CandidateView:
    values = []
    weighted = 0.0 if weights else None
    for f in FACTORS:
        value = c.factors.get(f.name)
        if f.name == "semantic_similarity" and not c.embedded:
            value = None  # not embedded yet: unknown, not 0
        weight = weights.get(f.name) if weights else None
        values.append(FactorValue(f, value, weight))
        if weighted is not None and value is not None and weight:
            weighted += value * weight
    # What is left of the score after the factors came from neighbours (0 when off).
    gain = max(0.0, c.score - weighted) if weighted is not None else 0.0
    counted = entry.tokens if entry is not None else _counted(c, form.form)
    why = reason(c.reason)
    return CandidateView(
        candidate=c,
        entry=entry,
        factors=tuple(values),
        weighted=weighted,
        from_neighbours=gain if c.neighbour_gain > 0 else 0.0,
        reason=why,
        detail=_detail(why, c, entry, counted, form),
    )


def build(result: FitResult, form: FitForm) -> FitView:
    """The playground's view of a Fit's answer to `form`."""
    chosen = {e.key: e for e in result.entries}
    candidates = tuple(
        _candidate(c, chosen.get(c.key), result.weights, form) for c in result.explain
    )
    left_out = tuple(
        (reason(code), n)
        for code, n in sorted(result.left_out_by_reason.items(), key=lambda kv: -kv[1])
        if n
    )
    return FitView(
        result=result,
        budget=form.budget,
        bar=tuple(sorted(result.entries, key=lambda e: e.rank)),
        packed=tuple(
            Packed(e, mark(e.content, excerpt=e.form == "excerpt")) for e in result.entries
        ),
        context="\n\n".join(e.content for e in result.entries),
        candidates=candidates,
        left_out=left_out,
        anchors={c.candidate.key: i for i, c in enumerate(candidates, start=1)},
        scored=any(c.factors for c in result.explain),
    )
