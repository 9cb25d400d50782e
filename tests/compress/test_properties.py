"""Properties every compressed form has, whatever the content (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sharedctx_server.compress import (
    CompressConfig,
    carries_error,
    compress,
    explain,
    has_marker,
    missing_error_lines,
)
from sharedctx_server.compress.whitespace import normalise_lines
from sharedctx_server.fit.terminal import strip_ansi
from sharedctx_server.tokens import TokenCounter

from .strategies import UNICODE, json_documents, logs, python_traces
from .structured import STRUCTURED

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANY_CONTENT = st.one_of(
    logs(),
    json_documents(indent=2).map(lambda doc: doc[0]),
    json_documents(indent=None, long=False).map(lambda doc: doc[0]),
    python_traces(),
    STRUCTURED,
    st.text(UNICODE, min_size=400, max_size=3000),
)
KINDS = st.sampled_from([None, "message", "tool_output", "log", "document", "note"])
TOOLS = st.sampled_from([None, "pytest", "ls", "pip", "git", "some-tool"])


@PROPERTY
@given(logs(), KINDS, TOOLS)
def test_every_error_line_of_a_log_is_kept(
    token_counter: TokenCounter, text: str, kind: str | None, tool: str | None
) -> None:
    result = compress(text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    assert missing_error_lines(text, result.text) == []


@PROPERTY
@given(STRUCTURED, KINDS, TOOLS)
def test_every_error_line_of_a_structured_output_is_kept(
    token_counter: TokenCounter, text: str, kind: str | None, tool: str | None
) -> None:
    """Listings, tables, diffs, test reports, sources, HTML: whichever compressor wins."""
    result = compress(text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    assert missing_error_lines(text, result.text) == []
    if result.compressor != "none":
        # Markers say what was left out; without one, the text is only re-spaced, or shown as
        # a terminal shows it (escape sequences such as `ESC 0` gone).
        assert (
            has_marker(result.text)
            or result.text == "\n".join(normalise_lines(text.split("\n")))
            or result.text == strip_ansi(text)
        )


@PROPERTY
@given(STRUCTURED, KINDS, TOOLS)
def test_explain_agrees_with_compress(
    token_counter: TokenCounter, text: str, kind: str | None, tool: str | None
) -> None:
    choice = explain(text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    assert choice.result == compress(
        text, count_tokens=token_counter.count, kind=kind, tool_name=tool
    )
    chosen = [t for t in choice.trials if t.outcome == "chosen"]
    assert len(chosen) == (0 if choice.result.compressor == "none" else 1)
    if chosen:
        assert chosen[0].name == choice.result.compressor
        assert chosen[0].tokens == choice.result.compressed_tokens
        smaller = [t for t in choice.trials if t.tokens is not None and t.tokens < chosen[0].tokens]
        assert all(not t.outcome.startswith(("larger", "chosen")) for t in smaller)


@PROPERTY
@given(python_traces())
def test_every_error_line_of_a_trace_is_kept(token_counter: TokenCounter, text: str) -> None:
    result = compress(text, count_tokens=token_counter.count)
    assert missing_error_lines(text, result.text) == []
    assert result.text.startswith("Traceback (most recent call last):")


@PROPERTY
@given(json_documents(indent=2))
def test_indented_json_stays_valid_and_keeps_every_error_line(
    token_counter: TokenCounter, doc: tuple[str, object]
) -> None:
    text, _ = doc
    result = compress(text, count_tokens=token_counter.count, tool_name="api")
    json.loads(result.text)
    # Lines inside string values end at their \n escapes.
    assert missing_error_lines(text, result.text, escaped_newlines=True) == []


@PROPERTY
@given(json_documents(indent=2, long=False))
def test_indented_json_keeps_error_lines_byte_for_byte(
    token_counter: TokenCounter, doc: tuple[str, object]
) -> None:
    text, _ = doc
    result = compress(text, count_tokens=token_counter.count)
    # No long strings: every physical line with an error is there, as it was.
    assert missing_error_lines(text, result.text) == []


@PROPERTY
@given(json_documents(indent=None, long=False))
def test_compact_json_keeps_every_error_item_verbatim(
    token_counter: TokenCounter, doc: tuple[str, object]
) -> None:
    text, value = doc
    result = compress(text, count_tokens=token_counter.count)
    json.loads(result.text)
    items = value if isinstance(value, list) else None
    if isinstance(value, dict):
        items = value.get("results") or value["data"]["items"]
    assert isinstance(items, list)
    ascii_only = text.isascii()
    for item in items:
        source = json.dumps(item, ensure_ascii=ascii_only)
        if carries_error(source, escaped_newlines=True):
            assert source in result.text


@PROPERTY
@given(ANY_CONTENT, KINDS, TOOLS)
def test_compressing_a_compressed_form_changes_nothing(
    token_counter: TokenCounter, text: str, kind: str | None, tool: str | None
) -> None:
    once = compress(text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    twice = compress(once.text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    assert twice.text == once.text


@PROPERTY
@given(ANY_CONTENT, KINDS, TOOLS)
def test_compression_is_deterministic_and_never_inflates(
    token_counter: TokenCounter, text: str, kind: str | None, tool: str | None
) -> None:
    first = compress(text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    second = compress(text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    assert first == second
    assert first.original_tokens == token_counter.count(text)
    assert first.compressed_tokens == token_counter.count(first.text)
    if first.compressor == "none":
        assert first.text == text
    else:
        assert first.compressed_tokens < first.original_tokens


@PROPERTY
@given(st.text(UNICODE, max_size=CompressConfig().min_chars - 1), KINDS, TOOLS)
def test_small_inputs_are_untouched(
    token_counter: TokenCounter, text: str, kind: str | None, tool: str | None
) -> None:
    result = compress(text, count_tokens=token_counter.count, kind=kind, tool_name=tool)
    assert result.text == text
    assert result.compressor == "none"


@PROPERTY
@given(st.lists(st.text(UNICODE, max_size=120), min_size=20, max_size=200), KINDS)
def test_arbitrary_unicode_lines_survive(
    token_counter: TokenCounter, lines: list[str], kind: str | None
) -> None:
    text = "\n".join(lines * 2)  # repeated, so the line compressors have something to fold
    result = compress(text, count_tokens=token_counter.count, kind=kind)
    result.text.encode("utf-8")
    assert missing_error_lines(text, result.text) == []
    again = compress(result.text, count_tokens=token_counter.count, kind=kind)
    assert again.text == result.text


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(UNICODE),
    lambda inner: (
        st.lists(inner, max_size=12) | st.dictionaries(st.text(UNICODE, max_size=8), inner)
    ),
    max_leaves=40,
)


# Up to 40 nested values of up to 40 leaves each: now and then most draws of a run overran
# Hypothesis's buffer and its health check failed the run (once in a CI run here; no seed of
# 73 tried reproduced it). An overrun draw is discarded; the 25 examples are still checked.
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(JSON_VALUES, min_size=9, max_size=40),
    st.sampled_from([None, 1, 2, "\t"]),
    st.booleans(),
)
def test_any_json_array_stays_valid_and_idempotent(
    token_counter: TokenCounter, items: list[object], indent: int | str | None, ascii_only: bool
) -> None:
    text = json.dumps(items, indent=indent, ensure_ascii=ascii_only)
    result = compress(text, count_tokens=token_counter.count)
    json.loads(result.text)
    again = compress(result.text, count_tokens=token_counter.count)
    assert again.text == result.text
