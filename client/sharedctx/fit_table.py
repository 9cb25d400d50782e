"""How the `sharedctx fit` command shows a Fit result: a table for people, a dict for --json."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .types import FitEntry, FitResult


def fit_dict(result: FitResult) -> dict[str, Any]:
    """A Fit result as JSON-ready data (`sharedctx fit --json`)."""
    out = asdict(result)
    for entry in out["entries"]:
        entry["event_time"] = entry["event_time"].isoformat() if entry["event_time"] else None
    return out


def format_ranges(entry: FitEntry) -> str:
    """An excerpt's line ranges for people: "97-104,116 of 166"."""
    parts = [str(a) if a == b else f"{a}-{b}" for a, b in entry.line_ranges]
    return f"{','.join(parts)} of {entry.total_lines}"


def format_repeats(entry: FitEntry, most: int | None = None) -> str:
    """How often an excerpt's matches repeat in the entry, for people: "line 66 is one of 54
    alike" ("" when none repeat beyond the excerpt); the `most` best only, when given."""
    shown = entry.repeats[:most]
    return "; ".join(f"line {line} is one of {count} alike" for line, count in shown)


_KEY_WIDTH = 30


def key_cell(key: str, width: int = _KEY_WIDTH) -> str:
    """`key` in a column `width` wide: a longer one keeps its start and its end, where keys
    differ (`cat:server/pkg/fit/lexical.py` and `.../fit/excerpts.py` both began
    `cat:server/pkg/fi` when cut at the end)."""
    if len(key) <= width:
        return f"{key:{width}}"
    tail = (width - 1) * 2 // 3
    return f"{key[: width - 1 - tail]}…{key[-tail:]}"


def format_fit_table(result: FitResult, explain: bool = False) -> str:
    """A Fit result as a table. Without `explain`: the entries in the order they are returned
    (chronological), numbered, with `added` saying when each went into the budget (1 = first,
    the best); with `explain`: every candidate, best score first, with its factors (an
    excerpt's lines below its row)."""
    factors = ["recency", "semantic_similarity", "lexical_relevance", "error_indicator"]
    short = {"recency": "rec", "semantic_similarity": "sem", "lexical_relevance": "lex",
             "error_indicator": "err"}  # fmt: skip
    lines = []
    if explain:
        head = f"{'added':>5}  {'key':30} {'tokens':>6} {'score':>7} " + " ".join(
            f"{short[f]:>5}" for f in factors
        )
        lines.append("candidates, best score first (added: when it went into the budget)")
        lines.append(head + "  reason")
        chosen = {e.key: e for e in result.entries}
        for c in result.explain:
            entry = chosen.get(c.key)
            rank = str(entry.rank) if entry is not None else "-"
            values = " ".join(
                f"{c.factors[f]:5.2f}" if f in c.factors else "    ?" for f in factors
            )
            tokens = entry.tokens if entry is not None else c.compressed_tokens
            reason = c.reason if entry is None else f"{c.reason} ({entry.form})"
            lines.append(
                f"{rank:>5}  {key_cell(c.key)} {tokens:>6} {c.score:7.3f} {values}  {reason}"
            )
            for seg in c.segments:
                span = f"{seg.first_line}-{seg.last_line}"
                mark = "shown" if seg.chosen else ""
                lines.append(
                    f"{'':6}lines {span:>11} {seg.tokens:>6} relevance {seg.relevance:4.2f} {mark}"
                )
    else:
        lines.append("entries in the order returned (added: when it went into the budget)")
        lines.append(
            f"{'#':>3} {'added':>5}  {'key':30} {'form':10} {'tokens':>6} {'score':>7}  lines"
        )
        for i, e in enumerate(result.entries, start=1):
            where = format_ranges(e) if e.form == "excerpt" else ""
            lines.append(
                f"{i:>3} {e.rank:>5}  {key_cell(e.key)} {e.form:10} {e.tokens:>6} {e.score:7.3f}"
                f"  {where}"
            )
    left_out = ", ".join(f"{n} {why}" for why, n in result.left_out_by_reason.items())
    lines.append(
        f"{len(result.entries)} of {result.candidates} entries, "
        f"{result.total_tokens} tokens" + (f"; left out: {left_out}" if left_out else "")
    )
    return "\n".join(lines)
