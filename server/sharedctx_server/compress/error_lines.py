"""Which lines carry an error, and whether a compressed form kept all of them.

The per-line predicate reuses the Fit library's graded `error_indicator` (its vocabulary and
its negations: "no errors", "0 failed", "errors: 0" are not errors) and adds two rules of its
own:

- stack frame locations (`File "x.py", line 3`, `at f (x.js:1:2)`, `\tat a.B.c(B.java:9)`, Go's
  `\t/src/x.go:12`) are not error lines, although `error_indicator` counts them as error
  evidence for a whole entry: a frame says where, not what went wrong, and a trace compressor
  must be free to elide the middle frames;
- failed assertions that name no error word (pytest's `E       assert 3 == 4` detail lines,
  `AssertionError [ERR_ASSERTION]`, C's `Assertion 'x' failed`) are error lines.

Inside JSON a "line" is also delimited by `\\n` escapes: a string holding a README or a log
has lines of its own, and those are what a shortened string keeps (`escaped_newlines=True`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sharedctx_server.fit import error_indicator

from .whitespace import collapse_ws

__all__ = [
    "ErrorMemo",
    "carries_error",
    "line_has_error",
    "line_has_warning",
    "missing_error_lines",
    "split_units",
]

# Frame locations as they read with whitespace collapsed (Go's tab-indented file lines too).
_FRAME_LOCATION = re.compile(
    r'^File "[^"\n]+", line \d+'
    r"|^at [\w$.<>/\[\]-]+\([^()\n]*\)(?: in \S.*)?$"
    r"|^at (?:async )?(?:new )?(?:[^\s()]+ )?\(?(?:[^()\s]+:\d+(?::\d+)?|native|<anonymous>)\)?$"
    r"|^\S+\.go:\d+(?: \+0x[0-9a-f]+)?$"
)
# pytest's "E   " detail lines (column 0), AssertionError, C's "Assertion `x' failed".
_FAILED_ASSERTION = re.compile(r"^E \S|\bAssertionError\b|\b[Aa]ssertion\b.*\bfailed\b")
_WARNING = re.compile(r"\bwarn(?:ing|ings|ed)?\b|\w+Warning\b|\bdeprecated\b", re.IGNORECASE)
_NO_WARNING = re.compile(r"\b(?:no|0|zero)\s+warnings?\b", re.IGNORECASE)
_UNIT_BREAK = re.compile(r"\n|\\n")


def line_has_error(line: str) -> bool:
    """Whether a line carries an error indicator (error words, exception names, failed asserts)."""
    # Judged with whitespace collapsed, so a line reads the same before and after normalisation.
    text = collapse_ws(line)
    if _FRAME_LOCATION.match(text):
        return False
    if _FAILED_ASSERTION.search(text):
        return True
    return error_indicator(text) > 0.0


def line_has_warning(line: str) -> bool:
    """Whether one line is a warning (kept with context by the log compressor)."""
    return _WARNING.search(line) is not None and _NO_WARNING.search(line) is None


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
    return any(is_error(u) for u in split_units(text, escaped_newlines=escaped_newlines))


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
            answer = self._seen[key] = line_has_error(key)
        return answer


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
    kept = {collapse_ws(u) for u in split_units(compressed, escaped_newlines=escaped_newlines)}
    return [
        unit
        for unit in split_units(original, escaped_newlines=escaped_newlines)
        if collapse_ws(unit) not in kept and is_error(unit)
    ]
