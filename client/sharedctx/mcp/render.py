"""A Fit's selection as the text an MCP client hands to its model."""

from __future__ import annotations

from datetime import UTC, datetime

from ..fit_table import format_ranges
from ..types import FitEntry, FitResult


def iso(when: datetime | None) -> str | None:
    """A time as ISO 8601 in UTC ("2026-05-01T10:00:00Z"), None when unknown."""
    if when is None:
        return None
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def heading(entry: FitEntry) -> str:
    """The line above an entry's text: key, kind, time, and what an excerpt shows."""
    parts = [entry.key, entry.kind, iso(entry.event_time) or "time unknown"]
    if entry.form == "excerpt":
        parts.append(f"excerpt: lines {format_ranges(entry)}")
    return "--- " + " | ".join(parts)


def fit_text(namespace: str, result: FitResult, budget_tokens: int) -> str:
    """The selected entries' texts in the returned (chronological) order, each under its
    heading, after one summary line."""
    summary = (
        f"Fit of {namespace}: {len(result.entries)} of {result.candidates} entries, "
        f"{result.total_tokens} of {budget_tokens} tokens, oldest first."
    )
    if not result.entries:
        return summary + " Nothing stored matches or fits."
    blocks = [summary]
    blocks.extend(f"{heading(e)}\n{e.content}" for e in result.entries)
    return "\n\n".join(blocks)
