"""A Java trace cut into several segments: headed by the record that logged it, its root cause
carrying its strongest error."""

from __future__ import annotations

from sharedctx_server.fit import Segments

from .test_cut import cut as cut_text

FRAMES = [f"\tat org.acme.boot.Step{i}.run(Step{i}.java:{i + 10})" for i in range(30)]
RECORD = "2026-12-06 10:06:22.150 ERROR 4242 --- [main] o.s.b.SpringApplication : Run failed"
TRACE = [
    "org.springframework.beans.factory.BeanCreationException: Error creating bean 'entityManager'",
    *FRAMES,
    "Caused by: org.hibernate.exception.JDBCConnectionException: Unable to open JDBC Connection",
    *FRAMES[:12],
    "Caused by: java.net.ConnectException: Connection refused (Connection refused)",
    *FRAMES[:8],
]


def cut(lines: list[str]) -> tuple[Segments, list[str]]:
    """The log's segments, and the first line of each."""
    segments = cut_text("\n".join(lines))
    assert segments is not None
    return segments, [lines[s] for s in segments.starts.tolist()]


def test_the_record_that_logged_a_trace_heads_its_segments_and_its_root_cause_is_strongest() -> (
    None
):
    before = [
        f"2026-12-06 10:06:{i:02d}.000 INFO 4242 --- [main] o.s.Boot : step {i}" for i in range(20)
    ]
    segments, firsts = cut([*before, RECORD, *TRACE])
    record = firsts.index(RECORD)
    trace = range(record + 1, len(firsts))
    assert len(trace) >= 4  # the trace is cut into several segments
    assert all(int(segments.heads[k]) == record for k in trace)
    root = firsts.index(TRACE[-9])
    errors = segments.errors.tolist()
    assert errors[root] == max(errors) < 1.0
    # The lines before the trace are no part of it: no head.
    assert all(int(segments.heads[k]) == -1 for k in range(record + 1))


def test_a_record_that_opens_with_its_trace_is_no_head_of_its_own_lines() -> None:
    """`ERROR ... Could not open JPA transaction` followed at once by frames: the record's
    segment holds the first frames, so the trace's later segments have no short head."""
    lines = ["2026-11-30 13:04:34 INFO orders: placing order", RECORD, *FRAMES, "done"]
    segments, firsts = cut(lines)
    assert firsts[0] == lines[0]
    assert all(int(h) != 0 for h in segments.heads.tolist())  # the INFO line heads nothing
