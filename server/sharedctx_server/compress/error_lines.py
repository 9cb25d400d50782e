"""Which lines carry an error, and whether a compressed form kept all of them.

The per-line predicate reuses the Fit library's graded `error_indicator` (its vocabulary and
its negations: "no errors", "0 failed", "errors: 0" are not errors) and adds two rules of its
own:

- stack frame locations (`File "x.py", line 3`, `at f (x.js:1:2)`, `\tat a.B.c(B.java:9)`, Go's
  `\t/src/x.go:12`) are not error lines, although `error_indicator` counts them as error
  evidence for a whole entry: a frame says where, not what went wrong, and a trace compressor
  must be free to elide the middle frames;
- strace's `= -1 ENOENT (No such file or directory)` is not an error line either (a program
  probing for files), although `error_indicator` counts it;
- failed assertions that name no error word (pytest's `E       assert 3 == 4` detail lines,
  `AssertionError [ERR_ASSERTION]`, C's `Assertion 'x' failed`) are error lines.

Inside JSON a "line" is also delimited by `\\n` escapes: a string holding a README or a log
has lines of its own, and those are what a shortened string keeps (`escaped_newlines=True`).

Judging every line costs tens of microseconds (the graded indicator runs several patterns),
which over a 1 MiB output is most of a Put. `error_flags` first scans the whole text once for
the words and shapes any error line must contain (a superset of what the predicate looks for)
and runs the predicate only on the lines the scan points at. `JudgedLines` holds one content's
lines so judged, once, for every question the compressors and the final check ask of them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from itertools import accumulate

from sharedctx_server.fit import has_error_evidence

from .whitespace import collapse_ws

__all__ = [
    "ErrorMemo",
    "JudgedLines",
    "carries_error",
    "error_flags",
    "line_has_error",
    "line_has_warning",
    "missing_error_lines",
    "notable",
    "split_units",
    "warning_flags",
]

# Frame locations as they read with whitespace collapsed (Go's tab-indented file lines too):
# the collapsed forms of frames.py's frame lines, which are matched as written.
_FRAME_LOCATION = re.compile(
    r'^File "[^"\n]+", line \d+'
    r"|^at [\w$.<>/\[\]-]+\([^()\n]*\)(?: in \S.*)?$"
    r"|^at (?:async )?(?:new )?(?:[^\s()]+ )?\(?(?:[^()\s]+:\d+(?::\d+)?|native|<anonymous>)\)?$"
    r"|^\S+\.go:\d+(?: \+0x[0-9a-f]+)?$"
)
# strace's result of a call that found no file (`openat(...) = -1 ENOENT (No such file or
# directory)`): a program looking in several places, which a Python start does hundreds of
# times; error evidence for Fit (which paths did it try?), but no line a compressed form must
# keep (it tripled one strace's).
_PROBED = re.compile(r"= -1 ENOENT \(No such file or directory\)")
# pytest's "E   " detail lines (column 0), AssertionError, C's "Assertion `x' failed".
_FAILED_ASSERTION = re.compile(r"^E \S|\bAssertionError\b|\b[Aa]ssertion\b.*\bfailed\b")
# Warnings (apt's `W: ...` too), and what a reviewer of a plan must not miss: terraform's
# resources that `will be destroyed` or `must be replaced` (and the attribute that `forces
# replacement`).
_WARNING = re.compile(
    r"\bwarn(?:ing|ings|ed)?\b|\w+Warning\b|\bdeprecated\b|^\s*W:\s"
    r"|\bwill be destroyed\b|\bmust be replaced\b|#\s*forces replacement\b",
    re.IGNORECASE,
)
_NO_WARNING = re.compile(r"\b(?:no|0|zero)\s+warnings?\b", re.IGNORECASE)
_UNIT_BREAK = re.compile(r"\n|\\n")
_NEWLINE = re.compile(r"\n")

# Below this many lines the scan costs more than asking the predicate about each line.
_SCAN_MIN_UNITS = 4

# Substrings (of the lowercased text) at least one of which every error line contains: the
# vocabulary of `error_indicator`'s signals and of _FAILED_ASSERTION, each cut to a stem.
# Not derived from fit's _CUES: its loose cues ("at ", "rc", "code") flag 2.6x the lines.
_NEEDLES = (
    "err",
    "exception",
    "fault",
    "panic",
    "fail",
    "fatal",
    "crit",
    "severe",
    "crash",
    "abort",
    "traceback",
    "denied",
    "refused",
    "unhandled",
    "uncaught",
    "killed",
    "sigsegv",
    "sigabrt",
    "sigkill",
    "exit",
    "goroutine",
    "unavailable",
    "gateway",
    "assert",
    "undefined reference",  # the linker's
    "no such file",
    "not found",  # `command not found`, ldd's `=> not found`
    "not permitted",
    "no rule to make",
    "cannot ",
    "column",  # a parser's `Expecting ',' delimiter: line 1 column 21 (char 20)`
    "alert",  # a structured log's level field (`"level": "alert"`, `level=emerg`)
    "emerg",
    # An escape sequence: the predicate reads a line without its colour codes, so a shape
    # that must start the line (`E0001:`, `error:`) may follow one (`\x1b[31merror: ...`).
    "\x1b",
)
# The rest of the vocabulary: phrases whose words a tab or double space may separate, each
# with a literal it needs (a line without it is not searched), and the shapes anchored at a
# line start (`npm ` may come first, as fit.error_signal's label signal allows).
_PHRASE_PATTERNS = (
    ("timed", r"timed\s+out"),
    ("caused", r"caused\s+by"),
    ("memory", r"out\s+of\s+memory"),
    ("dumped", r"core\s+dumped"),
    ("overflow", r"stack\s+overflow"),
    ("code", r"return\s*code"),
    ("segmentation", r"segmentation\s+fault"),
    ('"', r'file\s+"'),
    ("rc", r"rc\s*[:=]?\s*-?\d"),
    ("5", r"(?:status|http|response|code)\S*\s*[:=]?\s*5\d\d"),
    ('"level"', r'"level"\s*:\s*[56]0'),  # pino's numeric error and fatal levels
)
_LINE_START_SHAPES = r"at\s|\d+:\s+0x|(?:npm\s+)?(?:e\d{3,5}:|e:\s)|e\s"
# For a whole text scanned at once (it starts with a newline, so "\n" anchors a line start).
# Each pattern starts with a literal, which the regex engine finds at C speed.
_SHAPES = (
    *(re.compile(pattern) for _, pattern in _PHRASE_PATTERNS),
    # Only the newline is matched (the rest looks ahead): were the match to run on into the
    # next line ("\ne\n" for a bare "E" line), that line would never be scanned.
    re.compile(r"\n(?=[ \t]*(?:" + _LINE_START_SHAPES + "))"),
)


def line_has_error(line: str) -> bool:
    """Whether a line carries an error indicator (error words, exception names, failed asserts)."""
    # Judged with whitespace collapsed, so a line reads the same before and after normalisation.
    text = collapse_ws(line)
    if _FRAME_LOCATION.match(text) or _PROBED.search(text):
        return False
    if _FAILED_ASSERTION.search(text):
        return True
    return has_error_evidence(text)  # error_indicator(text) > 0, without its grade


# Every match of _WARNING contains one of these (lowercased); most lines contain none.
_WARNING_CUES = ("warn", "deprecated", "w:", "destroyed", "replace")


def line_has_warning(line: str) -> bool:
    """Whether one line is a warning (kept with context by the log compressor)."""
    lowered = line.lower()
    if not any(cue in lowered for cue in _WARNING_CUES):
        return False
    return _is_warning(line)


def _is_warning(line: str) -> bool:
    return _WARNING.search(line) is not None and _NO_WARNING.search(line) is None


def warning_flags(lines: Sequence[str]) -> list[bool]:
    """`line_has_warning` of every line, the cues sought in one scan of the whole text (a
    log of many short lines had spent more on asking each line than on compressing it)."""
    flags = [False] * len(lines)
    for i in _Scan(lines).units_with(_WARNING_CUES):
        flags[i] = _is_warning(lines[i])
    return flags


def notable(line: str, is_error_line: bool) -> bool:
    """Whether the line compressors keep `line` with the lines around it: it is an error line
    (`is_error_line`, judged already) or a warning."""
    return is_error_line or line_has_warning(line)


def _may_be_error(line: str) -> bool:
    """The scan of `_maybe_error` for one line: False means the line carries no error.

    Each regex runs only when a literal it needs is there (most short lines hold none).
    """
    lowered = line.lower()
    if any(n in lowered for n in _NEEDLES):
        return True
    head = lowered.lstrip(" \t")
    if head[:1] in ("a", "e", "n") or head[:1].isdigit():
        if _LINE_START.match(head):
            return True
    return any(literal in lowered and shape.search(lowered) for literal, shape in _PHRASES)


# For one line (its indentation stripped): the line-start shapes, and each phrase with its
# literal.
_LINE_START = re.compile(_LINE_START_SHAPES)
_PHRASES = tuple((literal, re.compile(pattern)) for literal, pattern in _PHRASE_PATTERNS)


def _maybe_error(units: Sequence[str]) -> set[int]:
    """Indices of the units that may carry an error: a superset of those that do."""
    scan = _Scan(units)
    found = scan.units_with(_NEEDLES)
    text = scan.text
    for shape in _SHAPES:
        found |= scan.units_at(m.start() + (text[m.start()] == "\n") for m in shape.finditer(text))
    return found


class _Scan:
    """Units lowercased and joined, each after a newline: literals are sought in the whole
    text at C speed, then each hit is mapped back to the unit it falls in."""

    def __init__(self, units: Sequence[str]) -> None:
        lowered = [u.lower() for u in units]  # lowercasing may change a unit's length
        self.starts: list[int] = []
        at = 1
        for unit in lowered:
            self.starts.append(at)
            at += len(unit) + 1
        self.text = "\n" + "\n".join(lowered)

    def units_with(self, needles: Iterable[str]) -> set[int]:
        """The units holding one of the (lowercase) `needles`."""
        hits: set[int] = set()
        text = self.text
        for needle in needles:
            at = text.find(needle)
            while at >= 0:
                hits.add(at)
                at = text.find(needle, at + 1)
        return self.units_at(hits)

    def units_at(self, offsets: Iterable[int]) -> set[int]:
        """The units the text's `offsets` fall in. A unit holding a newline of its own (never
        a line, but a JSON string may) is found by where its text starts, whatever it holds."""
        return {bisect_right(self.starts, at) - 1 for at in offsets if at >= 1}


def error_flags(
    units: Sequence[str], is_error: Callable[[str], bool] = line_has_error
) -> list[bool]:
    """`is_error` of every unit, asked only about units a cheap scan says may be errors."""
    if isinstance(is_error, ErrorMemo):
        return is_error.flags(units)
    flags = [False] * len(units)
    for i in _maybe_error(units):
        flags[i] = is_error(units[i])
    return flags


def split_units(text: str, *, escaped_newlines: bool = False) -> list[str]:
    """`text` cut into lines; with `escaped_newlines` also at `\\n` escapes (lines inside JSON)."""
    if escaped_newlines:
        return _UNIT_BREAK.split(text)
    return text.split("\n")


def carries_error(
    text: str,
    *,
    escaped_newlines: bool = False,
    is_error: Callable[[str], bool] = line_has_error,
) -> bool:
    """Whether any line of `text` carries an error indicator."""
    units = split_units(text, escaped_newlines=escaped_newlines)
    if len(units) < _SCAN_MIN_UNITS:
        return any(is_error(u) for u in units)
    return any(error_flags(units, is_error))


class ErrorMemo:
    """`line_has_error` with its answers remembered, for one compress() call.

    The predicate costs microseconds a line and a compressor, its JSON string shortener and
    the final check all ask about the same lines; repeated lines (the norm in logs) are free.
    """

    def __init__(self) -> None:
        self._seen: dict[str, bool] = {}

    def __call__(self, line: str) -> bool:
        key = collapse_ws(line)  # the predicate only sees the collapsed line anyway
        answer = self._seen.get(key)
        if answer is None:
            answer = self._seen[key] = _may_be_error(key) and line_has_error(key)
        return answer

    def notable(self, line: str) -> bool:
        """Whether `line` carries an error (remembered) or a warning: `notable` of it."""
        return notable(line, self(line))

    def flags(self, units: Sequence[str]) -> list[bool]:
        """The answer for every unit: one scan over those not judged yet, the predicate only
        where it points. A document judged whole first makes later questions about its
        lines (a JSON item, a long string's lines, the final check) free."""
        keys = [collapse_ws(u) for u in units]
        seen = self._seen
        fresh = [k for k in dict.fromkeys(keys) if k not in seen]
        if fresh:
            maybe = _maybe_error(fresh)
            for i, key in enumerate(fresh):
                seen[key] = i in maybe and line_has_error(key)
        return [seen[k] for k in keys]


def _collapsed_units(text: str, escaped_newlines: bool) -> set[str]:
    """The lines of `text` (split_units), whitespace collapsed: what an error line is sought in."""
    return {collapse_ws(u) for u in split_units(text, escaped_newlines=escaped_newlines)}


def missing_error_lines(
    original: str,
    compressed: str,
    *,
    escaped_newlines: bool = False,
    is_error: Callable[[str], bool] = line_has_error,
) -> list[str]:
    """Error lines of `original` that `compressed` lacks (lines compared up to collapsed spaces).

    `is_error` lets a caller that already judged the lines pass its memoised answers.
    """
    kept = _collapsed_units(compressed, escaped_newlines)
    units = split_units(original, escaped_newlines=escaped_newlines)
    return [
        unit
        for unit, error in zip(units, error_flags(units, is_error), strict=True)
        if error and collapse_ws(unit) not in kept
    ]


class JudgedLines:
    """A text cut into lines (with `escaped_newlines`, at `\\n` escapes too), each judged once.

    Every compressor of one content asks about the same lines: is this line of the content one
    of its error lines, does this span of a JSON document hold one, which error lines did a
    compressed form lose. The answers come from one judgement of every line (through the
    content's ErrorMemo, on first use); only a line a span cuts through is judged again, as
    the piece the span holds, which is what `carries_error` of that piece would judge.
    """

    def __init__(self, text: str, is_error: ErrorMemo, *, escaped_newlines: bool = False) -> None:
        self.text = text
        self.is_error = is_error
        self.escaped_newlines = escaped_newlines

    @cached_property
    def units(self) -> list[str]:
        """The lines, as `split_units` cuts them."""
        return split_units(self.text, escaped_newlines=self.escaped_newlines)

    @cached_property
    def flags(self) -> list[bool]:
        """Whether each of `units` carries an error indicator."""
        return self.is_error.flags(self.units)

    @cached_property
    def notable_flags(self) -> list[bool]:
        """Whether each of `units` is notable: an error line or a warning (`is_notable`)."""
        warnings = warning_flags(self.units)
        return [error or warning for error, warning in zip(self.flags, warnings, strict=True)]

    @cached_property
    def error_lines(self) -> list[str]:
        """The error lines in order, whitespace collapsed (as a compressed form is searched)."""
        return [collapse_ws(u) for u, e in zip(self.units, self.flags, strict=True) if e]

    @cached_property
    def _error_set(self) -> frozenset[str]:
        return frozenset(self.error_lines)

    def is_error_line(self, line: str) -> bool:
        """Whether `line` is one of the text's error lines, however its whitespace is written
        (as read, right-stripped or normalised: collapsed, those read the same)."""
        return bool(self._error_set) and collapse_ws(line) in self._error_set

    def is_notable(self, line: str) -> bool:
        """Whether `line` is one of the text's error lines or a warning (see `notable`)."""
        return notable(line, self.is_error_line(line))

    def lost(self, compressed: str) -> list[str]:
        """The error lines (collapsed) that `compressed` lacks, comparing lines collapsed: what
        `missing_error_lines` finds."""
        if not self.error_lines:
            return []
        kept = _collapsed_units(compressed, self.escaped_newlines)
        return [line for line in self.error_lines if line not in kept]

    @cached_property
    def _bounds(self) -> tuple[list[int], list[int]]:
        """Where each of `units` starts and ends in the text."""
        breaks = _UNIT_BREAK if self.escaped_newlines else _NEWLINE
        starts, ends = [0], []
        for m in breaks.finditer(self.text):
            ends.append(m.start())
            starts.append(m.end())
        ends.append(len(self.text))
        return starts, ends

    @cached_property
    def _errors_before(self) -> list[int]:
        """How many of the first i units carry an error, for every i."""
        return list(accumulate(self.flags, initial=0))

    def _judge(self, unit: int, start: int, end: int) -> bool:
        """Whether text[start:end], within line `unit`, carries an error (read off the flags
        when it is the whole line)."""
        starts, ends = self._bounds
        if start == starts[unit] and end == ends[unit]:
            return self.flags[unit]
        return self.is_error(self.text[start:end])

    def is_error_at(self, start: int, end: int) -> bool:
        """Whether text[start:end], read as one line, carries an error indicator."""
        unit = bisect_right(self._bounds[0], start) - 1
        return self._judge(unit, start, end)

    def carries_error(self, start: int, end: int) -> bool:
        """`carries_error(text[start:end])`, cutting lines as this text does: the lines the
        span holds whole are read off the flags."""
        starts, ends = self._bounds
        first = bisect_right(starts, start) - 1
        last = bisect_right(starts, end) - 1
        if start > ends[first] or end > ends[last]:
            # The span starts or ends inside a two-character `\n` escape: no JSON item or
            # line does, so this is judged the plain way.
            piece = self.text[start:end]
            return carries_error(
                piece, escaped_newlines=self.escaped_newlines, is_error=self.is_error
            )
        if first == last:
            return self._judge(first, start, end)
        if self._judge(first, start, ends[first]) or self._judge(last, starts[last], end):
            return True
        return self._errors_before[last] > self._errors_before[first + 1]
