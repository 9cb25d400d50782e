"""The blocking Client against a real server: typed results, typed errors, paging, Fit with
excerpts, Watch and Reembed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from sharedctx import (
    Change,
    Client,
    FitResult,
    InvalidArgumentError,
    NotFoundError,
    PutItem,
    ReembedProgress,
    VersionConflictError,
)
from sharedctx_server.server import RunningServer

from .support.tool_outputs import FAILING_LINE, service_log

NS = "team-a/session-42"


def test_blocking_client_covers_every_call(threaded_server: RunningServer) -> None:
    with Client(f"127.0.0.1:{threaded_server.port}") as client:
        entry = client.put(NS, "a", "alpha", tags=("x",), kind="note")
        assert entry.version == 1 and entry.kind == "note"
        client.put_many(NS, [PutItem(key=f"b{i}", content=f"beta {i}") for i in range(7)])
        assert client.get(NS, "a").content == "alpha"
        assert set(client.get_many(NS, ["a", "b3", "zz"])) == {"a", "b3"}
        assert list(client.keys(NS, "b", page_size=2)) == [f"b{i}" for i in range(7)]
        with pytest.raises(VersionConflictError) as info:
            client.put(NS, "a", "again", if_version=5)
        assert info.value.current_version == 1
        assert client.delete(NS, "a") is True
        with pytest.raises(NotFoundError):
            client.get(NS, "a")
        assert client.stats(NS).entries == 7
        assert client.clear(NS) == 7


def test_unreachable_server_raises_unavailable_after_retries() -> None:
    from sharedctx import UnavailableError

    with Client("127.0.0.1:1", timeout=2, retries=1) as client:
        with pytest.raises(UnavailableError):
            client.get(NS, "a")


def test_blocking_fit_returns_an_excerpt_of_a_large_log(threaded_server: RunningServer) -> None:
    log = service_log(lines=400, fail_at=250)  # about 400 lines; one job fails
    query = "why did the resize-images job fail?"
    with Client(f"127.0.0.1:{threaded_server.port}") as client:
        client.put(NS, "logs/worker", log, kind="log")
        client.put(NS, "note", "lunch at noon", kind="note")
        result = client.fit(NS, query, 400, include_content=True, explain=True)
        assert isinstance(result, FitResult) and result.total_tokens <= 400
        worker = {e.key: e for e in result.entries}["logs/worker"]
        assert worker.form == "excerpt" and worker.kind == "log"
        assert worker.line_ranges and worker.total_lines == log.count("\n")
        assert all(1 <= a <= b <= worker.total_lines for a, b in worker.line_ranges)
        assert FAILING_LINE in worker.content
        explained = {c.key: c for c in result.explain}["logs/worker"]
        assert any(seg.chosen for seg in explained.segments)
        # Without excerpts the log is too large for this budget: it is left out whole.
        whole = client.fit(NS, query, 400, excerpts=False, keep_recent=0)
        assert "logs/worker" not in whole.keys
        assert whole.left_out_by_reason.get("too_large") == 1


def take(changes: Iterator[Change], n: int, timeout: float = 10) -> list[Change]:
    """The next `n` changes; fails rather than blocks past `timeout`."""
    out: list[Change] = []

    def collect() -> None:
        for change in changes:
            out.append(change)
            if len(out) == n:
                return

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    reader.join(timeout)
    assert not reader.is_alive(), f"{len(out)} of {n} changes before the deadline"
    return out


def test_blocking_watch_streams_changes_and_resumes_after_a_token(
    threaded_server: RunningServer,
) -> None:
    with Client(f"127.0.0.1:{threaded_server.port}") as client:
        changes = client.watch(NS)
        # A watch starts "from now", at some point after the call; once started() returns,
        # every later write is surely in its stream.
        start = changes.started()
        assert start and changes.resume_token == start
        client.put(NS, "a", "one")
        client.put(NS, "a", "two")
        client.delete(NS, "a")
        live = take(changes, 3)
        assert [(c.op, c.key, c.version) for c in live] == [
            ("put", "a", 1),
            ("put", "a", 2),
            ("delete", "a", 2),
        ]
        assert all(c.time is not None and c.resume_token for c in live)
        assert changes.resume_token == live[-1].resume_token
        changes.close()
        # Resuming after the first write replays what followed it; from the start, all.
        resumed = take(client.watch(NS, live[0].resume_token), 2)
        assert [(c.op, c.version) for c in resumed] == [("put", 2), ("delete", 2)]
        assert [c.resume_token for c in take(client.watch(NS, start), 3)] == [
            c.resume_token for c in live
        ]


def test_a_bad_resume_token_is_a_typed_error(threaded_server: RunningServer) -> None:
    with Client(f"127.0.0.1:{threaded_server.port}") as client:
        with pytest.raises(InvalidArgumentError):
            next(client.watch(NS, "not-a-token"))
        with pytest.raises(InvalidArgumentError):
            client.watch(NS, "not-a-token").started()


def test_blocking_reembed_reports_progress(threaded_server: RunningServer) -> None:
    with Client(f"127.0.0.1:{threaded_server.port}") as client:
        client.put_many(NS, [PutItem(key=f"doc{i}", content=f"document {i}") for i in range(5)])
        steps = list(client.reembed(NS, force=True))
    assert all(isinstance(s, ReembedProgress) for s in steps)
    assert steps[0].done == 0 and steps[-1].done == steps[-1].total == 5
    assert steps[-1].computed == 5


def test_a_watch_knows_its_start_while_waiting_and_ends_once_closed(
    threaded_server: RunningServer,
) -> None:
    with Client(f"127.0.0.1:{threaded_server.port}") as client:
        # Iterated without started(): the start's token is there while the first change is
        # awaited, so a caller that gives up then can still resume without a gap.
        changes = client.watch("waiting/ns")
        first: list[Change] = []
        reader = threading.Thread(target=lambda: first.append(next(changes)), daemon=True)
        reader.start()
        deadline = time.monotonic() + 10
        while not changes.resume_token and time.monotonic() < deadline:
            time.sleep(0.05)
        start = changes.resume_token
        assert start
        client.put("waiting/ns", "k", "v")
        reader.join(10)
        assert [c.key for c in first] == ["k"] and changes.resume_token != start
        # Closed before it began, a watch sends nothing and ends at once.
        unused = client.watch("waiting/ns")
        unused.close()
        assert list(unused) == [] and unused.started() == ""
