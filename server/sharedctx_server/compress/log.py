"""Line-oriented output: collapse runs of similar lines, then cap the lines with the sizer.

1. Long stack traces inside the output lose their middle frames (see stacktrace).
2. A run of `min_run` or more consecutive lines whose masked SimHashes (numbers, ids, times
   and file paths masked, and the words that vary between lines of one shape: see
   masking.line_keys) each stay within `similar_distance` of one of the run's templates
   becomes: the templates, `[... N similar lines]`, the last line (a marker in the place of
   each stretch of the others, so that the order reads true). The templates are the
   lines of the run's first `run_period` that resemble no earlier line of it: one for a run
   of alike lines, two for a log that alternates two kinds of lines, and so on; a run must
   repeat them at least twice. Error lines only join a run when they are one of its
   templates verbatim.
3. If the adaptive sizer (over the masked lines, the tool's profile) says fewer lines carry the
   information, keep: every error and warning line with `context_lines` around it and the
   line that opens its block (the pod, commit, folder or section it is part of: without it,
   a pod's `OOMKilled` read as the previous pod's), kept trace frames, pytest's `>` lines
   (where a failing test went wrong), what explains a failure (a test's `Expected:` and
   `Received:` lines, a compiler's labelled carets such as rustc's `^^^ expected i64, found
   u64`, the source line they point into and its `help:`), a run's summary (two or more
   counts of outcomes: `Plan: 15 to add, 10 to change, 2 to destroy.`), what `curl -v` sent
   and got back (never folded into a run either), the first and last lines, then the most
   distinct of the rest; each left-out stretch becomes `[... N lines omitted]`, N counted in
   input lines.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit import SizerProfile

from .blocks import block_openers
from .config import CompressConfig
from .error_lines import warning_flags
from .frames import Frame
from .markers import lines_marker, similar_marker
from .masking import line_keys
from .outliers import standing_out
from .select import fingerprints, pick_distinct
from .shapes import ASSERTED_VALUE, PLANNED_ACTION, RUNNER_STAMP, SOURCE_GUTTER
from .sizer import optimal_k
from .stacktrace import Piece, elide_frames
from .whitespace import collapse_ws

__all__ = ["compress_log"]


# Not frozen: one is made per line, and a frozen dataclass takes four times as long to make.
@dataclass(slots=True)
class _Unit:
    """Output lines for `span` input lines; `index` is the record whose line stands for them."""

    lines: tuple[str, ...]
    span: int
    index: int
    notable: bool  # an error or warning line: kept, with context
    pinned: bool  # kept whatever the sizer says (trace frames)
    finding: bool = False  # a linter's finding (_FINDING): kept first of what the sizer keeps


# Not frozen: one is made per line, and a frozen dataclass takes four times as long to make.
@dataclass(slots=True)
class _Record:
    line: str
    span: int
    error: bool
    frame: bool
    marker: bool
    warning: bool = False  # a warning line that is not an error line
    at: int = 0  # its first input line
    exchange: bool = False  # what `curl -v` sent or got back (_EXCHANGE)

    @property
    def notable(self) -> bool:
        """An error or warning line (error_lines.notable, judged once per record)."""
        return self.error or self.warning


def _records(pieces: list[Piece], errors: list[bool]) -> list[_Record]:
    records: list[_Record] = []
    pos = 0
    warnings = warning_flags([piece.lines[0] for piece in pieces])
    for piece, warned in zip(pieces, warnings, strict=True):
        single = piece.span == 1
        # A multi-line span is a frames marker: the frames it stands for carried no error.
        error = single and errors[pos]
        line = piece.lines[0]
        warning = single and not error and warned
        # Only `<` and `>` start an exchange: most lines are told by their first character.
        exchange = single and line[:1] in "<>" and _EXCHANGE.match(line) is not None
        records.append(
            _Record(line, piece.span, error, piece.frame, not single, warning, pos, exchange)
        )
        pos += piece.span
    return records


# A count of outcomes, `15 to add`, `3 failed`, `changed=2`: a line with two or more of them is
# a run's summary (terraform's `Plan: 15 to add, 10 to change, 2 to destroy.`, a test run's
# `3 failed, 7 passed`, ansible's recap), which a reader looks for first, wherever it is.
_OUTCOME_COUNT = re.compile(
    r"\b\d+ (?:to )?(?:add|change|destroy|import|passed|failed|skipped|errors?|warnings?"
    r"|added|changed|destroyed|created|updated|deleted|removed|installed|upgraded|ignored"
    r"|deselected|xfailed|xpassed|succeeded|total)\b"
    r"|\b(?:ok|changed|unreachable|failed|skipped|rescued|ignored)=\d+"
)


# What a terraform plan will do to each resource (shapes.PLANNED_ACTION): the plan's contents,
# one line per resource, kept like its summary (a 400-line plan had kept 1 of its 15, the
# resources' attribute lines without their owners).
_RESOURCE_ACTION = re.compile(PLANNED_ACTION)


def _is_summary(line: str) -> bool:
    found = _OUTCOME_COUNT.search(line)
    return found is not None and _OUTCOME_COUNT.search(line, found.end()) is not None


# What `curl -v` sent and what came back (`> GET /x HTTP/1.1`, `< HTTP/1.1 404 Not Found`): the
# lines a reader of it looks for, among headers that look alike; a 404 is no error line.
_EXCHANGE = re.compile(
    r"^[<>] (?:HTTP/\d(?:\.\d)? \d{3}\b|(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ HTTP/)"
)


# What explains an error without saying "error": a test's expected and actual values (after a
# CI runner's timestamp, if any), a compiler's or linter's labelled carets under the source it
# quotes (`  |     ^^^ expected `i64`, found `u64``; bare carets say nothing by themselves),
# the numbered source line they point into (`4 |     v.iter().sum()`) and the suggested fix
# (`help: try using a conversion method`, `= help: ...`). Kept up to _EXPLAINS_REACH records
# after an error line: a diagnostic's quoted source and a failed test's values follow it
# closely; warnings' carets are left to the sizer.
_EXPLAINS_REACH = 16
_EXPLAINS = re.compile(
    rf"^(?:{RUNNER_STAMP})?\s*(?:{ASSERTED_VALUE}\s*\S|{SOURCE_GUTTER}[\s|]*[\^~-]+\s+\S"
    r"|\d+\s*\|\s*\S|(?:= )?help: )"
)


# A linter's finding: its rule's code, after the place it found it or first on the line
# (ruff's `E501 Line too long (102 > 100)`, flake8's and pylint's `app.py:3:1: F401 ...`), and
# where it is (`  --> tests/test_x.py:34:101`) on the line after. What the run was for: they
# go before the other lines the sizer keeps (it had kept 2 of a run's 5 and the source quoted
# under them). A code followed by a digit is no rule (glog's `I0612 10:22:01.5`), nor
# is a checksum's name (`SHA256: 3f...`).
_FINDING = re.compile(r"^\s*(?:\S+:\d+(?::\d+)?:\s*)?(?!SHA\d|MD\d)[A-Z]{1,4}\d{2,4}:?\s+[^\d\s]")
_FOUND_AT = re.compile(r"^\s*--> \S+:\d+")
# Findings kept whatever the sizer says (the most distinct first); beyond, as many as it keeps.
_FINDINGS_KEPT = 24


def _run_end(
    records: list[_Record], prints: list[int], i: int, config: CompressConfig
) -> tuple[int, list[int]]:
    """Where the run starting at `i` ends, and its templates: the lines of its first
    `run_period` that no earlier line of it resembles (one for a plain run, two for A B A B)."""
    first = records[i]
    templates = [i]
    if first.frame or first.marker or first.exchange:
        return i + 1, templates
    j = i + 1
    n = len(records)
    distance = config.similar_distance
    while j < n:
        rec = records[j]
        if rec.frame or rec.marker or rec.exchange:
            break
        print_j = prints[j]
        near = [t for t in templates if (prints[t] ^ print_j).bit_count() <= distance]
        if not near:
            if j - i >= config.run_period:
                break
            templates.append(j)  # a new shape, still within the run's first period
        elif rec.notable and all(
            collapse_ws(rec.line) != collapse_ws(records[t].line) for t in near
        ):
            break  # a different error or warning line is never folded into a count
        j += 1
    return j, templates


# pytest marks the source line where a test failed with `>` and explains it with `E` lines
# below; a failure raised calls down has one `>` line per call, far from the `E` lines.
_FAILING_SOURCE = "> "
_EXPLANATION = "E "
_EXPLANATION_REACH = 40


def _failing_source_lines(records: list[_Record]) -> set[int]:
    """Records that are pytest `>` lines with `E` lines after them: where a failing test went
    wrong, kept like trace frames (the `E` lines are error lines, kept anyway)."""
    explained = [i for i, r in enumerate(records) if r.line.startswith(_EXPLANATION)]
    out: set[int] = set()
    for i, record in enumerate(records):
        if record.line.startswith(_FAILING_SOURCE):
            at = bisect.bisect_right(explained, i)
            if at < len(explained) and explained[at] - i <= _EXPLANATION_REACH:
                out.add(i)
    return out


def _run_lines(records: list[_Record], i: int, j: int, shown: set[int]) -> tuple[str, ...]:
    """A folded run of records[i:j]: the lines `shown` (its templates, its last line, those
    whose numbers stand out) where they stand, each stretch of the others as one
    `[... N similar lines]` in its place (a template that is not the run's next line must
    not read as if the lines before it were not there)."""
    lines: list[str] = []
    gap = 0
    for k in range(i, j):
        if k not in shown:
            gap += 1
            continue
        if gap:
            lines.append(similar_marker(gap))
            gap = 0
        lines.append(records[k].line)
    return tuple(lines)


def _outliers(
    prints: npt.NDArray[np.uint64], i: int, j: int, templates: list[int], records: list[_Record]
) -> list[int]:
    """The records of the run records[i:j] whose numbers stand out among the lines of their
    template (outliers.py): each line is of the template its fingerprint is nearest to (the
    first of them on a tie)."""
    if len(templates) == 1:
        groups = [0] * (j - i)  # most runs: one template, nothing to choose
    else:
        distances = np.bitwise_count(prints[i:j, None] ^ prints[templates][None, :])
        groups = distances.argmin(axis=1).tolist()
    return [i + k for k in standing_out([r.line for r in records[i:j]], groups)]


def _collapse_runs(
    records: list[_Record], prints: npt.NDArray[np.uint64], config: CompressConfig
) -> list[_Unit]:
    units: list[_Unit] = []
    plain = prints.tolist()
    failing = _failing_source_lines(records)
    n = len(records)
    last_error = -_EXPLAINS_REACH - 1
    i = 0
    while i < n:
        first = records[i]
        j, templates = _run_end(records, plain, i, config)
        length = j - i
        # A run folds when it is long enough and repeats its templates at least twice.
        if length >= config.min_run and length >= 2 * len(templates) + 1:
            kept_with_context = any(records[t].notable for t in templates)
            lines = _run_lines(
                records, i, j, {*templates, j - 1, *_outliers(prints, i, j, templates, records)}
            )
            span = sum(r.span for r in records[i:j])
            units.append(_Unit(lines, span, i, kept_with_context, pinned=False))
            i = j
            continue
        # Too short to fold: keep this line and look for a run from the next one.
        kept_with_context = first.notable
        if first.error:
            last_error = i
        explains = i - last_error <= _EXPLAINS_REACH and _EXPLAINS.match(first.line) is not None
        pinned = (
            first.frame
            or i in failing
            or explains
            or _is_summary(first.line)
            or first.exchange
            or _RESOURCE_ACTION.match(first.line) is not None
        )
        finding = _FINDING.match(first.line) is not None
        units.append(_Unit((first.line,), first.span, i, kept_with_context, pinned, finding))
        i += 1
    return units


def _kept_findings(
    units: list[_Unit],
    records: list[_Record],
    prints: npt.NDArray[np.uint64],
    room: int,
    required: set[int],
) -> set[int]:
    """The linter's findings kept (with the line that says where each is): the most distinct,
    as many as `room` lines allow, and at least _FINDINGS_KEPT."""
    findings = [i for i, unit in enumerate(units) if unit.finding and i not in required]
    located = {
        i + 1
        for i in findings
        if i + 1 < len(units) and _FOUND_AT.match(records[units[i + 1].index].line)
    }
    per_finding = 2 if located else 1
    count = min(max(room // per_finding, _FINDINGS_KEPT), len(findings))
    kept = {findings[pick] for pick in pick_distinct(prints[findings], count, ())}
    return kept | {i + 1 for i in kept if i + 1 in located}


def _cap(
    lines: list[str],
    records: list[_Record],
    units: list[_Unit],
    prints: npt.NDArray[np.uint64],
    keys: list[str],
    profile: SizerProfile,
    config: CompressConfig,
) -> list[_Unit]:
    n = len(units)
    unit_prints = prints[[u.index for u in units]]
    k = optimal_k([keys[u.index] for u in units], unit_prints, profile)
    if k >= n:
        return units
    required: set[int] = set(range(min(n, config.head_lines)))
    required.update(range(max(0, n - config.tail_lines), n))
    # Only now that lines will be left out: which lines open a block, so that an error line
    # keeps the one it is part of.
    opens = block_openers(lines)
    head = -1  # the unit of the line that opens the current block
    for i, unit in enumerate(units):
        record = records[unit.index]
        if len(unit.lines) == 1 and record.span == 1 and opens[record.at]:
            head = i
        if unit.pinned:
            required.add(i)
        if unit.notable:
            lo, hi = max(0, i - config.context_lines), min(n, i + config.context_lines + 1)
            required.update(range(lo, hi))
            if head >= 0:
                required.add(head)
    required |= _kept_findings(units, records, unit_prints, max(k - len(required), 0), required)
    kept = set(pick_distinct(unit_prints, k, required))
    out: list[_Unit] = []
    i = 0
    while i < n:
        if i in kept:
            out.append(units[i])
            i += 1
            continue
        run = i
        while i < n and i not in kept:
            i += 1
        span = sum(u.span for u in units[run:i])
        out.append(_Unit((lines_marker(span),), span, units[run].index, False, False))
    return out


def compress_log(
    lines: list[str],
    errors: list[bool],
    profile: SizerProfile,
    config: CompressConfig,
    frames: list[Frame] | None = None,
) -> list[str]:
    """Normalised `lines` (with per-line error flags) compressed as line-oriented output
    (`frames`: their stack frames, when the caller has found them already)."""
    records = _records(elide_frames(lines, errors, config, frames), errors)
    keys = line_keys([r.line for r in records])
    prints = fingerprints(keys)
    units = _collapse_runs(records, prints, config)
    units = _cap(lines, records, units, prints, keys, profile, config)
    return [line for unit in units for line in unit.lines]
