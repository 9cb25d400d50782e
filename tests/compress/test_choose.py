"""How the compressor is chosen: who competes, the smallest safe result, the explanation."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.compress import CompressConfig, compress, explain, line_has_error
from sharedctx_server.compress.error_lines import (
    ErrorMemo,
    JudgedLines,
    carries_error,
    error_flags,
    missing_error_lines,
)
from sharedctx_server.compress.explanation import explanation_data, explanation_lines
from sharedctx_server.compress.select import fingerprints
from sharedctx_server.compress.sizer import optimal_k
from sharedctx_server.compress.whitespace import collapse_ws
from sharedctx_server.fit import (
    compute_optimal_k,
    count_clusters,
    count_unique_simhash,
    sizer_profile,
)
from sharedctx_server.fit.error_signal import _SIGNALS
from sharedctx_server.tokens import TokenCounter

from .strategies import UNICODE, error_lines, noise_lines, routine_lines


def _listing(n: int = 400) -> str:
    return "\n".join(
        f"-rw-r--r-- 1 root root {i * 37 % 9000:>5} Nov 30 04:14 module_{w}_{i}.py"
        for i, w in enumerate(["alpha", "beta", "gamma", "delta"] * (n // 4))
    )


def test_the_smallest_safe_result_wins_and_the_others_say_why(token_counter: TokenCounter) -> None:
    # Three quarters a listing: the listing and the generic line compressor both compete.
    text = _listing(300) + "\n" + "\n".join(f"step {i}: copied block {i}" for i in range(100))
    choice = explain(text, count_tokens=token_counter.count)
    names = {t.name: t for t in choice.trials}
    assert {"listing", "log"} <= set(names)
    chosen = names[choice.result.compressor]
    assert chosen.outcome == "chosen"
    other = names["log" if chosen.name == "listing" else "listing"]
    assert other.outcome.startswith("larger than") or other.outcome.startswith("not smaller")
    if other.tokens is not None:
        assert other.tokens >= chosen.tokens  # type: ignore[operator]


def test_a_structural_compressor_that_understands_it_all_runs_alone(
    token_counter: TokenCounter,
) -> None:
    choice = explain(_listing(), count_tokens=token_counter.count, tool_name="ls")
    assert choice.result.compressor == "listing"
    log = next(t for t in choice.trials if t.name == "log")
    assert log.outcome == "not run"
    assert "listing understood 100%" in log.reason


def test_a_structure_read_whole_is_not_outlined_as_another_that_reads_a_part(
    token_counter: TokenCounter,
) -> None:
    # `diff -ru` of Python files: every line is the diff's, most also read as Python code.
    def changed(name: str) -> str:
        hunks = "".join(
            f"@@ -{10 * i},7 +{10 * i},7 @@\n     from email.parser import Parser\n"
            f"-    return Parser(*args).parsestr(s{i})\n+    return  Parser(*args).parsestr(s{i})\n"
            f" \n def message_from_{i}(s, *args, **kws):\n"
            for i in range(12)
        )
        header = f"diff -ru a/{name} b/{name}\n--- a/{name}\t2026-12-01\n+++ b/{name}\t2026-12-05\n"
        return header + hunks

    text = "Only in b: NEWS.txt\n" + "".join(changed(f"pkg/m{i}.py") for i in range(6))
    choice = explain(text, count_tokens=token_counter.count)
    assert choice.result.compressor == "diff"
    source = next(t for t in choice.trials if t.name == "source")
    assert source.outcome == "not run" and source.reason.startswith("diff read 100% of the lines")
    assert all(f"pkg/m{i}.py" in choice.result.text for i in range(6))


def test_the_generic_compressor_runs_when_the_structural_one_saves_nothing(
    token_counter: TokenCounter,
) -> None:
    # A table where every row carries an error: the table keeps them all and saves nothing.
    rows = ["NAME STATUS RESTARTS AGE"]
    rows += [f"pod-{i} Error {i} {i}d" for i in range(40)]
    choice = explain("\n".join(rows * 3), count_tokens=token_counter.count)
    ran = {t.name for t in choice.trials if t.outcome != "not run"}
    assert "table" in ran and choice.result.compressor in {"log", "table", "none"}


def test_a_message_is_compressed_only_when_nearly_all_of_it_is_structure(
    token_counter: TokenCounter,
) -> None:
    mixed = _listing(60) + "\n" + "\n".join(f"I think line {i} matters because." for i in range(60))
    choice = explain(mixed, count_tokens=token_counter.count, kind="message")
    listing = next((t for t in choice.trials if t.name == "listing"), None)
    assert listing is not None and listing.outcome == "not run"
    assert "under the 90% it needs" in listing.reason


def test_the_explanation_reads_for_people_and_programs(token_counter: TokenCounter) -> None:
    choice = explain(_listing(), count_tokens=token_counter.count, tool_name="ls")
    lines = explanation_lines(choice)
    assert lines[0].startswith("listing: ")
    assert any(line.strip().startswith("listing  chosen") for line in lines)
    assert any(line.startswith("left out by listing: ") for line in lines)
    data = explanation_data(choice)
    assert data["trials"][0]["compressor"] == "listing"
    assert data["trials"][0]["outcome"] == "chosen"
    small = explain("tiny", count_tokens=token_counter.count)
    assert small.note.startswith("under 512 characters")
    assert explanation_lines(small)[1].startswith("why: under 512 characters")


def test_compression_of_the_normalised_form_is_a_fixpoint(token_counter: TokenCounter) -> None:
    prose = ("A   paragraph   with    extra   spaces.\n\n\n\n" * 200).strip()
    once = compress(prose, count_tokens=token_counter.count, kind="document")
    assert once.compressor == "text"
    assert compress(once.text, count_tokens=token_counter.count, kind="document").text == once.text


def test_new_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        CompressConfig(structural_min_share=1.5)
    with pytest.raises(ValueError):
        CompressConfig(listing_max_names=-1)
    with pytest.raises(ValueError):
        CompressConfig(run_period=0)


LINES = st.lists(st.one_of(routine_lines, error_lines, noise_lines, st.text(UNICODE, max_size=50)))


@settings(max_examples=60, deadline=None)
@given(LINES)
def test_the_error_scan_finds_exactly_the_error_lines(lines: list[str]) -> None:
    expected = [line_has_error(line) for line in lines]
    assert error_flags(lines) == expected
    assert ErrorMemo().flags(lines) == expected
    memo = ErrorMemo()
    assert [memo(line) for line in lines] == expected


@pytest.mark.parametrize("signal", range(len(_SIGNALS)))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_error_scan_misses_no_line_an_error_signal_matches(signal: int, data: Any) -> None:
    # The scan's vocabulary is written apart from the signals' (narrower, for speed): any
    # text a signal's pattern matches must pass it, or a new signal's lines would be dropped
    # by the compressors without a word (the linker's `undefined reference` once was).
    line = collapse_ws(data.draw(st.from_regex(_SIGNALS[signal].pattern)))
    assert not line_has_error(line) or (ErrorMemo()(line) and error_flags([line] * 4) == [True] * 4)


# Lines joined by newlines and by `\n` escapes, some escapes themselves escaped (`\\n`).
JOINED = st.lists(
    st.tuples(
        st.one_of(routine_lines, error_lines, noise_lines), st.sampled_from(["\n", "\\n", "\\\\n"])
    ),
    max_size=30,
).map(lambda parts: "".join(line + sep for line, sep in parts))


@settings(max_examples=60, deadline=None)
@given(JOINED, st.booleans(), st.data())
def test_judged_lines_answer_as_the_slices_would(
    text: str, escaped: bool, data: st.DataObject
) -> None:
    judged = JudgedLines(text, ErrorMemo(), escaped_newlines=escaped)
    assert judged.flags == [line_has_error(u) for u in judged.units]
    for _ in range(20):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
        piece = text[start:end]
        assert judged.carries_error(start, end) == carries_error(
            piece, escaped_newlines=escaped, is_error=line_has_error
        )
        assert judged.is_error_at(start, end) == line_has_error(piece)
    other = data.draw(JOINED)
    lost = missing_error_lines(text, other, escaped_newlines=escaped)
    assert judged.lost(other) == [" ".join(u.split()) for u in lost]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(routine_lines, error_lines), min_size=0, max_size=80), st.integers(0, 2))
def test_the_sizer_gives_the_fit_sizers_answer(items: list[str], which: int) -> None:
    profile = sizer_profile(["conservative", "moderate", "aggressive"][which])
    prints = fingerprints(items)
    assert count_clusters(prints.tolist()) == count_unique_simhash(items)
    assert optimal_k(items, prints, profile) == compute_optimal_k(
        items, profile.bias, profile.min_k
    )


def test_the_sizer_agrees_on_large_lists() -> None:
    rng = random.Random(9)
    items = [f"worker {rng.randint(0, 40)} handled {rng.choice('abcdef')} job" for _ in range(3000)]
    profile = sizer_profile("moderate")
    assert optimal_k(items, fingerprints(items), profile) == compute_optimal_k(items, 1.0, 3)
