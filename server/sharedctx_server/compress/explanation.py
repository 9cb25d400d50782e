"""A choice of compressor told to people (`sharedctx compress --explain`) and to programs."""

from __future__ import annotations

from typing import Any

from .choose import Choice
from .markers import has_marker
from .pipeline import describe

__all__ = ["explanation_data", "explanation_lines"]


def explanation_lines(choice: Choice) -> list[str]:
    """Which compressor ran, why it was chosen over the others, token counts, what it dropped."""
    result = choice.result
    lines = [describe(result)]
    if choice.note:
        lines.append(f"why: {choice.note}")
    if not choice.trials:
        return lines
    if choice.unseen and choice.result.compressor != "none":
        lines.append("read as a terminal shows it, without: " + "; ".join(choice.unseen))
    lines.append("compressors considered (smallest safe result wins, ties in a fixed order):")
    width = max(len(t.name) for t in choice.trials)
    for t in choice.trials:
        tokens = f"{t.tokens:,} tokens" if t.tokens is not None else ""
        lines.append(f"  {t.name:<{width}}  {t.outcome:<36} {tokens:>14}  {t.reason}")
    chosen = [t for t in choice.trials if t.outcome == "chosen"]
    if chosen and chosen[-1].dropped:
        lines.append(f"left out by {chosen[-1].name}: " + "; ".join(chosen[-1].dropped))
        # Not when only whitespace went, nor when a structural form's header says all there
        # is to say (blame, search results: nothing is left out in place).
        first, _, rest = choice.result.text.partition("\n")
        if has_marker(rest):
            lines.append(
                "(each place where something was left out carries a [... N ... omitted] marker)"
            )
        elif has_marker(first):
            lines.append("(the form's first line says how it is written)")
    return lines


def explanation_data(choice: Choice) -> dict[str, Any]:
    """The same as a JSON-ready dict."""
    return {
        "note": choice.note,
        "unseen": list(choice.unseen) if choice.result.compressor != "none" else [],
        "trials": [
            {
                "compressor": t.name,
                "outcome": t.outcome,
                "tokens": t.tokens,
                "share_understood": round(t.share, 3),
                "reason": t.reason,
                "dropped": list(t.dropped),
            }
            for t in choice.trials
        ],
    }
