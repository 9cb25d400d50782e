"""Where a log's or a line-oriented tool output's records begin (docs/excerpts.md).

A line starts a record unless it continues the one before: indented lines, blank lines,
traceback headers, stack frames and the exception line that ends a traceback belong to the
record before them; a pytest failure block, a rustc diagnostic with the source it quotes, a
Go crash's goroutines, a Rust panic with its backtrace and what `curl -v` sent and got back
are read as the tools print them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..compress.shapes import ASSERTED_VALUE, CLOCK_STAMP, RUNNER_STAMP, SOURCE_GUTTER

__all__ = ["CAUSE", "PYTEST_EXPLAINED", "PYTEST_SOURCE", "RUST_PANIC", "flush_left", "records"]

# Where a cause of the exception before begins (Java, Python): a long traceback splits there.
_CAUSE_LINE = (
    r"During handling of the above exception|The above exception was the direct cause|Caused by:"
)
_TRACE_LINE = (
    rf"Traceback \(most recent call last\)|{_CAUSE_LINE}|\.\.\. \d+ (?:more|common frames)"
)
# pytest's failure blocks mark the failing line `>` and its explanation `E`, both followed by
# spaces: they belong to the block (the test's header, its source, then these).
_PYTEST_MARK = r"[>E] {3,}"
# The two apart: where a failing test went wrong and what pytest says of it (groups.py cuts a
# long failure block where one is explained).
PYTEST_SOURCE = re.compile(r"^> {3,}")
PYTEST_EXPLAINED = re.compile(r"^E {3,}")
# A failed assertion's values stay with the failure, which xUnit prints them unindented under.
_CONTINUATION = re.compile(rf"^(?:[ \t]|{_TRACE_LINE}|{_PYTEST_MARK}|{ASSERTED_VALUE})")
CAUSE = re.compile(rf"^\s*(?:{_CAUSE_LINE})")
# Stack frames and traceback lines only (indented or not): for output indented throughout.
# (The third: where a frame of a Rust backtrace is, on the line under its function,
# `             at ./src/lib.rs:11:32`.)
_FRAME = r"at [\w$.<>/\[\]-]+\(|File \"[^\"]+\", line \d+|at [^\s(]+:\d+:\d+$"
_TRACE_CONTINUATION = re.compile(
    rf"^\s*(?:{_TRACE_LINE}|{_FRAME})|^{_PYTEST_MARK}|^{ASSERTED_VALUE}"
)
# The line that closes a pytest failure block after its `E` lines: `tests/test_x.py:7: TypeError`.
_PYTEST_WHERE = re.compile(r"^\S+:\d+: [A-Za-z_][\w.]*$")
# pytest's report: a failure block opens with `____ test_name ____` and runs to the next such
# line or to a section line (`==== short test summary info ====`). Inside, a failure that went
# through several calls repeats `file:line:` locations, `_ _ _` separators and `name = value`
# lines, none of which start a record of their own.
# Blocks are looked for only after the section that holds them (`==== FAILURES ====` or
# `==== ERRORS ====`): elsewhere such a line opens nothing.
_PYTEST_BLOCK = re.compile(r"^_{3,} \S.* _{3,}$")
_PYTEST_SECTION = re.compile(r"^={3,}( .* ={3,})?$")
_PYTEST_FAILURES = re.compile(r"^={3,} (?:FAILURES|ERRORS) ={3,}$")
_TRACE_START = re.compile(r"^\s*(?:Traceback \(most recent call last\)|at |File \")")
# The unindented line that ends a Python traceback: `ValueError: bad`, `KeyboardInterrupt`.
_TRACE_END = re.compile(r"^[A-Za-z_][\w.]*(?::\s|:?$)")
# A rule of dashes or equals signs (unittest's `-----` under `FAIL: test_x`, report borders)
# says nothing of its own: it stays with the record before it, which it closes or underlines.
_RULE = re.compile(r"^\s*(?:-{10,}|={10,})\s*$")
# rustc's diagnostic (`error[E0308]: mismatched types`) and the source it quotes under it:
# the location (` --> src/a.rs:6:5`), gutter lines (`6 |     sum`, `  |     ^^^ expected i64,
# found u64`), `= note:` lines, `...` between quoted lines and `help:` with its own quote. Its
# message is in the gutter lines, so they stay with the diagnostic even where the output is
# indented throughout (cargo's `   Compiling` lines). (gcc and clang say it on the diagnostic's
# own line, and their quotes are indented: they need no rule of their own.)
_DIAGNOSTIC = re.compile(r"^(?:error|warning)(?:\[\w+\])?: ")
_QUOTED_SOURCE = re.compile(
    rf"^\s*(?:-->|:::) |^\s*{SOURCE_GUTTER}(?:\s|$)|^\s*= (?:note|help)|^\.\.\.$|^(?:help|note): "
)
# An RFC 3339 time that CI runners and container logs put before every line (GitHub Actions,
# `docker logs -t`, `kubectl logs --timestamps`), with the space after it, and one more space
# when only one follows (a level padded to width: `2024-05-01T10:00:00Z  INFO`). Records are
# found in what follows it, where the tool's own indentation is: without this, jest's `●`
# block or a traceback under a timestamp was a record per line.
_LINE_STAMP = re.compile(rf"^(?:{RUNNER_STAMP}|{CLOCK_STAMP})(?: (?=\S))?|^==\d+== ")
# (The second: a time of day alone, as dbt stamps every line: its `Database Error in model
# x`, then the cause indented under the same stamp, `09:47:16    100051 (22012): Division by
# zero`, which was a record of its own. The third: valgrind's `==12345== ` before every
# line, after which its own indentation says which lines belong to an error: `Invalid read
# of size 1`, then `   at 0x...: main (tokenize.c:39)` and the block's addresses.)
# Go's crash: `panic: ...` or `fatal error: ...`, a blank line, then the goroutines, each a
# `goroutine 7 [running]:` line, its frames (function lines unindented, file lines indented)
# and a blank line. A goroutine is one record, and the first stays with the message above it:
# the message says what went wrong, the crashing goroutine's frames where.
_GO_CRASH = re.compile(r"^(?:panic|fatal error): ")
# What the runtime prints under the message of a crash on a signal (a nil dereference):
# `[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a3b2c]`, still its message.
_GO_SIGNAL = re.compile(r"^\[signal [A-Z]+")
_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]\n]*\]:$")
# A Rust panic says where on its own line and what went wrong on the lines under it, flush
# left: `thread 'tests::slug' panicked at src/lib.rs:11:32:`, then `assertion `left == right`
# failed` and the two values. They are one record up to a blank line, a `note:` or the
# backtrace: each had been a record of its own, and a hit on the test's name showed where
# it panicked without why.
RUST_PANIC = re.compile(r"^thread '[^'\n]*'(?: \(\d+\))? panicked at \S.*:$")
_PANIC_END = re.compile(r"^(?:note: |stack backtrace:)")
# What `curl -v` sent and got back: the request line (`> GET /missing/report.csv HTTP/1.1`),
# its headers, curl's notes (`* ...`, `{ [335 bytes data]`) and the response's status and
# headers (`< HTTP/1.0 404 File not found`) are one record, an exchange, up to the body. The
# status is what a question about the request asks for; as records of their own, it was six
# lines below the request, out of a hit's reach.
_CURL_REQUEST = re.compile(r"^> (?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ HTTP/")
_CURL_LINE = re.compile(r"^[<>*{}](?: |$)")
# Records that a line opens and the lines after it continue while they say so (the two above):
# the line that ends one is read by the rules as any other.
_OPENED: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (RUST_PANIC, lambda line: bool(line.strip()) and _PANIC_END.match(line) is None),
    (_CURL_REQUEST, lambda line: _CURL_LINE.match(line) is not None),
)


def _opened(line: str) -> Callable[[str], bool] | None:
    """What continues the record `line` opens, if it opens one of _OPENED."""
    return next((continues for opener, continues in _OPENED if opener.match(line)), None)


def _any_of(*patterns: re.Pattern[str]) -> re.Pattern[str]:
    """One pattern that matches where any of `patterns` does."""
    return re.compile("|".join(f"(?:{p.pattern})" for p in patterns))


# A line that none of the rules above applies to, read outside any block, starts a record.
# Most lines of a log are such lines: one match of all the rules at once (per kind of
# continuation) tells them apart, where asking each rule in turn cost a sixth of a Put.
_RULES = (_GOROUTINE, _PYTEST_SECTION, _RULE, _DIAGNOSTIC, _GO_CRASH, RUST_PANIC, _CURL_REQUEST)
_SPECIAL = {
    _CONTINUATION: _any_of(_CONTINUATION, *_RULES),
    _TRACE_CONTINUATION: _any_of(_TRACE_CONTINUATION, *_RULES),
}


def records(lines: list[str]) -> list[int]:
    """First line of each record: a line starts one unless it continues the one before (read
    after the time a runner stamps it with, _LINE_STAMP)."""
    valgrind = sum(1 for line in lines if line.startswith("==")) * 2 > len(lines)
    lines = [_LINE_STAMP.sub("", line, count=1) for line in lines]
    # Where most lines are indented, indentation is the output's layout, not a continuation;
    # but valgrind's frames are most of its lines, and its indentation is its structure.
    nonblank = [line for line in lines if line.strip()]
    indented = sum(1 for line in nonblank if line[:1] in (" ", "\t"))
    by_indent = valgrind or 2 * indented <= len(nonblank)
    continuation = _CONTINUATION if by_indent else _TRACE_CONTINUATION
    special = _SPECIAL[continuation]
    starts = [0]
    in_trace = False
    explained = False  # the last non-blank line was a pytest `E` line
    failures = bool(_PYTEST_FAILURES.match(lines[0]))  # in pytest's failures section
    header = -1  # the line of the pytest failure block we are in, -1 outside one
    diagnostic = bool(_DIAGNOSTIC.match(lines[0]))  # in a rustc diagnostic's record
    crash = bool(_GO_CRASH.match(lines[0]))  # in a Go crash's message, before its goroutines
    goroutine = False  # in a goroutine of a Go crash (up to its blank line)
    opened = _opened(lines[0])  # a Rust panic's message, what curl -v sent and got back
    for i in range(1, len(lines)):
        line = lines[i]
        # A plain line outside any block (_SPECIAL): what the rules below would say of it.
        quiet = not (diagnostic or goroutine or crash or failures or in_trace or explained)
        if quiet and opened is None and header < 0 and line.strip() and not special.match(line):
            starts.append(i)
            continue
        if opened is not None:
            if opened(line):
                continue
            opened = None
        if diagnostic and (not line.strip() or _QUOTED_SOURCE.match(line)):
            continue
        if goroutine and line.strip():
            continue
        if crash and _GO_SIGNAL.match(line):
            continue
        if _GOROUTINE.match(line):
            goroutine = True
            if not crash:
                starts.append(i)
            crash = False
            continue
        goroutine = False
        if failures and _PYTEST_BLOCK.match(line):
            # The header is a record of its own, so that it can head its block (heads.py):
            # a block longer than a segment is cut, and every part is then named by it.
            starts.append(i)
            header = i
            continue
        if header >= 0 and not _PYTEST_SECTION.match(line):
            if i == header + 1:
                starts.append(i)  # the block's body, one record
            continue
        header = -1
        if _PYTEST_SECTION.match(line):
            failures = bool(_PYTEST_FAILURES.match(line))
        if not line.strip() or continuation.match(line) or _RULE.match(line):
            in_trace = in_trace or bool(_TRACE_START.match(line))
            explained = explained if not line.strip() else line.startswith("E ")
            continue
        if (in_trace and _TRACE_END.match(line)) or (explained and _PYTEST_WHERE.match(line)):
            in_trace = explained = False  # the line that closes the traceback it ends
            continue
        in_trace = explained = False
        diagnostic = bool(_DIAGNOSTIC.match(line))
        crash = bool(_GO_CRASH.match(line))
        opened = _opened(line)
        starts.append(i)
    return starts


def flush_left(lines: list[str]) -> bool:
    """Whether most non-blank lines start at their first column."""
    nonblank = [line for line in lines if line.strip()]
    return 2 * sum(1 for line in nonblank if line[:1] in (" ", "\t")) <= len(nonblank)
