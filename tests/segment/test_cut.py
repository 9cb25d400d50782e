"""Cutting entries into segments at Put: structure kept, sizes capped, counts exact."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import Segments, marker_tokens, render_excerpt
from sharedctx_server.fit.segments import LONG_LINE_CHARS, joined_cost, shown_line
from sharedctx_server.segment import SegmentConfig, cut_segments, excerpt_lines, text_lines
from sharedctx_server.segment.groups import json_cut_short
from sharedctx_server.tokens import TokenCounter

from ..support.tool_outputs import PYTEST_FAILURES, RUSTC_E0308

TOKENS = TokenCounter("o200k_base")
SMALL = SegmentConfig(min_tokens=0)


def cut(text: str, kind: str | None = "log", config: SegmentConfig = SMALL) -> Segments | None:
    return cut_segments(
        text,
        kind=kind,
        tool_name=None,
        original_tokens=TOKENS.count(text),
        count_tokens=TOKENS.count,
        config=config,
    )


def groups(text: str, kind: str | None = "log", config: SegmentConfig = SMALL) -> list[str]:
    """The segments' texts, for readable assertions."""
    segments = cut(text, kind, config)
    assert segments is not None
    lines = text_lines(text)
    return [
        "\n".join(lines[a : a + n])
        for a, n in zip(segments.starts.tolist(), segments.lines.tolist(), strict=True)
    ]


LOG = """2024-05-01 10:00:00 INFO worker: job resize-images started
2024-05-01 10:00:01 ERROR worker: job resize-images failed
Traceback (most recent call last):
  File "/srv/app/jobs/resize.py", line 88, in run
    blob = storage.fetch(key)
ConnectionError: connection refused
2024-05-01 10:00:02 INFO worker: job send-digest started
java.lang.IllegalStateException: boom
\tat com.example.Foo.bar(Foo.java:10)
Caused by: java.io.IOException: disk
\t... 3 more
2024-05-01 10:00:03 INFO done
"""


def test_a_log_record_keeps_its_traceback_and_the_exception_line_that_ends_it() -> None:
    assert groups(LOG) == [
        "2024-05-01 10:00:00 INFO worker: job resize-images started",
        "2024-05-01 10:00:01 ERROR worker: job resize-images failed\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app/jobs/resize.py", line 88, in run\n'
        "    blob = storage.fetch(key)\n"
        "ConnectionError: connection refused",
        "2024-05-01 10:00:02 INFO worker: job send-digest started",
        "java.lang.IllegalStateException: boom\n"
        "\tat com.example.Foo.bar(Foo.java:10)\n"
        "Caused by: java.io.IOException: disk\n"
        "\t... 3 more",
        "2024-05-01 10:00:03 INFO done",
    ]


def test_a_long_traceback_splits_where_each_cause_begins() -> None:
    frames = [f"\tat com.acme.orders.Step{i}.run(Step{i}.java:{i + 10})" for i in range(30)]
    trace = [
        "2026-11-30 13:04:35 ERROR o.s.t.TransactionInterceptor - Could not open JPA transaction",
        *frames,
        "Caused by: org.hibernate.exception.JDBCConnectionException: Unable to acquire JDBC",
        *frames[:12],
        "\t... 48 common frames omitted",
        "Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - timed out",
        *frames[:5],
    ]
    parts = groups("\n".join(["2026-11-30 13:04:34 INFO orders: placing order", *trace, "done"]))
    starts = [p.split("\n", 1)[0] for p in parts]
    assert trace[31] in starts and trace[45] in starts  # each cause heads a segment
    assert all(len(p.split("\n")) <= SMALL.max_lines for p in parts)
    # A short traceback stays whole, its cause inside (test above).


PYTEST = """tests/test_x.py::test_many[299] PASSED
tests/test_x.py::test_total FAILED

=================================== FAILURES ===================================
__________________________________ test_total __________________________________

    def test_total():
>       assert total([1, "5"]) == 6
E       TypeError: unsupported operand type(s) for +: 'int' and 'str'

tests/test_x.py:7: TypeError
=========================== short test summary info ============================
FAILED tests/test_x.py::test_total - TypeError: unsupported operand type(s)
"""


def test_a_pytest_failure_block_is_one_record_with_its_explanation_and_location() -> None:
    header, block = groups(PYTEST)[3:5]
    assert header.strip("_ ") == "test_total"  # a record of its own: it heads the block
    assert block.startswith("\n    def test_total") and block.endswith(
        "tests/test_x.py:7: TypeError"
    )
    assert "E       TypeError" in block and ">       assert total" in block
    assert groups(PYTEST)[5].startswith("=====") and len(groups(PYTEST)) == 7
    segments = cut(PYTEST)
    assert segments is not None and segments.heads.tolist()[4] == 3


def test_a_long_pytest_failure_is_cut_where_it_is_explained() -> None:
    # Raised a few calls down in a library: its source is most of the block. What went wrong
    # (the `>` line the `E` lines explain, and their location) is a short segment of its own.
    library = "".join(f"    # line {k} of the library's source\n" for k in range(40))
    text = PYTEST.replace(
        ">       assert total([1, \"5\"]) == 6\n",
        ">       assert total([1, \"5\"]) == 6\n\nlib/sums.py:3: in total\n" + library
        + ">       return a + b\n",
    )  # fmt: skip
    parts = groups(text)
    explained = next(part for part in parts if "E       TypeError" in part)
    assert explained.startswith(">       return a + b") and explained.endswith(": TypeError")
    assert len(explained.splitlines()) == 4


UNITTEST = """test_kelvin (test_units.Conv.test_kelvin) ... FAIL
test_parse (test_units.Conv.test_parse) ... ERROR

======================================================================
ERROR: test_parse (test_units.Conv.test_parse)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/srv/test_units.py", line 8, in test_parse
    int("12a")
ValueError: invalid literal for int() with base 10: '12a'

======================================================================
FAIL: test_kelvin (test_units.Conv.test_kelvin)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/srv/test_units.py", line 6, in test_kelvin
    self.assertAlmostEqual(0 + 273.15, 273.0, places=2)
AssertionError: 273.15 != 273.0 within 2 places

----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (failures=1, errors=1)
"""


def test_a_rule_stays_with_the_record_it_closes_or_underlines() -> None:
    # unittest's `FAIL: test_x` and the traceback under its rule are one record: an excerpt
    # that shows the name shows why it failed.
    records = groups(UNITTEST)
    fail = next(r for r in records if r.startswith("FAIL: test_kelvin"))
    assert fail.rstrip("\n-").endswith("AssertionError: 273.15 != 273.0 within 2 places")
    assert not any(r.lstrip("\n").startswith(("---", "===")) for r in records)
    assert records[-2].startswith("Ran 2 tests") and records[-1].startswith("FAILED")


NESTED = PYTEST_FAILURES


def test_a_failure_raised_calls_down_stays_in_its_block_under_its_test_name() -> None:
    parts = groups(NESTED)
    assert [p.split("\n")[0] for p in parts[:2]] == [
        "=================================== FAILURES ===================================",
        "____________________________ test_reserve_too_many _____________________________",
    ]
    body = parts[2]
    assert "def test_reserve_too_many" in body and "E           ValueError" in body
    assert body.endswith("test_inventory.py:5: ValueError")
    assert parts[3].strip("_ ") == "test_sku_format"
    # A block cut by the caps is headed by its test's name in every part.
    segments = cut(NESTED, config=SegmentConfig(min_tokens=0, max_lines=6))
    assert segments is not None
    starts, heads = segments.starts.tolist(), segments.heads.tolist()
    error_part = next(k for k, a in enumerate(starts) if a <= 17 < a + segments.lines[k])
    assert heads[error_part] == starts.index(1)


def test_segments_carry_their_tokens_and_error_evidence() -> None:
    segments = cut(LOG)
    assert segments is not None
    texts = groups(LOG)
    assert segments.tokens.tolist() == [TOKENS.count(t + "\n") for t in texts]  # no joins here
    assert segments.errors[1] > 0.8 and segments.errors[0] == 0.0
    assert segments.total_lines == len(text_lines(LOG))


def test_pretty_json_is_cut_into_items_of_its_largest_array() -> None:
    doc = {
        "total": 3,
        "items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(3)],
    }
    text = json.dumps(doc, indent=2)
    parts = groups(text, "tool_output")
    items = [p for p in parts if '"id"' in p]
    assert [p.count('"id"') for p in items] == [1, 1, 1]
    assert json.loads(items[1].strip().rstrip(","))["id"] == 1


def test_json_cut_short_is_cut_into_the_items_it_holds_as_if_whole() -> None:
    doc = {"total": 9, "items": [{"id": i, "name": f"item {i}", "n": [i, i]} for i in range(9)]}
    text = json.dumps(doc, indent=2)
    cut_short = text[: text.index('"id": 7') + 4]  # as a tool that caps its output leaves it
    parts = groups(cut_short, "tool_output")
    assert parts[: len(parts) - 1] == groups(text, "tool_output")[: len(parts) - 1]
    assert [json.loads(p.strip().rstrip(","))["id"] for p in parts[1:-1]] == list(range(7))


@given(st.integers(min_value=2, max_value=2_000))
@settings(max_examples=60, deadline=None)
def test_only_a_json_document_cut_where_it_ends_is_read_as_one_cut_short(end: int) -> None:
    text = json.dumps({"items": [{"id": i, "tags": ["a", "b"]} for i in range(40)]}, indent=1)
    assert json_cut_short(text[:end]) == ("\n" in text[:end].strip())
    assert not json_cut_short(text)  # whole: JSON, not JSON cut short
    # A fault before the last line is no cut; nor is JSON Lines, or a one-line document.
    assert not json_cut_short(text.replace('"id": 0', "id: 0", 1)[: max(end, 40)] + "\n  {")
    lines = "\n".join(json.dumps({"id": i, "ok": True}) for i in range(5))
    assert not json_cut_short(lines) and not json_cut_short(lines[:-3])
    assert not json_cut_short('{"items": [1, 2, 3')
    assert not json_cut_short("2024-05-01 10:00:00 INFO {started}\n{")


def test_one_line_json_is_cut_into_items_of_its_indented_rendering() -> None:
    doc = {"total": 3, "items": [{"id": i, "name": f"item {i}", "ok": i != 1} for i in range(3)]}
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    lines = excerpt_lines(text)
    assert lines == json.dumps(doc, indent=1, ensure_ascii=False).split("\n")
    segments = cut(text, "tool_output")
    assert segments is not None and segments.total_lines == len(lines)
    items = [
        "\n".join(lines[a : a + n])
        for a, n in zip(segments.starts.tolist(), segments.lines.tolist(), strict=True)
    ]
    assert json.loads(items[2].strip().rstrip(","))["id"] == 1
    assert segments.tokens[2] == TOKENS.count(items[2] + "\n")


def test_a_json_item_cut_in_parts_is_headed_by_the_line_naming_it() -> None:
    # A pod of `kubectl get pods -o json` is longer than a segment: the run that says
    # `"restartCount": 57` says nothing of whose, unless the pod's name heads it.
    def pod(i: int) -> dict[str, object]:
        return {
            "kind": "Pod",
            "metadata": {"name": f"web-{i:04d}", "labels": {"app": "web", "tier": "front"}},
            "spec": {"containers": [{"name": "web", "image": f"registry/web:{i}"}],
                     "nodeName": f"node-{i}", "volumes": [f"v{j}" for j in range(30)]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "web",
                       "restartCount": i, "ready": True}]},
        }  # fmt: skip

    text = json.dumps({"kind": "List", "items": [pod(i) for i in range(3)]}, indent=4)
    segments = cut(text, "tool_output")
    assert segments is not None
    lines = text_lines(text)
    starts = segments.starts.tolist()
    names = [lines.index(f'                "name": "web-{i:04d}",') for i in range(3)]
    for i, name in enumerate(names):
        count = next(k for k, line in enumerate(lines) if f'"restartCount": {i},' in line)
        head = starts.index(name)  # the naming line is a segment of its own...
        assert segments.lines[head] == 1 and segments.heads[head] == -1
        hit = max(k for k, start in enumerate(starts) if start <= count)
        assert segments.heads[hit] == head  # ...that heads the later parts of its pod
        # and only those: nothing before its name, nothing of the next pod.
        end = names[i + 1] if i + 1 < len(names) else len(lines)
        headed = [starts[k] for k in range(len(starts)) if segments.heads[k] == head]
        assert headed and all(name < start < end for start in headed)


def test_a_json_item_whole_in_one_segment_is_not_cut_at_its_name() -> None:
    doc = {"items": [{"id": i, "name": f"item {i}", "size": i * 10} for i in range(5)]}
    text = json.dumps(doc, indent=2)
    segments = cut(text, "tool_output")
    assert segments is not None
    assert all(n > 1 for n in segments.lines.tolist()[1:-1])
    assert segments.heads.tolist() == [-1] * len(segments.starts)


def test_a_byte_order_mark_before_json_is_no_text() -> None:
    # PowerShell's `Out-File` writes one: the document is still cut into its items.
    doc = [{"id": i, "name": f"item {i}"} for i in range(40)]
    one_line = "\ufeff" + json.dumps(doc)
    assert excerpt_lines(one_line) == json.dumps(doc, indent=1).split("\n")
    for text in (one_line, "\ufeff" + json.dumps(doc, indent=2)):
        segments = cut(text, "tool_output")
        assert segments is not None and segments.lines.size >= len(doc)


def test_blank_lines_around_one_line_json_keep_their_places() -> None:
    # A tool's `print()` calls around its answer: the document is still cut into its items.
    doc = [{"id": i, "name": f"item {i}"} for i in range(40)]
    rendering = json.dumps(doc, indent=1).split("\n")
    text = "\n" + json.dumps(doc) + "\n\n\n"
    assert excerpt_lines(text) == ["", *rendering, "", ""]
    segments = cut(text, "tool_output")
    assert segments is not None and segments.lines.size >= len(doc)
    assert segments.total_lines == len(rendering) + 3
    # Another line beside it, blank lines or not: its lines as they are.
    for text in ("result:\n" + json.dumps(doc), json.dumps(doc) + "\n\n" + json.dumps(doc)):
        assert excerpt_lines(text) == text_lines(text)


def test_only_a_one_line_json_document_is_rendered() -> None:
    deep = "[" * 100_000 + "]" * 100_000  # parses no deeper than Python's recursion limit
    for text in ("[]", "{} ", "[1, 2", '"a string"', "plain words", "{a}\n{b}\n", deep):
        assert excerpt_lines(text) == text_lines(text)
    # A rendering must show the values the text holds: else the document keeps its line.
    for text in ('{"a": 1e400}', '{"b": 0.10000000000000000001}', '{"d": 1, "d": 2}'):
        assert excerpt_lines(text) == [text]
    assert excerpt_lines('{"c": 1E5, "e": -2.5e-3}') == [
        "{",
        ' "c": 100000.0,',
        ' "e": -0.0025',
        "}",
    ]


def test_excerpt_lines_leave_terminal_escapes_out_and_keep_line_numbers() -> None:
    coloured = "\x1b[1mstep 1\x1b(B\x1b[m: done\n\x1b]0;title\x07\x1b[31mERROR\x1b[0m: boom\nend\n"
    assert excerpt_lines(coloured) == ["step 1: done", "ERROR: boom", "end"]


def test_prose_is_cut_into_paragraphs_with_headings_and_fences_kept_whole() -> None:
    text = (
        "# Title\nIntro line one\nintro line two\n\n"
        "Second paragraph.\n\n"
        "```\ncode line\n\nmore code\n```\n"
        "## Next\nText."
    )
    assert groups(text, "document") == [
        "# Title\nIntro line one\nintro line two\n",
        "Second paragraph.\n",
        "```\ncode line\n\nmore code\n```",
        "## Next\nText.",
    ]


SOURCE = """class Limits:
    \"\"\"Limits of the pool.

    * **keepalive_expiry** - Time limit on idle keep-alive connections.
    \"\"\"

    def __init__(self, *, keepalive_expiry: float | None = 5.0) -> None:
        self.keepalive_expiry = keepalive_expiry

    def __repr__(self) -> str:
        return f"Limits({self.keepalive_expiry})"
"""


def numbered(text: str, first: int = 1, after: str = "\t") -> str:
    """`text` as `cat -n` prints it (or a file reader, with `after` an arrow)."""
    return "".join(
        f"{first + i:6d}{after}{line}\n" for i, line in enumerate(text.rstrip("\n").split("\n"))
    )


def test_numbered_lines_are_cut_by_the_text_after_their_numbers() -> None:
    # As `cat -n` or an agent's file reader shows a source file: its paragraphs, each line
    # with its number, not a segment per line.
    plain = cut(SOURCE, "tool_output")
    assert plain is not None and len(plain.lines) == 4
    for after in ("\t", "\u2192"):
        segments = cut(numbered(SOURCE, 40, after), "tool_output")
        assert segments is not None and segments.lines.tolist() == plain.lines.tolist()
        shown = groups(numbered(SOURCE, 40, after), "tool_output")
        assert shown[2].startswith(f"    46{after}    def __init__")
    # A numbered log is still cut by its records.
    assert len(groups(numbered(LOG))) == len(groups(LOG))


def test_numbers_that_do_not_count_up_are_text() -> None:
    # Counts, sizes or ids in front of lines are no line numbers.
    text = "".join(f"{n}\tfile{n}.txt\n" for n in (12, 3, 4410, 7, 99, 1, 2048, 5))
    assert len(groups(text, "tool_output")) == 8


def test_long_groups_are_split_within_the_line_and_character_caps() -> None:
    text = "".join(f"A long paragraph goes on, line {i} of it.\n" for i in range(100))
    config = SegmentConfig(min_tokens=0, max_lines=10, max_chars=10_000)
    segments = cut(text, "document", config)
    assert segments is not None and segments.lines.tolist() == [10] * 10
    config = SegmentConfig(min_tokens=0, max_lines=1000, max_chars=100)
    for part in groups(text, "document", config):
        assert len(part) + 1 <= 100


def test_messages_small_entries_and_single_lines_are_not_cut() -> None:
    assert cut(LOG, kind="message") is None
    assert cut(LOG, config=SegmentConfig(min_tokens=10_000)) is None
    assert cut("one short line " * 60) is None
    # A line longer than an excerpt shows is one segment: its head (shown_line).
    longer = cut("one long line " * 100)
    assert longer is not None and longer.lines.tolist() == [1]
    assert cut("one long line " * 100, kind="message") is None


def test_packed_segments_round_trip_and_damage_is_refused() -> None:
    segments = cut(LOG)
    assert segments is not None
    back = Segments.unpack(segments.pack())
    assert back is not None
    assert back.lines.tolist() == segments.lines.tolist()
    assert back.tokens.tolist() == segments.tokens.tolist()
    assert np.allclose(back.errors, segments.errors, atol=1 / 255)
    assert back.heads.tolist() == segments.heads.tolist()
    assert back.in_compressed.tolist() == segments.in_compressed.tolist()
    assert Segments.unpack(segments.pack()[:-1]) is None
    assert Segments.unpack(b"\x09" + segments.pack()[1:]) is None
    # A head after its segment is damage too, and so is a flag other than 1, 0 and -1.
    n = len(segments)
    bad = Segments(segments.lines, segments.tokens, segments.errors, np.full(n, -1))
    blob = bytearray(bad.pack())
    blob[-n - 4 : -n] = (n - 1).to_bytes(4, "little", signed=True)
    assert Segments.unpack(bytes(blob)) is None
    blob = bytearray(bad.pack())
    blob[-1] = 7
    assert Segments.unpack(bytes(blob)) is None


def test_segments_know_whether_the_compressed_form_shows_them() -> None:
    compressed = "\n".join(
        [
            "2024-05-01 10:00:01  ERROR worker: job resize-images failed",  # re-spaced
            "Traceback (most recent call last):",
            '  File "/srv/app/jobs/resize.py", line 88, in run',
            "    blob = storage.fetch(key)",
            "ConnectionError: connection refused",
            "[... 5 lines omitted ...]",
        ]
    )
    segments = cut_segments(
        LOG,
        kind="log",
        tool_name=None,
        original_tokens=TOKENS.count(LOG),
        count_tokens=TOKENS.count,
        config=SMALL,
        compressed=compressed,
    )
    assert segments is not None and cut(LOG) is not None
    # The failing job's record is shown whole, the lines around it are not.
    assert segments.in_compressed.tolist() == [0, 1, 0, 0, 0]
    assert cut(LOG).in_compressed.tolist() == [-1] * len(segments)  # no compressed form


def test_segments_packed_before_heads_still_read() -> None:
    segments = cut(LOG)
    assert segments is not None
    n = len(segments)
    version_1 = b"".join(
        (
            bytes([1]) + n.to_bytes(4, "little"),
            segments.lines.astype("<u4").tobytes(),
            segments.tokens.astype("<u4").tobytes(),
            np.rint(segments.errors * 255).astype("<u1").tobytes(),
        )
    )
    back = Segments.unpack(version_1)
    assert back is not None and back.lines.tolist() == segments.lines.tolist()
    assert back.heads.tolist() == [-1] * n
    # Version 2 (counted before long lines and progress bars were shown as they are now)
    # reads with its heads, and is not current: the namespace cache cuts its entry again.
    version_2 = bytes([2]) + segments.pack()[1 : -len(segments)]
    older = Segments.unpack(version_2)
    assert older is not None and older.heads.tolist() == segments.heads.tolist()
    assert not Segments.is_current(version_2) and not Segments.is_current(version_1)
    assert Segments.is_current(segments.pack()) and not Segments.is_current(b"")
    # Version 3 (before segments knew what the compressed form shows) reads as not knowing,
    # and stays: the cache cuts from the full form alone and could not know either.
    version_3 = bytes([3]) + segments.pack()[1 : -len(segments)]
    third = Segments.unpack(version_3)
    assert third is not None and third.in_compressed.tolist() == [-1] * n
    assert Segments.is_current(version_3)


GO_CRASH = """{"level": "info", "msg": "request", "path": "/v2/checkout", "status": 200}
fatal error: concurrent map writes

goroutine 4127 [running]:
github.com/acme/proxy/internal/session.(*Store).Touch(0xc000214c80, {0xc0031a2f40, 0x12})
\t/src/internal/session/store.go:88 +0x1b9
net/http.(*conn).serve(0xc009a1e360, {0x1a41e28, 0xc0002c8f60})
\t/usr/local/go/src/net/http/server.go:2039 +0x5e8
created by net/http.(*Server).Serve in goroutine 1
\t/usr/local/go/src/net/http/server.go:3285 +0x4b4

goroutine 1 [IO wait, 41 minutes]:
internal/poll.runtime_pollWait(0x7f3a2c1e6e28, 0x72)
\t/usr/local/go/src/runtime/netpoll.go:345 +0x85
"""


def test_a_go_crash_keeps_its_message_with_the_crashing_goroutine() -> None:
    # The message says what went wrong, the first goroutine's frames where; each other
    # goroutine is a record of its own (a frame's function line is not indented).
    parts = groups(GO_CRASH)
    assert parts[1].startswith("fatal error: concurrent map writes\n\ngoroutine 4127 [running]:")
    assert parts[1].rstrip().endswith("server.go:3285 +0x4b4")
    assert parts[2].startswith("goroutine 1 [IO wait, 41 minutes]:") and len(parts) == 3
    # A crash on a signal says so under its message: still the message.
    nil = GO_CRASH.replace(
        "fatal error: concurrent map writes\n",
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a3b2c]\n",
    )
    parts = groups(nil)
    assert parts[1].startswith("panic: runtime error: invalid memory address")
    assert "goroutine 4127 [running]:" in parts[1] and len(parts) == 3


RUST_PANIC = """test tests::slug_spaces ... FAILED

failures:

---- tests::slug_spaces stdout ----

thread 'tests::slug_spaces' (2701) panicked at src/lib.rs:11:32:
assertion `left == right` failed
  left: "hello_world"
 right: "hello-world"
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/5980761/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/5980761/library/core/src/panicking.rs:80:14
   4: backoff::tests::slug_spaces
             at ./src/lib.rs:11:32
   5: backoff::tests::slug_spaces::{{closure}}
             at ./src/lib.rs:11:29
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
"""


@pytest.mark.parametrize("backtrace", [True, False])
def test_a_rust_panic_keeps_its_message_and_each_frame_its_place(backtrace: bool) -> None:
    # Where it panicked on one line, what went wrong on those under it: one record. Each
    # frame of the backtrace (mostly indented, so indentation is its layout) is one with the
    # line that says where it is.
    text = RUST_PANIC if backtrace else RUST_PANIC.split("stack backtrace:")[0]
    parts = [part.rstrip("\n") for part in groups(text)]
    panic = next(part for part in parts if part.startswith("thread 'tests::slug_spaces'"))
    assert panic.endswith(' right: "hello-world"')
    if backtrace:
        frame = next(part for part in parts if part.startswith("   4: backoff::tests::slug_spaces"))
        assert frame == "   4: backoff::tests::slug_spaces\n             at ./src/lib.rs:11:32"
        # Each frame's `at` line reads as a stack frame, error evidence; the message says what
        # went wrong, and carries the trace's strongest error (a block's strongest errors
        # come with a hit on it).
        segments = cut(text)
        assert segments is not None
        at = parts.index(panic)
        assert segments.errors[at] == segments.errors.max() > 0


CURL_VERBOSE = """*   Trying 127.0.0.1:8080...
* Connected to 127.0.0.1 (127.0.0.1) port 8080 (#0)
> GET /missing/report.csv HTTP/1.1
> Host: 127.0.0.1:8080
> User-Agent: curl/7.88.1
> Accept: */*
>
* HTTP 1.0, assume close after body
< HTTP/1.0 404 File not found
< Server: SimpleHTTP/0.6 Python/3.11.7
< Content-Type: text/html;charset=utf-8
<
{ [335 bytes data]
* Closing connection 0
<!DOCTYPE HTML>
<html lang="en">
    <head><title>Error response</title></head>
    <body><p>Error code: 404</p></body>
</html>
"""


def test_what_curl_sent_and_got_back_is_one_record() -> None:
    # The request, its headers, curl's notes and the response's status and headers: a
    # question about the request is answered by the status, six lines below it.
    parts = groups(CURL_VERBOSE)
    exchange = next(part for part in parts if part.startswith("> GET /missing/report.csv"))
    assert "< HTTP/1.0 404 File not found" in exchange
    assert exchange.rstrip().endswith("* Closing connection 0")
    assert not any("<html" in part for part in parts[: parts.index(exchange) + 1])


def test_valgrind_errors_are_records_by_their_indentation_after_the_pid() -> None:
    pid = "==26925=="
    text = "\n".join(
        [
            f"{pid} Memcheck, a memory error detector",
            f"{pid} ",
            f"{pid} Invalid read of size 1",
            f"{pid}    at 0x1094C4: main (tokenize.c:39)",
            f"{pid}  Address 0x4a411f0 is 0 bytes inside a block of size 8 free'd",
            f"{pid}    at 0x484417B: free (in vgpreload_memcheck-amd64-linux.so)",
            f"{pid}    by 0x1094BF: main (tokenize.c:38)",
            f"{pid} ",
            "total=49",
            f"{pid} HEAP SUMMARY:",
            f"{pid}     in use at exit: 99 bytes in 8 blocks",
        ]
    )
    parts = groups(text)
    assert [part.split("\n")[0] for part in parts] == [
        f"{pid} Memcheck, a memory error detector",
        f"{pid} Invalid read of size 1",
        "total=49",
        f"{pid} HEAP SUMMARY:",
    ]
    assert parts[1].count("\n") == 5  # the error, its frames, the freed block and the blank


def heads_of(text: str, kind: str | None = "tool_output") -> list[tuple[str, str]]:
    """Each segment's first line and its head's first line, for segments with a head."""
    segments = cut(text, kind)
    assert segments is not None
    lines = text_lines(text)
    first = [lines[int(a)] for a in segments.starts]
    return [(first[k], first[h]) for k, h in enumerate(segments.heads.tolist()) if h >= 0]


def test_in_a_terminal_session_each_command_heads_its_output() -> None:
    text = "$ uname -a\nLinux box 6.1.0-28-amd64 #1 SMP x86_64 GNU/Linux\n$ free -m\n" + "".join(
        f"Mem{i}:  {i * 1000}  {i * 400}  {i * 600}\n" for i in range(6)
    )
    heads = heads_of(text, "tool_output")
    assert ("Linux box 6.1.0-28-amd64 #1 SMP x86_64 GNU/Linux", "$ uname -a") in heads
    assert ("Mem5:  5000  2000  3000", "$ free -m") in heads


def test_in_a_terminal_session_each_command_starts_a_segment() -> None:
    # Read as prose, the notes and the next command were one paragraph (no blank line).
    notes = "".join(
        f"The release notes say that step {i} of the rollout went as planned, and more.\n"
        for i in range(12)
    )
    text = f"$ cat notes.md\n{notes}$ uname -a\nLinux box 6.1.0-28-amd64 x86_64 GNU/Linux\n"
    segments = cut(text, "tool_output")
    assert segments is not None
    starts = segments.starts.tolist()
    assert {0, 13} <= set(starts)
    assert int(segments.lines[starts.index(13)]) == 2  # the command with its output


def test_a_table_row_is_headed_by_the_header_row() -> None:
    text = "USER  PID %MEM COMMAND\n" + "".join(
        f"root  {pid:<3} {pid / 10:.1f}  /usr/bin/worker-{pid}\n" for pid in range(1, 9)
    )
    heads = dict(heads_of(text))
    assert heads["root  5   0.5  /usr/bin/worker-5"] == "USER  PID %MEM COMMAND"
    assert "USER  PID %MEM COMMAND" not in heads


def test_stacked_tables_rows_are_headed_by_their_own_header() -> None:
    pods = "NAME       READY   STATUS    RESTARTS   AGE\n" + "".join(
        f"pod/web-{i}  1/1     Running   {i}          {i}d\n" for i in range(6)
    )
    services = "NAME          TYPE        CLUSTER-IP   PORT(S)\n" + "".join(
        f"service/s{i}    ClusterIP   10.96.0.{i}    80{i}/TCP\n" for i in range(6)
    )
    heads = dict(heads_of(pods + "\n" + services))
    assert heads["pod/web-4  1/1     Running   4          4d"].startswith("NAME       READY")
    assert heads["service/s4    ClusterIP   10.96.0.4    804/TCP"].startswith("NAME          TYPE")


def test_blocks_are_headed_by_the_line_that_opens_them() -> None:
    def folder(path: str, size: int) -> str:
        files = "".join(
            f"-rw-r--r-- 1 root root {size + i} Dec  5 05:54 m{i}.py\n" for i in range(6)
        )
        return f"{path}:\ntotal 8\n{files}"

    heads = dict(heads_of(folder("/srv/app", 100) + "\n" + folder("/srv/app/lib", 900), "log"))
    assert heads["-rw-r--r-- 1 root root 103 Dec  5 05:54 m3.py"] == "/srv/app:"
    assert heads["-rw-r--r-- 1 root root 905 Dec  5 05:54 m5.py"] == "/srv/app/lib:"
    sha = "8647f6054f81aa1e5b81122d8a6e2dced209c6e2"
    git_log = (
        f"commit {sha}\nAuthor: A <a@example.org>\nDate:   Thu Dec 3 10:00:00 2026\n\n"
        "    masking: fix\n\n server/compress/masking.py | 15 +++---\n"
        " 1 file changed, 5 insertions(+), 10 deletions(-)\n"
    )
    pairs = heads_of(git_log + git_log.replace(sha, "c5c1a5c" + sha[7:]), "log")
    assert [head for line, head in pairs if line.startswith("Date:")] == [
        f"commit {sha}",
        f"commit c5c1a5c{sha[7:]}",
    ]

    # A listing of `Key: value` records: the key that opens the text opens each record.
    def pod(name: str, restarts: int) -> str:
        return (
            f"Name:             {name}\nNamespace:        payments\nStatus:           Running\n"
            f"Containers:\n  app:\n    State:          Running\n"
            f"    Restart Count:  {restarts}\n"
        )

    pairs = heads_of(pod("ledger-api-3a37d", 0) + "\n" + pod("payments-api-7d9f8", 6), "log")
    assert [head for line, head in pairs if line.startswith("Containers:")] == [
        "Name:             ledger-api-3a37d",
        "Name:             payments-api-7d9f8",
    ]

    # nmap: each host's line heads its ports.
    def host(name: str, ip: str) -> str:
        ports = "".join(f"{p}/tcp open  svc{p}\n" for p in (22, 80, 443, 5432, 6379, 9090))
        return (
            f"Nmap scan report for {name} ({ip})\nHost is up (0.00031s latency).\n"
            f"Not shown: 994 closed tcp ports (reset)\nPORT     STATE SERVICE\n{ports}\n"
        )

    pairs = heads_of(host("db-1.internal", "10.0.3.17") + host("web-2.internal", "10.0.3.42"))
    assert [head for line, head in pairs if line.startswith("5432/tcp")] == [
        "Nmap scan report for db-1.internal (10.0.3.17)",
        "Nmap scan report for web-2.internal (10.0.3.42)",
    ]

    # ansible: each task heads its hosts' results.
    def task(name: str) -> str:
        hosts = "".join(f"ok: [web{i:02d}]\n" for i in range(6))
        return f"TASK [{name}] {'*' * 40}\n{hosts}\n"

    pairs = heads_of(task("common : Install base packages") + task("nginx : Restart nginx"))
    assert [head for line, head in pairs if line == "ok: [web03]"] == [
        f"TASK [common : Install base packages] {'*' * 40}",
        f"TASK [nginx : Restart nginx] {'*' * 40}",
    ]

    # A log has no heads but the record a trace follows (segment.traces), which heads it; a
    # heading longer than HEAD_TOKENS heads nothing.
    assert heads_of(LOG, "log") == [
        (
            "java.lang.IllegalStateException: boom",
            "2024-05-01 10:00:02 INFO worker: job send-digest started",
        )
    ]
    long_heading = "# " + "very long heading words " * 20
    assert heads_of(f"{long_heading}\n\nfirst paragraph\n\nsecond\n", "document") == []


def test_a_diff_is_cut_into_commits_files_and_hunks_each_headed_by_what_it_is_in() -> None:
    body = "".join(f"+    step_{i}()\n" for i in range(12))
    text = (
        "commit 2423573208983cea926d2a66e8f96a01679282b6\nAuthor: A <a@example.org>\n\n"
        "    Watch streams get their own admission limit\n\n"
        "diff --git a/server/admission.py b/server/admission.py\n"
        "index 1111111..2222222 100644\n--- a/server/admission.py\n+++ b/server/admission.py\n"
        "@@ -1,3 +1,4 @@\n import asyncio\n+import signal\n \n class Admission:\n"
        "@@ -40,6 +41,30 @@ class Admission:\n     def close(self):\n"
        + "".join(f"         self.drop({i})\n" for i in range(8))
        + "+\n"
        f"+def run_first():\n{body}+\n+def run_second():\n{body}"
    )
    parts = groups(text, "tool_output")
    assert [part.split("\n")[0] for part in parts] == [
        "commit 2423573208983cea926d2a66e8f96a01679282b6",  # with its Author: line
        "",  # the message
        "diff --git a/server/admission.py b/server/admission.py",  # with index, ---, +++
        "@@ -1,3 +1,4 @@",
        "@@ -40,6 +41,30 @@ class Admission:",
        # A long hunk is cut where a paragraph of its code starts, in runs of several lines.
        "+def run_first():",
        "+def run_second():",
    ]
    # The commit heads its message and its files' headers; a file's header its hunks.
    commit, header = parts[0].split("\n")[0], parts[2].split("\n")[0]
    assert heads_of(text, "tool_output") == [
        ("", commit),
        (header, commit),
        *[(part.split("\n")[0], header) for part in parts[3:]],  # every hunk and part of one
    ]
    # A commit's header with a long address still heads (up to DIFF_HEAD_TOKENS); a file
    # header too long for that leaves its hunks to the commit.
    long_path = "/".join(["very_long_directory_name"] * 12) + "/admission.py"
    other = text.replace("server/admission.py", long_path)
    pairs = heads_of(other, "tool_output")
    assert [head for line, head in pairs if line.startswith("@@")] == [commit, commit]
    # `diff -u` of two files has no `diff` line: its `---`/`+++` pair starts each file.
    plain = "".join(
        f"--- a/{name}\t2026-12-01\n+++ b/{name}\t2026-12-05\n"
        f"@@ -1,2 +1,2 @@\n-old {name}\n+new {name}\n"
        for name in ("x.py", "y.py")
    )
    assert [part.split("\n")[0] for part in groups(plain, "tool_output")] == [
        "--- a/x.py\t2026-12-01",
        "@@ -1,2 +1,2 @@",
        "--- a/y.py\t2026-12-01",
        "@@ -1,2 +1,2 @@",
    ]
    # A log that quotes a hunk header is still a log.
    quoting = LOG + "2024-05-01 10:00:09 INFO patch: applying @@ -1,2 +1,2 @@\n"
    assert len(groups(quoting)) == len(groups(LOG)) + 1


_LINE = st.text(
    alphabet=st.sampled_from(list('ab cdE:/.\t{}[]",0123456789-_é中')) | st.just(" "),
    max_size=30,
)

# A line over LONG_LINE_CHARS, which an excerpt shows by its head.
_LONG_LINE = st.builds(
    lambda word, n: " ".join([word] * n),
    st.sampled_from(["field=12", "/usr/lib", "中文", "x" * 300, "]"]),
    st.integers(min_value=130, max_value=400),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_LINE | _LONG_LINE, min_size=2, max_size=40),
    st.booleans(),
    st.sampled_from(["log", "document", None]),
)
@example(lines=["[0]", ""], final_newline=False, kind="log")  # one-line JSON: its rendering
def test_segments_cover_every_line_once_and_count_their_text_exactly(
    lines: list[str], final_newline: bool, kind: str | None
) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    segments = cut(text, kind)
    if segments is None:
        return
    # The lines an excerpt shows: the text's own, or a one-line JSON document's rendering.
    view = excerpt_lines(text)
    assert segments.total_lines == len(view)
    pieces = [
        "\n".join(view[a : a + n]) + "\n"
        for a, n in zip(segments.starts.tolist(), segments.lines.tolist(), strict=True)
    ]
    if view == text_lines(text):
        assert "".join(pieces).rstrip("\n") == text.rstrip("\n") or text.endswith("\n\n")
    # Counted as shown: a long line by its head.
    shown = ["\n".join(shown_line(line) for line in p.split("\n")) for p in pieces]
    joins = [0] + [joined_cost(p) for p in shown[1:]]
    assert segments.tokens.tolist() == [
        TOKENS.count(p) + j for p, j in zip(shown, joins, strict=True)
    ]


def test_a_line_after_punctuation_that_starts_with_a_slash_costs_its_join() -> None:
    # o200k_base reads `]\n/` as one piece: `[x]` and `/usr/lib` count one more together.
    lines = ["gcc: error: unknown type name ‘sizet’", "/tmp/broken.c:3:1: note: here"] * 12
    text = "\n".join(lines) + "\n"
    assert TOKENS.count(text) > sum(TOKENS.count(line + "\n") for line in lines)
    segments = cut(text)
    assert segments is not None and len(segments) == len(lines)
    assert int(segments.tokens.sum()) >= TOKENS.count(text)
    # An omission marker ends in `]`: a `/` line after one counts the token it merges.
    paths = [f"/usr/lib/python3.11/asyncio/module_{i}.py" for i in range(30)]
    segments = cut("\n".join(paths) + "\n")
    assert segments is not None
    planned = (
        int(segments.tokens[7]) + marker_tokens(TOKENS.count, 7) + marker_tokens(TOKENS.count, 22)
    )
    assert TOKENS.count(render_excerpt(paths, [(8, 8)])) <= planned


# Lines that often start with a slash or end in punctuation, where the tokenizer merges.
_JOINING_LINE = st.tuples(
    st.sampled_from(["", "/", "//", "/usr/", "]", "__"]),
    _LINE,
    st.sampled_from(["", ":", "]", "’", "_"]),
).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(_JOINING_LINE | _LONG_LINE, min_size=2, max_size=40), st.data())
def test_an_excerpts_planned_cost_bounds_its_texts_tokens(
    lines: list[str], data: st.DataObject
) -> None:
    """Fit plans an excerpt from these counts alone (segments shown, markers for the rest);
    the rendered text may merge tokens across any boundary, and must still fit the plan."""
    text = "\n".join(lines) + "\n"
    segments = cut(text)
    if segments is None:
        return
    shown = data.draw(st.lists(st.booleans(), min_size=len(segments), max_size=len(segments)))
    ranges: list[tuple[int, int]] = []  # 1-based, inclusive, as Fit reports them
    for start, size, show in zip(
        segments.starts.tolist(), segments.lines.tolist(), shown, strict=True
    ):
        if show and ranges and ranges[-1][1] == start:
            ranges[-1] = (ranges[-1][0], start + size)
        elif show:
            ranges.append((start + 1, start + size))
    cost = int(segments.tokens[np.asarray(shown, dtype=bool)].sum())
    all_lines = text_lines(text)
    previous = 0
    for first, last in [*ranges, (len(all_lines) + 1, len(all_lines))]:
        if first - 1 > previous:
            cost += marker_tokens(TOKENS.count, first - 1 - previous)
        previous = last
    assert TOKENS.count(render_excerpt(all_lines, ranges)) <= cost


def test_output_indented_throughout_is_cut_line_by_line_with_tracebacks_kept() -> None:
    records = [f"  worker {i}: job {i} done in {i * 3} ms" for i in range(6)]
    trace = ["  Traceback (most recent call last):", '  File "/srv/app/jobs.py", line 9, in run']
    text = "\n".join([*records, *trace, "  worker 7: job 7 done"]) + "\n"
    assert groups(text, "log") == [
        *records[:5],
        "\n".join([records[5], *trace]),
        "  worker 7: job 7 done",
    ]


def test_a_rustc_diagnostic_keeps_the_source_it_quotes_even_in_indented_output() -> None:
    # cargo's `   Compiling` lines make the output indented throughout; the message of an
    # E0308 is on a gutter line (`^^^ expected i64, found u64`), which stays with its error.
    diagnostic = list(RUSTC_E0308)
    compiling = [f"   Compiling crate{i} v0.1.{i} (/src/crate{i})" for i in range(12)]
    text = "\n".join([*compiling, *diagnostic, "   Compiling tail v0.1.0 (/src/tail)"]) + "\n"
    assert groups(text, "tool_output") == [
        *compiling,
        "\n".join(diagnostic),
        "   Compiling tail v0.1.0 (/src/tail)",
    ]


def test_a_failed_assertions_values_stay_with_the_failure() -> None:
    # xUnit prints them unindented under the indented failure.
    passed = [f"  Passed Orders.Tests.T{i} [4{i} ms]" for i in range(10)]
    failure = [
        "  Failed Orders.Tests.ShippingCostTests.FreeShipping [4 ms]",
        "  Error Message:",
        "   Assert.Equal() Failure: Values differ",
        "Expected: 0",
        "Actual:   4.99",
    ]
    text = "\n".join([*passed, *failure, "  Stack Trace:"]) + "\n"
    assert groups(text, "tool_output")[-2] == "\n".join(failure[2:])


def test_records_are_found_after_the_time_a_runner_stamps_each_line_with() -> None:
    stamp = "2026-12-05T10:02:{:02d}.1234567Z "
    passed = [f"PASS src/cart/part{i}.test.ts" for i in range(10)]
    body = [
        *passed,
        "FAIL src/checkout/api.test.ts (5.127 s)",
        "  \u25cf checkout api \u203a applies discount code before tax",
        "",
        "    Expected: 90.91",
        "    Received: 90.9",
        "PASS src/checkout/hooks.test.ts",
    ]
    lines = [stamp.format(i) + line for i, line in enumerate(body)]
    assert groups("\n".join(lines) + "\n") == [*lines[:10], "\n".join(lines[10:15]), lines[15]]
    # A level padded to width after the stamp is not indentation: each line is a record.
    padded = [f"2024-05-01T10:00:{i:02d}Z  INFO worker {i} done" for i in range(10)]
    padded[4] = "2024-05-01T10:00:04Z ERROR worker 4 failed"
    assert groups("\n".join(padded) + "\n") == padded


def test_a_cause_indented_under_a_time_of_day_stays_with_its_error() -> None:
    # dbt stamps every line with the time alone; the cause of a model's error is indented.
    runs = [
        f"09:47:{i:02d}  {i} of 40 OK created sql table model stg_orders_{i} [SUCCESS in 1.2s]"
        for i in range(12)
    ]
    error = [
        "09:47:16  Database Error in model int_order_margin (models/int_order_margin.sql)",
        "09:47:16    100051 (22012): Division by zero",
        "09:47:16    compiled Code at target/run/models/int_order_margin.sql",
        "09:47:16  ",
    ]
    done = "09:47:17  Done. PASS=39 WARN=0 ERROR=1 SKIP=0 TOTAL=40"
    assert groups("\n".join([*runs, *error, done]) + "\n") == [*runs, "\n".join(error), done]


def test_a_group_dense_in_tokens_is_split_within_the_token_cap() -> None:
    # Within the line and character caps, but hex counts many tokens per character.
    lines = ["ERROR digest mismatch"] + [f"  {i:04x} " + "9f3a7c" * 6 for i in range(20)]
    text = "\n".join(lines) + "\n"
    config = SegmentConfig(min_tokens=0, max_lines=40, max_chars=2000, max_tokens=100)
    segments = cut(text, "log", config)
    assert segments is not None and len(segments) > 1
    assert int(segments.tokens.max()) <= 100 + 1  # + what it may add after a marker
    assert int(segments.lines.sum()) == len(lines)


def test_a_line_longer_than_an_excerpt_shows_is_shown_by_its_head() -> None:
    assert shown_line("short line") == "short line"
    dump = "ERROR billing: export rejected; request dump: " + " ".join(
        f"field{i}={i * 7919 % 100000}" for i in range(1500)
    )
    head = shown_line(dump)
    kept = head[: head.index(" [... ")]
    assert dump.startswith(kept) and LONG_LINE_CHARS - 200 < len(kept) <= LONG_LINE_CHARS
    assert dump[len(kept)] == " "  # cut at a word boundary
    assert head.endswith(f" [... {len(dump) - len(kept):,} chars omitted ...]")
    unbroken = "x" * 5000
    assert shown_line(unbroken) == "x" * LONG_LINE_CHARS + " [... 4,000 chars omitted ...]"
    # A little over the limit is shown whole: its marker would cost more than it saves.
    assert shown_line("y" * (LONG_LINE_CHARS + 50)) == "y" * (LONG_LINE_CHARS + 50)
    # Any whitespace ends a head: a tab, a no-break space.
    tabbed = "\t".join(["word"] * 400)
    assert shown_line(tabbed).split(" [... ")[0] == tabbed[: tabbed.rfind("\t", 0, 1001)]
    nbsp = "\u00a0".join(["mot"] * 400)
    assert shown_line(nbsp).split(" [... ")[0] == nbsp[: nbsp.rfind("\u00a0", 0, 1001)]
    # In a log, that line is one segment counted as shown, and shown so in an excerpt.
    lines = [f"2024-05-01 10:00:{i:02d} INFO api: GET /items/{i} 200" for i in range(40)]
    lines[20] = dump
    segments = cut("\n".join(lines) + "\n")
    assert segments is not None
    at = segments.starts.tolist().index(20)
    assert segments.lines[at] == 1
    assert segments.tokens[at] == TOKENS.count(head + "\n") + joined_cost(head)
    excerpt = render_excerpt(lines, [(21, 21)])
    assert excerpt.split("\n")[1] == head


def test_excerpt_lines_show_a_redrawn_progress_bar_by_its_last_state() -> None:
    bar = "".join(f"\rdownload: {p:3d}% {p * 163 // 100}/163 MB" for p in range(0, 101, 10))
    # A state that reports a problem is shown, before the last state, however deep it is.
    failing = "".join(f"\rupload: {p}%" for p in range(0, 60, 5))
    failing += "\rERROR: upload failed: connection reset\rupload: retrying 0%"
    text = f"start\n{bar}\n{failing}\r\ndone\n"
    assert excerpt_lines(text) == [
        "start",
        "download: 100% 163/163 MB [... 10 progress updates omitted]",
        "ERROR: upload failed: connection reset | upload: retrying 0%"
        " [... 12 progress updates omitted]",
        "done",
    ]
    # Without any newline, carriage returns may be an old Mac file's line ends.
    assert excerpt_lines("one\rtwo\rthree") == ["one\rtwo\rthree"]
    # ...and so they are on a line whose every state ends in one (a Mac file with a header).
    mac = "name,qty\r" + "".join(f"item{i},{i}\r" for i in range(40))
    assert excerpt_lines(f"exported rows:\n{mac}\n") == ["exported rows:", mac]
    # A spinner's states are shorter than what would stand for them.
    assert excerpt_lines("wait |\r/\r-\r\\\ndone\n") == ["wait |\r/\r-\r\\", "done"]


def test_pytest_headers_open_blocks_only_in_the_failures_section() -> None:
    log = [f"2024-05-01 10:00:{i:02d} INFO worker: job {i} done" for i in range(30)]
    # Outside pytest's failures section such a line opens nothing: the log stays line by line.
    stray = [*log[:10], "____ summary ____", *log[10:]]
    assert len(groups("\n".join(stray) + "\n")) == len(stray)
    # Adjacent headers, and a header right before a section line, each make a record.
    report = [
        "=================================== FAILURES ===================================",
        "__________________________________ test_a __________________________________",
        "__________________________________ test_b __________________________________",
        "E   assert 1 == 2",
        "__________________________________ test_c __________________________________",
        "=========================== short test summary info ============================",
        "FAILED test_x.py::test_b - assert 1 == 2",
        *log,
    ]
    parts = groups("\n".join(report) + "\n")
    assert parts[:6] == report[:6]
    assert len(parts) == len(report)


def test_a_bar_that_reports_a_problem_in_every_state_still_shows_its_last_state() -> None:
    upload = "".join(f"\rERROR: upload stalled, retrying {p}%" for p in range(0, 100, 5))
    upload += "\rupload: 100% done"
    [line, _] = excerpt_lines(f"{upload}\ncheckpoint saved\n")
    assert line == (
        "ERROR: upload stalled, retrying 0% | ERROR: upload stalled, retrying 95%"
        " | upload: 100% done [... 18 progress updates omitted]"
    )


def test_a_segment_without_a_head_is_headed_by_the_label_it_is_indented_under() -> None:
    # `kubectl describe pod` of one pod: "which environment variables did it have?" found
    # `Environment:` alone; its lines, indented under it, are what the label's value is.
    env = "".join(f"      SETTING_{i}:  value-{i}\n" for i in range(8))
    text = (
        "Name:             payments-6c4b9d7f8-kq2xz\nNamespace:        shop-prod\n"
        "Containers:\n  payments:\n    Image:          shop/payments:2.15.0\n"
        "    Limits:\n      cpu:     1\n      memory:  768Mi\n"
        f"    Environment:\n{env}    Mounts:\n      /var/run/secrets from token (ro)\n"
        "Conditions:\n  Type              Status\n  Ready             False\n"
    )
    heads = dict(heads_of(text + "\n".join(f"  event {i} on node-{i}" for i in range(60))))
    assert heads["      SETTING_5:  value-5"] == "    Environment:"
    assert heads["      memory:  768Mi"] == "    Limits:"
    assert heads["    Image:          shop/payments:2.15.0"] == "  payments:"
    # A line back at the label's indentation is outside its block.
    assert heads["    Mounts:"] == "  payments:"
    assert "Conditions:" not in heads and "Name:             payments-6c4b9d7f8-kq2xz" not in heads
    # Pods one after another: each pod's `Name:` heads its lines, as before.
    many = dict(heads_of(text.replace("kq2xz", "aaaaa") + "\n" + text))
    assert many["      SETTING_5:  value-5"] == "Name:             payments-6c4b9d7f8-kq2xz"


def test_a_long_paragraph_of_keys_is_cut_into_each_keys_block() -> None:
    # Read as text (a note here; a `kubectl describe` whose events read as prose), one pod is
    # one paragraph: cut whole, it was a 245-token segment that no 150-token Fit could show.
    # Each key's block is a segment; a block still long is cut the same way under its label;
    # a block of other lines (the events) stays whole.
    env = "".join(f"      SETTING_{i}:  value-{i}\n" for i in range(14))
    events = "".join(f"  Normal  Pulled  {i}m  kubelet  Image already present\n" for i in range(6))
    text = (
        "Name:             payments-6c4b9d7f8-kq2xz\nNamespace:        shop-prod\n"
        "Containers:\n  app:\n    Image:          shop/app:2.15.0\n"
        f"    Limits:\n      cpu:     1\n      memory:  768Mi\n    Environment:\n{env}"
        f"Events:\n{events}\nName:             cart-7d9f-abcde\n"
    )
    assert groups(text, kind="note") == [
        "Name:             payments-6c4b9d7f8-kq2xz",
        "Namespace:        shop-prod",
        "Containers:",
        "  app:",
        "    Image:          shop/app:2.15.0",
        "    Limits:\n      cpu:     1\n      memory:  768Mi",
        "    Environment:",
        *(f"      SETTING_{i}:  value-{i}" for i in range(14)),
        f"Events:\n{events}",
        "Name:             cart-7d9f-abcde",
    ]
    # Not an outline of keys: prose, and code whose lines are statements, stay paragraphs.
    prose = "The service restarts: it reads its settings again.\n" * 8
    code = "def load(path):\n    with open(path) as f:\n        return f.read()\n" * 4
    assert groups(prose + "\n" + code, kind="note") == [prose, code.rstrip("\n")]


def test_a_paragraph_too_long_for_one_segment_is_cut_into_rows_or_short_runs() -> None:
    # `/etc/services` read as text: one paragraph of 60 lines. Cut into runs as long as a
    # segment may be (1,000 characters, about 250 tokens), the run holding `ssh` filled a
    # 300-token Fit; in runs of 250 characters, nine other rows diluted its BM25. A table's
    # rows are segments of their own; a line that is not a row goes with the row before it.
    rows = [f"svc-{i}\t\t{i}/tcp\t\t\t# service number {i}" for i in range(60)]
    rows[30] += "\n\t\t\t(also known as svc-legacy)"
    services = "".join(f"{row}\n" for row in rows)
    assert groups(services, kind="document") == rows
    # Prose (two spaces after a full stop, too) is cut into runs of at most 250 characters.
    prose = "".join(
        f"Line {i} of a long paragraph goes on.  It is prose, not a table of fields.\n"
        for i in range(30)
    )
    runs = groups(prose, kind="document")
    assert "".join(f"{run}\n" for run in runs) == prose
    assert all(len(run) + 1 <= 250 for run in runs) and 8 < len(runs) < 30
    # A paragraph within a segment's size stays whole (alone, it is not cut at all).
    short = "".join(f"svc-{i}\t\t{i}/tcp\n" for i in range(20))
    assert groups(f"{short}\nsvc-x\t\t99/tcp\n", kind="document") == [short, "svc-x\t\t99/tcp"]


def test_delimited_rows_are_a_table_too_and_a_rule_stays_with_its_header() -> None:
    # CSV, `/etc/passwd`, a Markdown table: rows of one delimiter, each a segment of its own
    # (in 250-character runs, the CSV row a question named shared 130 tokens with eight).
    csv = ["city,month,units", *(f"city-{i},2026-{i % 12 + 1:02d},{i * 7}" for i in range(60))]
    assert groups("\n".join(csv), kind="document") == csv
    passwd = [
        f"user{i}:x:{1000 + i}:{1000 + i}:User {i}:/home/user{i}:/bin/bash" for i in range(40)
    ]
    assert groups("\n".join(passwd), kind="document") == passwd
    table = ["| name | size | note |", "|---|---:|---|"]
    table += [f"| file-{i}.txt | {i * 512} | kept since release {i} |" for i in range(40)]
    assert groups("\n".join(table), kind="document") == ["\n".join(table[:2]), *table[2:]]
    # A URL's `://` holds no field: lines of links are no table.
    links = [f"See https://example.com/docs/{i} and https://example.org/{i}." for i in range(30)]
    assert len(groups("\n".join(links), kind="document")) < 30


def test_an_entry_of_very_many_short_lines_is_cut_into_about_max_segments() -> None:
    # Neighbouring short segments share one past max_segments, each group within the caps;
    # an entry under it is cut as before.
    config = SegmentConfig(min_tokens=0, max_segments=500)
    numbers = "".join(f"{i}\n" for i in range(5000))
    segments = cut(numbers, "tool_output", config)
    assert segments is not None and 400 <= len(segments) <= 500
    assert int(segments.lines.sum()) == 5000 and int(segments.lines.max()) <= config.max_lines
    assert int(segments.tokens.max()) <= config.max_tokens
    few = "".join(f"{i}\n" for i in range(300))
    assert cut(few, "tool_output", config).lines.tolist() == cut(few, "tool_output").lines.tolist()
