"""A Fit's selection as the text an MCP client hands to its model."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from ..fit_table import format_ranges, format_repeats
from ..types import FitEntry, FitResult
from ..wording import counted


def iso(when: datetime | None) -> str | None:
    """A time as ISO 8601 in UTC ("2026-05-01T10:00:00Z"), None when unknown."""
    if when is None:
        return None
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


# The server counts the entries' texts; the summary line and each entry's heading come on top
# and must fit the budget too, so they are reserved before asking (reserve). About what such a
# line takes (a key of 30 characters, an excerpt of a few ranges); headings take at most a
# third of the budget at first (one entry per 96 tokens), more when the texts leave room.
HEADING_TOKENS = 32
SUMMARY_TOKENS = 32


@dataclass(frozen=True)
class Reserved:
    """What the fit tool asks the server for, out of the caller's budget_tokens."""

    texts_budget: int  # the budget for the entries' texts, headings and summary taken off
    most: int  # the most entries: each brings a heading
    keep_recent: int  # the newest entries that go in first, never all of `most`


# The server's default: the newest entries go in first.
KEEP_RECENT = 2


def reserve(budget_tokens: int, most: int | None = None) -> Reserved:
    """The budget to ask Fit for the entries' texts, the most entries to ask for (`most`, by
    default one per three headings' worth of budget), so that the text with its headings
    stays within `budget_tokens`, and how many of those slots the newest entries may take
    first (at most half: with one slot, the best entry gets it). The texts' budget is under
    1 when the headings take it all: then nothing fits."""
    # (Within the request's 32-bit field, whatever the budget: a budget past the server's
    # limit is then refused for what it is.)
    if most is None:
        most = budget_tokens // (3 * HEADING_TOKENS)
    most = min(max(1, most), 2**31 - 1)
    texts = budget_tokens - SUMMARY_TOKENS - most * HEADING_TOKENS
    return Reserved(texts, most, min(KEEP_RECENT, most // 2))


def widened(budget_tokens: int, asked: Reserved, used: int) -> Reserved | None:
    """More slots when a Fit that filled `asked.most` of them used `used` tokens of text and
    left much of its budget: each new slot takes a heading and leaves as much for its text.
    None when there is no room for one."""
    extra = (asked.texts_budget - used) // (2 * HEADING_TOKENS)
    return reserve(budget_tokens, asked.most + extra) if extra >= 1 else None


def heading(entry: FitEntry) -> str:
    """The line above an entry's text: key, kind, time (to the second), and what an excerpt
    shows."""
    when = entry.event_time.replace(microsecond=0) if entry.event_time else None
    # A kind the writer did not say is no information for the reader.
    kinds = [entry.kind] if entry.kind != "unspecified" else []
    parts = [entry.key, *kinds, iso(when) or "time unknown"]
    if entry.form == "excerpt":
        parts.append(f"excerpt: lines {format_ranges(entry)}")
        # The best match's count only: a heading's tokens come out of the budget too.
        if entry.repeats:
            parts.append(format_repeats(entry, most=1))
    return "--- " + " | ".join(parts)


def fit_text(namespace: str, result: FitResult, budget_tokens: int, texts_budget: int) -> str:
    """The selected entries' texts in the returned (chronological) order, each under its
    heading, after one summary line; `texts_budget` is what was left for the texts."""
    summary = (
        f"Fit of {namespace}: {len(result.entries)} of {result.candidates} entries, "
        f"{counted(result.total_tokens, 'token')} of text in a budget of {budget_tokens}, "
        "oldest first."
    )
    if not result.entries and not result.candidates:
        return f"{summary} Nothing is stored here."
    if not result.entries and result.left_out_by_reason.get("filtered") == result.candidates:
        return f"{summary} No stored entry passes the filters."
    if not result.entries:
        return (
            f"{summary} None fits the {counted(max(0, texts_budget), 'token')} "
            "left for texts once headings are reserved: ask with a larger budget_tokens."
        )
    blocks = [summary]
    blocks.extend(f"{heading(e)}\n{e.content}" for e in result.entries)
    return "\n\n".join(blocks)
