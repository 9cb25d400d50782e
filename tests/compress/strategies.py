"""Hypothesis strategies: logs, JSON documents and stack traces with error lines mixed in."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

# Text without lone surrogates: they have no UTF-8 form, so no entry can hold them.
UNICODE = st.characters(exclude_categories=["Cs"])

_NUMBER = st.integers(0, 99_999)
_STAMP = st.builds(
    lambda h, m, s, ms: f"2025-03-14 {h:02d}:{m:02d}:{s:02d},{ms:03d}",
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.integers(0, 999),
)

_ROUTINE = (
    "{ts} INFO worker: processed order {n} in {m}ms",
    "{ts} DEBUG http: GET /api/v1/items/{n} -> 200 ({m} bytes)",
    "{ts} INFO cache: hit ratio {m}% over {n} lookups",
    "-rw-r--r--  1 root root {n:>8} Nov 30 04:14 module_{m}.py",
    "test_orders.py::test_price[{n}] PASSED [ {m}%]",
    "Downloading chunk {n}/{m} ...",
)
_ERRORS = (
    "{ts} ERROR db: connection refused (attempt {n})",
    "ValueError: invalid literal for int() with base 10: '{n}'",
    "E       assert {n} == {m}",
    "E       AssertionError: expected {n} items",
    "FAILED tests/test_orders.py::test_total[{n}] - KeyError: 'id'",
    "panic: runtime error: index out of range [{n}] with length {m}",
    "java.lang.IllegalStateException: queue {n} is closed",
    "{ts} CRITICAL worker: out of memory after {n} orders",
    "{m} failed, {n} passed in 3.21s",
    "Uncaught TypeError: Cannot read properties of undefined (reading 'x{n}')",
    "error[E0308]: mismatched types in module_{n}",
    "Assertion `n < {m}' failed.",
)


def _fill(template: str, ts: str, n: int, m: int) -> str:
    return template.format(ts=ts, n=n, m=m)


routine_lines = st.builds(_fill, st.sampled_from(_ROUTINE), _STAMP, _NUMBER, _NUMBER)
error_lines = st.builds(_fill, st.sampled_from(_ERRORS), _STAMP, _NUMBER, _NUMBER)
noise_lines = st.text(UNICODE, max_size=80).map(lambda s: s.replace("\n", " "))


@st.composite
def logs(draw: st.DrawFn, min_lines: int = 40, max_lines: int = 300) -> str:
    """Line-oriented output: runs of routine lines, error lines, noise, blanks."""
    lines: list[str] = []
    target = draw(st.integers(min_lines, max_lines))
    while len(lines) < target:
        pick = draw(st.integers(0, 9))
        if pick <= 4:
            template = draw(st.sampled_from(_ROUTINE))
            for _ in range(draw(st.integers(1, 30))):
                lines.append(_fill(template, draw(_STAMP), draw(_NUMBER), draw(_NUMBER)))
        elif pick <= 6:
            lines.append(draw(error_lines))
        elif pick == 7:
            lines.append(draw(noise_lines))
        elif pick == 8:
            lines.extend([""] * draw(st.integers(1, 3)))
        else:
            lines.append(" \t " + draw(routine_lines) + "   ")
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


_STATUS = st.sampled_from(["ok", "ok", "ok", "queued", "error: timeout", "failed", "done"])
_MESSAGE = st.one_of(
    st.text(UNICODE, max_size=40),
    error_lines,
    routine_lines,
)


@st.composite
def long_strings(draw: st.DrawFn) -> str:
    """A multi-line string value (a README, a captured log) with error lines inside."""
    parts = draw(st.lists(st.one_of(routine_lines, error_lines, noise_lines), min_size=5))
    text = "\n".join(parts)
    return text + "\n" + "filler line of the description\n" * draw(st.integers(0, 60))


_UNIFORM_MESSAGE = st.one_of(st.just("order processed"), st.just("order processed"), error_lines)


@st.composite
def records(draw: st.DrawFn, long: bool, uniform: bool = False) -> dict[str, Any]:
    """One item of a JSON array, shaped like API results (`uniform`: near-duplicates)."""
    record: dict[str, Any] = {
        "id": draw(_NUMBER),
        "name": draw(
            st.sampled_from(["alpha", "beta"]) if uniform else st.text(UNICODE, max_size=12)
        ),
        "status": draw(st.just("ok") if uniform else _STATUS),
        "message": draw(_UNIFORM_MESSAGE if uniform else _MESSAGE),
    }
    if draw(st.booleans()):
        record["tags"] = draw(st.lists(st.sampled_from(["a", "b", "prod", "eu"]), max_size=4))
    if long and draw(st.integers(0, 4)) == 0:
        record["description"] = draw(long_strings())
    return record


@st.composite
def json_documents(draw: st.DrawFn, indent: int | None, long: bool = True) -> tuple[str, Any]:
    """A JSON text (indented or compact) and its value: an array, or objects holding one."""
    uniform = draw(st.booleans())
    items = draw(st.lists(records(long, uniform), min_size=5, max_size=80))
    shape = draw(st.integers(0, 2))
    value: Any = items
    if shape == 1:
        value = {"count": len(items), "results": items}
    elif shape == 2:
        value = {"data": {"page": 1, "items": items}, "ok": True}
    ascii_only = draw(st.booleans())
    return json.dumps(value, indent=indent, ensure_ascii=ascii_only), value


@st.composite
def python_traces(draw: st.DrawFn) -> str:
    """A Python traceback through `depth` frames, optionally chained."""

    def block(depth: int, exc: str) -> list[str]:
        lines = ["Traceback (most recent call last):"]
        for i in range(depth):
            lines.append(f'  File "/srv/app/layer_{i}.py", line {10 + i}, in step_{i}')
            lines.append(f"    return step_{i + 1}(payload)")
        lines.append(exc)
        return lines

    depth = draw(st.integers(1, 40))
    lines = block(depth, draw(error_lines))
    if draw(st.booleans()):
        cause = block(draw(st.integers(1, 10)), "KeyError: 'timeout'")
        lines = [*cause, "", "The above exception was the direct cause of the following:", ""]
        lines += block(depth, draw(error_lines))
    return "\n".join(lines) + "\n"


def letters_name(i: int) -> str:
    """The i-th name without digits (a, b, ..., z, ba, bb, ...): distinct names that masking
    numbers leaves distinct."""
    out = ""
    while True:
        out, i = chr(ord("a") + i % 26) + out, i // 26
        if i == 0:
            return out
