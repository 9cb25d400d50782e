"""A stack trace cut into several segments: the record that logged it heads them, and a Java
chain's root cause (or the message of the Rust panic a backtrace follows) carries the trace's
strongest error (docs/excerpts.md, "Traces").

A long Java trace is cut into segments of a few lines each: the exception with its first
frames, runs of frames, each `Caused by:` with its frames. "Why did the application fail to
start?" meets the record that logged it (`ERROR ... Application run failed`), and the hit's
neighbours show the top exception, but what went wrong is the last `Caused by:` (`Connection
refused`), forty lines down: as the record's block, the trace's strongest errors come with
a hit on it (fit.excerpt_items, ERROR_MEMBERS), and the root cause is the strongest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby

from ..compress.frames import find_frames
from .records import RUST_PANIC

__all__ = ["root_cause_errors", "trace_heads", "trace_runs"]

# The lines of a trace that are no frame: a cause, a suppressed exception, elided frames.
_CAUSE = re.compile(r"^[ \t]*Caused by: ")
_TRACE_LINE = re.compile(
    rf"{_CAUSE.pattern}|^[ \t]*(?:Suppressed: |\.\.\. \d+ (?:more|common frames))"
)
# The exception a Java trace opens with, at the start of its line (a log record that the
# trace follows opens with its time instead, and is no part of it).
_EXCEPTION = re.compile(r"^[A-Za-z_$][\w$.]*(?:Exception|Error|Throwable)\b")
# Above a trace's root cause, by this much, however strong the other errors of the trace.
_ROOT_LEAD = 1e-3
_ERROR_CAP = 0.999


def _trace_segments(lines: list[str], starts: Sequence[int]) -> list[bool]:
    """Whether each segment (first lines `starts`) is part of a stack trace: it opens with a
    frame, a cause or elided frames, or with an exception whose next line, in it, is a
    frame."""
    frame_lines = {i for f in find_frames(lines) for i in range(f.start, f.end)}
    if not frame_lines:
        return [False] * len(starts)
    return [
        start in frame_lines
        or _TRACE_LINE.match(lines[start]) is not None
        or start + 1 in frame_lines
        and (k + 1 == len(starts) or starts[k + 1] > start + 1)
        and _EXCEPTION.match(lines[start]) is not None
        for k, start in enumerate(starts)
    ]


def trace_runs(lines: list[str], starts: Sequence[int]) -> list[range]:
    """The runs of consecutive segments (first lines `starts`) that make one stack trace."""
    runs = []
    at = 0
    for in_trace, group in groupby(_trace_segments(lines, starts)):
        count = len(list(group))
        if in_trace:
            runs.append(range(at, at + count))
        at += count
    return runs


def trace_heads(runs: list[range], tokens: Sequence[int], heads: list[int], limit: int) -> None:
    """Head each segment of a trace (`runs`, trace_runs) that has no head by the record just
    before the trace: a segment of at most `limit` tokens that is no part of it."""
    for run in runs:
        record = run.start - 1
        if record < 0 or tokens[record] > limit:
            continue
        for k in run:
            if heads[k] < 0:
                heads[k] = record


def root_cause_errors(
    lines: list[str], starts: Sequence[int], runs: list[range], errors: list[float]
) -> list[float]:
    """`errors` with each Java trace's root cause (the last `Caused by:` segment of a run of
    `runs`) made its strongest, a little above the others: the deepest cause says what went
    wrong, and the trace's frames, judged as strong, only where. So does the message of a
    Rust panic before its backtrace's frames (`stack backtrace:` between them): each frame's
    `at src/lib.rs:11:32` line reads as a stack frame, evidence as strong as the message."""
    out = list(errors)
    for run in runs:
        causes = [k for k in run if _CAUSE.match(lines[starts[k]])]
        root = causes[-1] if causes else _panic_before(lines, starts, run.start)
        if root is not None:
            strongest = max(errors[k] for k in run)
            out[root] = max(errors[root], min(strongest + _ROOT_LEAD, _ERROR_CAP))
    return out


def _panic_before(lines: list[str], starts: Sequence[int], first: int) -> int | None:
    """The segment of the Rust panic whose backtrace opens at segment `first`, if any."""
    at = first - 1
    if at >= 0 and lines[starts[at]].strip() == "stack backtrace:":
        at -= 1
    if at >= 0 and RUST_PANIC.match(lines[starts[at]]):
        return at
    return None
