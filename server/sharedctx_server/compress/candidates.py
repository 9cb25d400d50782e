"""Which compressors compete for a content, and why (or why not).

- JSON (an array or object) is only ever compressed as JSON: any other form would not parse;
  so is a document after a few lines that are not JSON (warnings on stderr), which stay.
- Each structural compressor (listing, table, diff, blame, tests, source, markup) reads the content
  and says what share of its non-blank lines it understood; it competes when that share
  reaches `structural_min_share` (`prose_structural_min_share` for messages and notes, which
  markup never compresses: what people wrote stays as written).
- The generic compressor that `detect` names (log, stacktrace or text) competes too, unless a
  structural one understood at least `generic_skip_share` of the lines.

Every plan is decided by the content's features alone (kind and tool are hints the detectors
read), so the same content always meets the same competitors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .blame import plan_blame
from .detect import detect_lines, is_settings
from .diagnostics import plan_diagnostics
from .diff import plan_diff
from .error_lines import JudgedLines
from .grep import plan_grep
from .json_compress import compress_json, looks_like_json
from .listing import plan_listing
from .log import compress_log
from .markup import plan_markup
from .outline import plan_source
from .plan import Attempt, CompressorName, Plan
from .source import Source
from .stacktrace import compress_stacktrace
from .status import plan_status
from .table import plan_table
from .testreport import plan_tests
from .wording import counted
from .yaml_doc import plan_yaml

__all__ = ["Skipped", "candidates", "generic_plan"]

_STRUCTURAL: tuple[Callable[[Source], Plan | None], ...] = (
    plan_listing,
    plan_table,
    plan_diff,
    plan_status,
    plan_blame,
    plan_grep,
    plan_diagnostics,
    plan_yaml,
    plan_tests,
    plan_source,
    plan_markup,
)
# Output of programs, line by line: what the generic compressor of such content would be is
# the log compressor, the one worth skipping. For blame it would also be wrong: it folds
# lines of code that differ only in their words (masked as a log's varying names) into
# `[... 27 similar lines]`; the blame form keeps every line, at about three times the
# tokens of the log compressor's on a 380-line file.
# For search results the log compressor would be wrong too: each line is a match the search
# asked for, and its sizer kept 7 of `git grep -C2`'s 53 matches.
_LINE_STRUCTURES = frozenset(
    {
        "listing",
        "table",
        "diff",
        "status",
        "blame",
        "grep",
        "diagnostics",
        "yaml",
        "tests",
        "source",
    }
)
# Structures whose compressor promises to keep parts whole: when it saves nothing, the log
# compressor does not run after all, since its sizer would cut them (a short pytest report
# whose passing tests fit on a few lines of dots is its failures; the log compressor cut
# their tracebacks for 44%). The stack trace compressor may: it trims only the middle frames
# of long traces (cargo's backtraces through the standard library).
_KEPT_WHOLE = {
    "tests": "a test report's failures stay whole (its sizer would cut them)",
    # Its paths are what a status is read for: it folded 29 staged files into a count.
    "status": "a status's paths stay (its sizer would fold them into counts)",
    # Its similar lines differ in their values: it folded a NetworkPolicy's ports away.
    "yaml": "a YAML document's values stay (it would fold lines that differ only in them)",
    # A header or a stub is all declarations: the outline saves little, and the log
    # compressor's sizer, smaller, left out 54% of matplotlib's figure.pyi and the most of
    # string.h (see candidates below).
    "source": "a source file's signatures and declarations stay (its sizer would cut them)",
}
# A line structure that reads this much less of the lines than one that reads at least
# generic_skip_share of them does not compete with it.
_PARTIAL_READ = 0.1
# People's own words: markup there is what they wrote, not boilerplate around it.
_SPOKEN_KINDS = frozenset({"message", "note"})


@dataclass(frozen=True)
class Skipped:
    """A compressor that recognised something but did not compete, and why."""

    name: CompressorName
    share: float
    reason: str
    # The generic compressor stepping aside: it runs after all if the structural one that
    # understood the lines saves nothing, unless it is the log compressor and the content
    # has parts that stay whole (`kept_whole` says which), which its sizer would cut.
    fallback: bool = False
    kept_whole: str = ""


def _json(source: Source) -> Plan:
    profile = source.config.profile_for(source.tool_name)

    def run() -> Attempt:
        # Every line of the document is judged once (source.judged_json): the items, the long
        # strings and the final check in choose.py read those answers.
        text = compress_json(source.content, profile, source.config, source.judged_json)
        return Attempt(text, ("items of large arrays and long strings, each marked in place",))

    return Plan("json", 1.0, "a JSON document", run)


# At most this many lines that are not JSON may come before a JSON document that is then
# compressed as one.
_PREAMBLE_LINES = 3


def json_after_preamble(content: str) -> int:
    """Where a JSON array or object starts in `content` after up to _PREAMBLE_LINES lines
    that are not JSON (a tool's warnings printed before its `--format json` output, `2>&1`);
    0 when it does not."""
    if _opens_json(content, 0):
        return 0
    at = 0
    for _ in range(_PREAMBLE_LINES):
        newline = content.find("\n", at)
        if newline < 0:
            return 0
        at = newline + 1
        # The bracket first, without copying the text: this runs on every Put.
        if _opens_json(content, at) and looks_like_json(content[at:]):
            return at
    return 0


_BLANK = re.compile(r"\s*")


def _opens_json(content: str, at: int) -> bool:
    """Whether the first non-blank character from `at` opens a JSON array or object."""
    start = _BLANK.match(content, at)
    first = start.end() if start else at
    return content[first : first + 1] in ("{", "[")


def _json_after(source: Source, at: int) -> Plan:
    profile = source.config.profile_for(source.tool_name)
    head, document = source.content[:at], source.content[at:]
    judged = JudgedLines(document, source.is_error, escaped_newlines=True)

    def run() -> Attempt:
        text = compress_json(document, profile, source.config, judged)
        return Attempt(
            head + text,
            ("items of large arrays and long strings, each marked in place",),
        )

    lines = head.count("\n")
    verb = "is" if lines == 1 else "are"
    reason = f"a JSON document after {counted(lines, 'line')} that {verb} not JSON"
    return Plan("json", 1.0, reason, run, json_at=at)


def generic_plan(source: Source) -> Plan:
    """The generic compressor `detect` names for the content: log, stacktrace or text."""
    config = source.config
    # Numbered lines (`cat -n`) are what follows their numbers: a source file read as a log
    # (a number, then anything) lost its signatures to the log compressor's folding.
    lines = source.read_lines
    frames = source.frames if lines is source.lines else None
    name = detect_lines(lines, source.kind, source.tool_name, config, frames)
    if name == "log" and is_settings(lines, source.kind):
        name = "text"
    if name == "stacktrace":
        return Plan(
            "stacktrace",
            1.0,
            "stack traces make up most of it",
            lambda: Attempt(
                "\n".join(compress_stacktrace(source.lines, source.errors, config, source.frames)),
                ("the middle frames of long traces",),
            ),
        )
    if name == "log":
        profile = config.profile_for(source.tool_name)
        return Plan(
            "log",
            1.0,
            "line-oriented output",
            lambda: Attempt(
                "\n".join(
                    compress_log(source.lines, source.errors, profile, config, source.frames)
                ),
                ("runs of similar lines (counted)", "lines beyond the sizer's number"),
            ),
        )
    # Prose is only ever whitespace-normalised, and short prose not even that; so is a file
    # of settings, line output whose every value is what it is read for.
    short = len(source.content) < config.prose_min_chars
    text = source.content if short else "\n".join(source.lines)
    return Plan("text", 1.0, "prose or other text", lambda: Attempt(text, ("extra whitespace",)))


def candidates(source: Source, generic: bool = True) -> tuple[list[Plan], list[Skipped]]:
    """The plans that compete for `source`, and the compressors that were left out (the
    generic one too when `generic` is False)."""
    if looks_like_json(source.content):
        return [_json(source)], []
    at = json_after_preamble(source.content)
    if at:
        return [_json_after(source, at)], []
    config = source.config
    spoken = source.kind in _SPOKEN_KINDS
    floor = config.prose_structural_min_share if spoken else config.structural_min_share
    plans: list[Plan] = []
    skipped: list[Skipped] = []
    for make in _STRUCTURAL:
        plan = make(source)
        if plan is None:
            continue
        if spoken and plan.name == "markup":
            skipped.append(Skipped(plan.name, plan.share, "a message or note stays as written"))
        elif plan.share < floor:
            why = f"understood {plan.share:.0%} of the lines, under the {floor:.0%} it needs"
            skipped.append(Skipped(plan.name, plan.share, why))
        else:
            plans.append(plan)
    if not generic:
        return plans, skipped
    best = max(
        (p for p in plans if p.name in _LINE_STRUCTURES), key=lambda p: p.share, default=None
    )
    if best is not None and best.share >= config.generic_skip_share:
        # Content one structure reads (nearly) whole is that structure: another that reads
        # far less of it reads a part as something else (a diff's changed code as source,
        # which outlined a `diff -ru` into 4 of its 20 file headers).
        for plan in [p for p in plans if p.name in _LINE_STRUCTURES]:
            if plan.share < best.share - _PARTIAL_READ:
                plans.remove(plan)
                why = f"{best.name} read {best.share:.0%} of the lines, this {plan.share:.0%}"
                skipped.append(Skipped(plan.name, plan.share, why))
        # Nor is it a Markdown document, whatever share markup reads: YAML's `# comments`
        # read as headings, and the markup form dropped a manifest's `<placeholders>` as tags.
        for plan in [p for p in plans if p.name == "markup"]:
            plans.remove(plan)
            why = f"{best.name} read {best.share:.0%} of the lines: not a Markdown document"
            skipped.append(Skipped(plan.name, plan.share, why))
        # Named "log" without running detect (which would normalise every line for nothing):
        # content this structured is line-oriented output.
        why = f"the generic line compressor: {best.name} understood {best.share:.0%} of the lines"
        whole = _KEPT_WHOLE.get(best.name, "")
        skipped.append(Skipped("log", 0.0, why, fallback=True, kept_whole=whole))
    else:
        named = generic_plan(source)
        if named.name == "log" and any(p.name == "source" for p in plans):
            # Read as source (at least structural_min_share of its lines; logs and test
            # output read at most 0.4 here), it is not line output to be sized: the log
            # compressor steps aside as it does for a structure that reads it whole.
            why = "the generic line compressor: the lines read as source"
            skipped.append(
                Skipped("log", 0.0, why, fallback=True, kept_whole=_KEPT_WHOLE["source"])
            )
        else:
            plans.append(named)
    return plans, skipped
