"""Fit's explain data in plain words: what each factor measures, what each reason means and
what to change about it, and how a score is made up."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FACTORS", "REASONS", "Factor", "Reason", "reason", "score_note"]


@dataclass(frozen=True)
class Factor:
    """A scored factor as people read it."""

    name: str
    label: str
    meaning: str


# In the order the playground shows them: the two that locate an answer first.
FACTORS = (
    Factor("semantic_similarity", "meaning", "how close the entry's meaning is to the query "
           "(embeddings), relative to the other candidates"),
    Factor("lexical_relevance", "words", "how well the entry matches the query's words (BM25), "
           "relative to the best match"),
    Factor("recency", "recency", "how recent the entry is: 1 now, half after about 1.9 hours "
           "at the default decay"),
    Factor("error_indicator", "errors", "evidence of errors in the text: exceptions, tracebacks, "
           "failure counts, error words"),
    Factor("toin_importance", "importance", "the importance the writer gave the entry"),
    Factor("forward_reference", "references", "how often other entries or the query refer to "
           "it ({{key}} mentions, {{ref}} markers)"),
    Factor("token_density", "compressible", "the share of tokens its compressed form saves"),
)  # fmt: skip


@dataclass(frozen=True)
class Reason:
    """Why a candidate is in the answer or not, for people: a title, what happened, and what
    to change to get it in."""

    code: str
    title: str
    text: str
    hint: str


REASONS = {
    r.code: r
    for r in (
        Reason("selected", "in the context", "Chosen: it went into the budget.", ""),
        Reason(
            "filtered",
            "filtered out",
            "The request's filters (kinds, tags, agents, threads) excluded it before scoring.",
            "Widen or drop the filters.",
        ),
        Reason(
            "min_score",
            "score too low",
            "Its final score is under the request's min_score, so it was never considered.",
            "Lower min_score.",
        ),
        Reason(
            "too_large",
            "too large",
            "It is larger than the whole budget in every form the request allows, and no "
            "excerpt of it fit (an excerpt shows the lines that match the query or carry "
            "errors).",
            "Raise the budget, or let excerpts in (they come from entries of 256 tokens or "
            "more that are not messages) with a query using words its lines contain.",
        ),
        Reason(
            "budget",
            "budget spent",
            "The entries that went in before it (the better scored, or under relevant and "
            "recent the newer or more relevant turns) left too little of the budget for it.",
            "Raise the budget, use compressed forms, or make it score higher (a query that "
            "names what it holds).",
        ),
        Reason(
            "max_entries",
            "entry cap reached",
            "max_entries entries were already in; it would still have fitted the budget.",
            "Raise or drop max_entries.",
        ),
        Reason(
            "adaptive",
            "cut by the adaptive sizer",
            "The adaptive sizer judged that entries past this count add little new "
            "information, and cut it after the fill.",
            "Use a gentler adaptive profile (conservative) or none.",
        ),
        Reason(
            "floor",
            "below the relevance floor",
            "Under the relevant strategy, its conversation turn shares too few of the query's "
            "words; the floor rises as older history outgrows the budget.",
            "Use words the turn uses, raise the budget, or use the scored strategy.",
        ),
        Reason(
            "unattached",
            "belongs to no turn",
            "Under relevant or recent, a tool output or log written before every "
            "conversation turn belongs to no turn, so it cannot be chosen.",
            "Use the scored strategy, or give the entry an event time inside the conversation.",
        ),
    )
}


def reason(code: str) -> Reason:
    """The plain-words reason for a reason code (an unknown code is shown as it is)."""
    return REASONS.get(code) or Reason(code, code.replace("_", " "), f"Left out: {code}.", "")


def score_note(strategy: str) -> str:
    """How a score is made up under `strategy`, and why it can pass 1."""
    if strategy == "relevant":
        return (
            "Under relevant, an entry's score is its conversation turn's relevance: the share "
            "of the query's words the turn holds, in [0, 1]."
        )
    if strategy == "recent":
        return "Under recent, entries are not scored: whole turns go in newest first."
    return (
        "A score is the weighted sum of the factors (the weights add up to 1, so that part is "
        "at most 1), plus a share of the scores of strong matches next to the entry in the "
        "same thread (neighbour gain: the answer is often the reply after the turn that "
        "matched). That share is why a score can pass 1. Entries go into the budget best "
        "score first, after the newest few (keep_recent)."
    )
