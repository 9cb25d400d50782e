"""Any text an agent stores can be derived and indexed: the write path (compressed form,
segments, factors) and the namespace's index (terms, marks, clocks) never raise.

A reader that raised on one odd text (a table cell holding two numbers) had failed every Fit
of the namespace that held it. The texts here are drawn from the shapes tool output takes:
tables with headers in either case, rules and ragged cells, logs with times and levels,
key=value pairs, JSON, tracebacks, listings, and noise between them.
"""

from __future__ import annotations

import logging
import string
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sharedctx_server.model import EntryMeta, Kind, NewEntry, Stamp, StoredEntry
from sharedctx_server.segment import Segmenter, marks
from sharedctx_server.segment.config import SegmentConfig
from sharedctx_server.services.derive import EntryDeriver
from sharedctx_server.state.nsstate import NamespaceState
from sharedctx_server.tokens import TokenCounter

_WORDS = ["error", "total", "sum", "time", "rt", "PID", "NAME", "size", "ok", "failed", "-", "|"]
_NUMBER = st.one_of(
    st.integers(-5, 10**7).map(str),
    st.floats(0, 1e4, allow_nan=False).map(lambda x: f"{x:.3f}"),
    st.sampled_from(["12K", "1.5Gi", "250m", "45s", "6m58s", "3%", "6/1", "0:05", "2 hours"]),
)
_ODD = st.sampled_from(["2139108 0", "1 234", "12 MB", "0 0", "n/a", ""])  # cells out of line
_CELL = st.one_of(
    _NUMBER,
    st.sampled_from(_WORDS),
    st.text(string.ascii_letters + string.digits + " ._/:=-%", max_size=10),
)


@st.composite
def _table(draw: st.DrawFn) -> list[str]:
    """A header (upper, lower or mixed case) over rows whose columns are mostly numbers or
    mostly words, with an odd cell here and there, maybe under a rule."""
    width = draw(st.integers(2, 6))
    names = st.sampled_from([*_WORDS, "tottime", "Use%", "errors", "calls", "% time", "MEM"])
    case = draw(st.sampled_from([str.upper, str.lower, str]))
    names_ = [draw(names) for _ in range(width)]
    header = case("   ".join(names_))
    numeric = [draw(st.booleans()) for _ in range(width)]
    rows = [
        [
            draw(_ODD) if draw(st.integers(0, 9)) == 0 else draw(_NUMBER if number else _CELL)
            for number in numeric
        ]
        for _ in range(draw(st.integers(0, 14)))
    ]
    if draw(st.booleans()):  # aligned as ps and vmstat print: numbers to the right
        widths = [max([len(n), *(len(r[c]) for r in rows)]) for c, n in enumerate(names_)]
        lines = [
            "  ".join(
                cell.rjust(w) if number else cell.ljust(w)
                for cell, w, number in zip(row, widths, numeric, strict=True)
            )
            for row in [names_, *rows]
        ]
        header, body = case(lines[0]), lines[1:]
    else:
        gap = draw(st.sampled_from(["  ", " ", "\t", "   "]))
        body = [gap.join(row) for row in rows]
    rule = ["------ " * width] if draw(st.booleans()) else []
    return [header, *rule, *body]


_LINE = st.one_of(
    st.builds(
        "2026-12-07 10:{:02d}:{:02d} {} {} rt={} took {} ms".format,
        st.integers(0, 59),
        st.integers(0, 59),
        st.sampled_from(["INFO", "WARN", "ERROR", "DEBUG"]),
        st.text(string.ascii_lowercase + " ", max_size=20),
        _CELL,
        _CELL,
    ),
    st.builds(
        "{}={} {}: {}".format, st.sampled_from(_WORDS), _CELL, st.sampled_from(_WORDS), _CELL
    ),
    st.sampled_from(
        [
            "Traceback (most recent call last):",
            '  File "app.py", line 3, in <module>',
            "ValueError: could not convert string to float: '2139108 0'",
            '{"price": 12.5, "name": "a"},',
            "-rw-r--r-- 1 root root 4096 Apr  9  2023 python3 -> python3.11",
            "drwxr-xr-x 2 root root 4096 Dec  1 10:00 lib",
            "total 1024",
            "",
            "$ make test",
        ]
    ),
    st.text(max_size=40),
)


@st.composite
def _outputs(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        parts += draw(st.one_of(_table(), st.lists(_LINE, max_size=15)))
    return "\n".join(parts)


@cache
def _deriver() -> EntryDeriver:
    counter = TokenCounter("o200k_base")
    # Every text is cut, however short: the index's readers (marks, clocks) all run.
    segmenter = Segmenter(counter.count, SegmentConfig(min_tokens=1))
    return EntryDeriver(counter, segmenter)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_outputs(), st.sampled_from([Kind.TOOL_OUTPUT, Kind.LOG, Kind.DOCUMENT]))
def test_any_output_is_derived_and_indexed(text: str, kind: Kind) -> None:
    new = NewEntry(key="k", content=text, compressed=None, meta=EntryMeta(kind=kind, tool_name="x"))
    derived = _deriver()._derive(new)
    stored = StoredEntry(key="k", stamp=Stamp(1, 1, 1, 0, 1, 1), meta=derived.meta, content=text)
    state = NamespaceState(dim=4)
    failures: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = failures.append  # type: ignore[method-assign]
    reader = logging.getLogger(marks.__name__)
    reader.addHandler(handler)
    try:
        state.put(stored, text, None)
    finally:
        reader.removeHandler(handler)
    assert state.slot_of["k"] == 0
    # The guard that keeps a reader's failure from the namespace was not needed.
    assert not failures, failures[0].getMessage()
