"""Which outputs list what happened newest first."""

from __future__ import annotations

from sharedctx_server.segment.date_order import newest_first

from ..support.tool_outputs import git_log


def starts_of(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith("commit ")]


def test_a_git_log_lists_newest_first_and_a_log_does_not() -> None:
    lines = git_log().split("\n")  # oldest first
    newest = list(reversed([lines[s : s + 8] for s in starts_of(lines)]))
    flat = [line for block in newest for line in block]
    assert newest_first(flat, starts_of(flat))
    assert not newest_first(lines, starts_of(lines))
    log = [f"2026-12-06T10:{m:02d}:00Z INFO job {m} done" for m in range(20)]
    assert not newest_first(log, list(range(20)))
    assert newest_first(log[::-1], list(range(20)))  # journalctl -r


def test_too_few_dates_say_nothing() -> None:
    lines = ["2026-12-06 10:05:00 started", "2026-12-06 10:01:00 queued", "no date here"]
    assert not newest_first(lines, [0, 1, 2])
