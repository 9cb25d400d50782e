"""`git blame` output: each run of lines from one commit under one line naming it."""

from __future__ import annotations

import random

from sharedctx_server.compress import compress, explain, missing_error_lines
from sharedctx_server.tokens import TokenCounter

AUTHORS = {"3d9478b2": "Ada Lovelace", "9e8bb71c": "Grace Hopper", "^1a552f0": "Seed Author"}


def blame(runs: list[tuple[str, list[str]]]) -> str:
    """Blame lines for `runs` of (commit, code lines), numbered from 1."""
    out, number = [], 0
    for sha, code in runs:
        for text in code:
            number += 1
            who = f"{AUTHORS[sha]} 2026-12-05 08:54:13 +0000"
            out.append(f"{sha} ({who} {number:>3}) {text}".rstrip())
    return "\n".join(out) + "\n"


WORDS = (
    "order price total stock reserve refund ledger invoice cart tax coupon shipment carrier "
    "parcel customer account balance payment gateway retry window batch export import queue"
).split()


def code(name: str, n: int) -> list[str]:
    """`n` lines of a function, each saying something else (as real code does)."""
    rng = random.Random(name)
    body = [
        f"    {rng.choice(WORDS)}_{rng.choice(WORDS)} = {rng.choice(WORDS)}"
        f"({rng.choice(WORDS)}, {rng.choice(WORDS)}.{rng.choice(WORDS)})"
        for _ in range(n - 1)
    ]
    return [f"def {name}(xs):", *body]


def test_each_run_names_its_commit_once_and_keeps_its_lines(token_counter: TokenCounter) -> None:
    text = blame([
        ("^1a552f0", code("seed", 30)),
        ("3d9478b2", code("total", 12)),
        ("^1a552f0", ["", *code("more", 20)]),
        ("9e8bb71c", ['    log.error("negative total, order refused")', *code("tail", 10)]),
    ])  # fmt: skip
    result = compress(text, count_tokens=token_counter.count, tool_name="git")
    assert result.compressor == "blame"
    assert result.compressed_tokens < result.original_tokens * 0.6
    lines = result.text.split("\n")
    assert lines[0].startswith("[git blame: 74 lines from 3 commits;")
    assert lines[1] == "^1a552f0 (Seed Author 2026-12-05) lines 1-30:"
    assert lines[2] == "  def seed(xs):" and lines[3] == "  " + code("seed", 30)[1]
    assert "3d9478b2 (Ada Lovelace 2026-12-05) lines 31-42:" in lines
    assert "^1a552f0 (Seed Author 2026-12-05) lines 43-63:" in lines
    # A line that reports a problem stays as written, prefix and all.
    raised = next(line for line in text.split("\n") if "log.error" in line)
    assert raised in lines and missing_error_lines(text, result.text) == []
    assert "9e8bb71c (Grace Hopper 2026-12-05) lines 65-74:" in lines
    assert compress(result.text, count_tokens=token_counter.count).text == result.text


def test_other_output_is_not_read_as_blame(token_counter: TokenCounter) -> None:
    log = "\n".join(f"2026-12-05 08:54:{i % 60:02d} INFO worker: job {i} done" for i in range(80))
    choice = explain(log, count_tokens=token_counter.count)
    assert all(t.name != "blame" for t in choice.trials)


def test_other_date_formats_are_blame_too(token_counter: TokenCounter) -> None:
    # `git blame --date=short` and `--date=relative`: the author and date said as written.
    runs = [("^1a552f0", code("seed", 30)), ("3d9478b2", code("total", 12))]
    default = blame(runs)
    for when, said in (("2026-12-05", "2026-12-05"), ("6 days ago", "6 days ago")):
        text = default.replace("2026-12-05 08:54:13 +0000", when)
        result = compress(text, count_tokens=token_counter.count, tool_name="git")
        assert result.compressor == "blame"
        lines = result.text.split("\n")
        assert lines[1] == f"^1a552f0 (Seed Author {said}) lines 1-30:"
        assert f"3d9478b2 (Ada Lovelace {said}) lines 31-42:" in lines
        kept = [t.strip() for t in lines[2:] if t and not t.endswith(f"{said}) lines 31-42:")]
        assert kept == [c.strip() for _, code_lines in runs for c in code_lines]
