"""Running the competing compressors and keeping the smallest safe result.

Every result goes through the same checks before its size counts: it keeps every error line
of the original (inside JSON, lines also end at `\\n` escapes), JSON stays valid JSON, and a
result that changed more than whitespace carries a marker (which is what makes compressing
it again a no-op). Of the results that pass, the one with the fewest tokens wins, provided it
has fewer than the original; ties go to the compressor listed first in `COMPRESSORS`.

A winner without a marker (only whitespace normalised) is compressed once more: were another
compressor to find something in the normalised text, its result is taken instead, so that
`compress(compress(x).text)` never differs from `compress(x).text`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from ..fit.terminal import strip_ansi
from .candidates import Skipped, candidates, generic_plan
from .config import CompressConfig
from .detect import looks_binary
from .error_lines import ErrorMemo
from .json_compress import BOM
from .markers import has_marker, omitted_marker
from .plan import COMPRESSORS, Compressed, CompressorName, Plan
from .progress import settle_progress
from .source import Source

__all__ = ["Choice", "Trial", "choose"]


@dataclass(frozen=True)
class Trial:
    """One compressor considered for a content, and what came of it."""

    name: CompressorName
    reason: str  # why it was considered (or left out)
    share: float  # of the non-blank lines it understood (1.0 for the generic ones)
    outcome: str  # "chosen", "larger", "not smaller than the original", "unsafe: ...", ...
    tokens: int | None  # of its result, when it produced one that passed the checks
    dropped: tuple[str, ...] = ()  # what its result left out, in words


@dataclass(frozen=True)
class Choice:
    """The compressed form and how it was chosen."""

    result: Compressed
    trials: tuple[Trial, ...]
    note: str = ""  # why no compressor ran, when none did
    # What the compressors did not see: the content was read as a terminal shows it.
    unseen: tuple[str, ...] = ()


def _unsafe(plan: Plan, source: Source, text: str) -> str:
    """Why `text` may not stand for the content ("" when it may)."""
    content = source.content
    if plan.name == "json":
        try:
            json.loads(text[plan.json_at :].removeprefix(BOM), strict=False)
        except ValueError:
            return "unsafe: not valid JSON"
        # In a one-line document the unit kept whole is the item carrying an error, which
        # json_compress keeps verbatim; in a multi-line one it is the line.
        if "\n" in content.strip():
            lost = source.judged_json.lost(text)
            if lost:
                return f"unsafe: would lose {len(lost)} error lines"
        return ""
    lost_count = source.missing_errors(text)
    if lost_count:
        return f"unsafe: would lose {lost_count} error lines"
    if not has_marker(text) and text != "\n".join(source.lines):
        return "unsafe: changed more than whitespace without a marker"
    return ""


@dataclass(frozen=True)
class _Result:
    tokens: int
    plan: Plan
    text: str
    dropped: tuple[str, ...]

    @property
    def rank(self) -> tuple[int, int]:
        """Fewest tokens first; ties in the order of COMPRESSORS."""
        return self.tokens, COMPRESSORS.index(self.plan.name)


def _try(
    plan: Plan, source: Source, count_tokens: Callable[[str], int], original_tokens: int
) -> _Result | Trial:
    """Run one plan: its result if it passed every check, else the trial saying why not."""
    attempt = plan.run()
    if attempt.text == source.content:
        return Trial(plan.name, plan.reason, plan.share, "unchanged", None, attempt.dropped)
    unsafe = _unsafe(plan, source, attempt.text)
    if unsafe:
        return Trial(plan.name, plan.reason, plan.share, unsafe, None, attempt.dropped)
    tokens = count_tokens(attempt.text)
    if tokens >= original_tokens:
        outcome = "not smaller than the original"
        return Trial(plan.name, plan.reason, plan.share, outcome, tokens, attempt.dropped)
    saved = 1 - tokens / original_tokens
    if saved < source.config.min_saved and has_marker(attempt.text):
        # Only whitespace normalised (no marker) loses nothing, whatever it saves.
        outcome = f"saves {saved:.0%}, under the {source.config.min_saved:.0%} worth an omission"
        return Trial(plan.name, plan.reason, plan.share, outcome, tokens, attempt.dropped)
    return _Result(tokens, plan, attempt.text, attempt.dropped)


def _sort(outcome: _Result | Trial, results: list[_Result], trials: list[Trial]) -> None:
    if isinstance(outcome, _Result):
        results.append(outcome)
    else:
        trials.append(outcome)


def _run(
    source: Source, count_tokens: Callable[[str], int], original_tokens: int, generic: bool = True
) -> tuple[Compressed | None, list[Trial]]:
    plans, skipped = candidates(source, generic)
    results: list[_Result] = []
    trials: list[Trial] = []
    for plan in plans:
        _sort(_try(plan, source, count_tokens, original_tokens), results, trials)
    stepped_aside = [s for s in skipped if s.fallback]
    if not results and stepped_aside:
        # The structural compressor the generic one stepped aside for saved nothing: the
        # generic one runs after all (candidates.Skipped says when the log compressor may not).
        plan = generic_plan(source)
        if plan.name != "log" or not any(s.kept_whole for s in stepped_aside):
            skipped = [s for s in skipped if s not in stepped_aside]
            _sort(_try(plan, source, count_tokens, original_tokens), results, trials)
        else:
            skipped = [
                s if not s.kept_whole else Skipped(s.name, s.share, f"{s.reason}; {s.kept_whole}")
                for s in skipped
            ]
    results.sort(key=lambda r: r.rank)
    winner: Compressed | None = None
    for rank, result in enumerate(results):
        plan = result.plan
        if rank == 0:
            winner = Compressed(result.text, plan.name, original_tokens, result.tokens)
            outcome_text = "chosen"
        else:
            outcome_text = f"larger than {results[0].plan.name}"
        trials.append(
            Trial(plan.name, plan.reason, plan.share, outcome_text, result.tokens, result.dropped)
        )
    trials += [Trial(s.name, s.reason, s.share, "not run", None) for s in skipped]
    return winner, trials


def _terminal_view(content: str, memo: ErrorMemo) -> tuple[str, tuple[str, ...]]:
    """`content` as a terminal shows it, and what that view left out, in words."""
    plain = strip_ansi(content)
    left_out: tuple[str, ...] = ("escape sequences",) if plain != content else ()
    settled, updates = settle_progress(plain, memo.notable)
    if updates:
        left_out += ("progress bar updates (counted)",)
    return settled, left_out


def choose(
    content: str,
    count_tokens: Callable[[str], int],
    kind: str | None,
    tool_name: str | None,
    config: CompressConfig,
) -> Choice:
    """The compressed form of `content` and the trials that chose it (see module docstring)."""
    original_tokens = count_tokens(content)
    unchanged = Compressed(content, "none", original_tokens, original_tokens)
    if len(content) < config.min_chars:
        return Choice(unchanged, (), f"under {config.min_chars} characters: stored as is")
    if looks_binary(content, config):
        return Choice(unchanged, (), "looks binary: stored as is")
    if has_marker(content):
        return Choice(unchanged, (), "already a compressed form (it carries a marker)")
    memo = ErrorMemo()
    # Compressors read what a terminal would show: the text without escapes (colours) and with
    # progress bars settled to their last state. A result is judged against that.
    plain, shown = _terminal_view(content, memo)
    source = Source(plain, kind, tool_name, config, memo)
    winner, trials = _run(source, count_tokens, original_tokens)
    if winner is None and plain != content:
        tokens = count_tokens(plain)
        if tokens < original_tokens:
            winner = Compressed(plain, "text", original_tokens, tokens)
            why = "the text as a terminal shows it"
            trials.append(Trial("text", why, 1.0, "chosen", tokens))
    if winner is None:
        return Choice(unchanged, tuple(trials), "no compressor saved enough tokens safely", shown)
    if not winner.text.strip():
        # Only blank lines (or escapes) held nothing: say so rather than store an empty form,
        # which a caller may not give (Put refuses an empty `compressed` for a content).
        blank = omitted_marker(content.count("\n") + 1, "blank line")
        winner = Compressed(blank, winner.compressor, original_tokens, count_tokens(blank))
    if not has_marker(winner.text):
        second = Source(winner.text, kind, tool_name, config, memo)
        # Without the generic compressors: what they make of normalised text is that text.
        again, _ = _run(second, count_tokens, winner.compressed_tokens, generic=False)
        if again is not None:
            # `again` kept every error line of the normalised text, whose error lines are the
            # original's up to whitespace, and it is smaller than the winner.
            trials = [
                t if t.outcome != "chosen" else Trial(t.name, t.reason, t.share, "larger", t.tokens)
                for t in trials
            ]
            tokens = again.compressed_tokens
            winner = Compressed(again.text, again.compressor, original_tokens, tokens)
            why = "compressing the whitespace-normalised text once more"
            trials.append(Trial(again.compressor, why, 1.0, "chosen", tokens))
    return Choice(winner, tuple(trials), unseen=shown)
