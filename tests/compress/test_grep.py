"""Search results (`grep -rn`, `git grep -n`): each file's path said once."""

from __future__ import annotations

import random
import re

from sharedctx_server.compress import compress, explain, missing_error_lines
from sharedctx_server.segment import cut_segments, text_lines
from sharedctx_server.tokens import TokenCounter

WORDS = (
    "order price total stock reserve refund ledger invoice cart tax coupon shipment carrier "
    "parcel customer account balance payment gateway retry window batch export import queue"
).split()
FILES = [
    "services/billing/src/billing/ledger/entries.py",
    "services/billing/src/billing/ledger/reconcile.py",
    "services/billing/src/billing/api/handlers.py",
    "services/orders/src/orders/checkout/pricing.py",
    "services/orders/tests/checkout/test_pricing.py",
]


def grep_output(
    matches_per_file: int = 12, seed: int = 7
) -> tuple[str, list[tuple[str, int, str]]]:
    """`grep -rn` output over FILES, and its (path, number, text) triples."""
    rng = random.Random(seed)
    triples = []
    for path in FILES:
        number = 0
        for _ in range(matches_per_file):
            number += rng.randint(1, 40)
            text = (
                f"    {rng.choice(WORDS)}_{rng.choice(WORDS)} = {rng.choice(WORDS)}"
                f"({rng.choice(WORDS)}, total_{rng.choice(WORDS)})"
            )
            triples.append((path, number, text))
    return "\n".join(f"{p}:{n}:{t}" for p, n, t in triples) + "\n", triples


def read_back(form: str) -> set[tuple[str, int, str]]:
    """The (path, number, collapsed text) triples a reader gets back from the grep form."""
    got, path = set(), ""
    for line in form.split("\n")[1:]:
        heading = re.fullmatch(r"(\S+):", line)
        numbered = re.fullmatch(r"(\d+)[:-] ?(.*)", line)
        whole = re.fullmatch(r"([^\s:]+):(\d+):(.*)", line)
        if heading:
            path = heading[1]
        elif numbered and path:
            got.add((path, int(numbered[1]), numbered[2]))
        elif whole:
            got.add((whole[1], int(whole[2]), " ".join(whole[3].split())))
    return got


def test_each_file_is_named_once_and_every_line_comes_back(token_counter: TokenCounter) -> None:
    text, triples = grep_output()
    result = compress(text, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "grep"
    assert result.compressed_tokens < result.original_tokens * 0.75
    lines = result.text.split("\n")
    assert lines[0].startswith("[search results: 60 matching lines in 5 files;")
    for path in FILES:
        assert lines.count(f"{path}:") == 1
        heading = lines.index(f"{path}:")
        assert lines[heading - 1] == ""  # a block opener, as `ls -lR`'s folders
    # Nothing is left out: every line is there under its file, with its number.
    assert read_back(result.text) == {(p, n, " ".join(t.split())) for p, n, t in triples}
    assert compress(result.text, count_tokens=token_counter.count).text == result.text


def test_error_lines_stay_as_written_and_the_next_line_names_its_file_again(
    token_counter: TokenCounter,
) -> None:
    text, triples = grep_output(seed=11)
    path, number, _ = triples[3]
    raised = f'{path}:{number}:        log.error("refund exceeds the balance")'
    text = text.replace(f"{path}:{number}:{triples[3][2]}", raised)
    result = compress(text, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "grep"
    assert missing_error_lines(text, result.text) == []
    lines = result.text.split("\n")
    at = lines.index(" ".join(raised.split()))
    assert lines[at + 1] == "" and lines[at + 2] == f"{path}:"


def test_context_lines_and_separators(token_counter: TokenCounter) -> None:
    # `grep -rn -C1`: context lines read `path-number-text`, and a path may hold `-12-`.
    path = "src/v2-10-legacy/pricing.py"
    block = [
        f"{path}-11-def price(order):",
        f"{path}:12:    total = sum(item.cost for item in order.items)",
        f"{path}-13-    return total",
        "--",
        f"{path}-40-def refund(order):",
        f"{path}:41:    total = order.paid - order.fees",
        f"{path}-42-    return total",
    ]
    text = "\n".join(block * 1) + "\n"
    other, _ = grep_output(matches_per_file=6)
    result = compress(text + other, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "grep"
    lines = result.text.split("\n")
    start = lines.index(f"{path}:")
    assert lines[start + 1 : start + 8] == [
        "11- def price(order):",
        "12: total = sum(item.cost for item in order.items)",
        "13- return total",
        "--",
        "40- def refund(order):",
        "41: total = order.paid - order.fees",
        "42- return total",
    ]


def test_a_grep_result_is_headed_by_its_file_in_excerpts(token_counter: TokenCounter) -> None:
    text, _ = grep_output()
    form = compress(text, count_tokens=token_counter.count, kind="tool_output").text
    segments = cut_segments(
        form,
        kind="tool_output",
        tool_name="grep",
        original_tokens=token_counter.count(form),
        count_tokens=token_counter.count,
    )
    lines = text_lines(form)
    starts = [0, *segments.lines.cumsum().tolist()[:-1]]
    heads = segments.heads.tolist()
    for k, start in enumerate(starts):
        if re.match(r"\d+: ", lines[start]):
            head = lines[starts[heads[k]]] if heads[k] >= 0 else ""
            assert head.endswith(".py:"), (lines[start], head)


def test_other_colon_separated_output_is_not_read_as_search_results(
    token_counter: TokenCounter,
) -> None:
    log = "\n".join(f"12:00:{i % 60:02d} worker: job {i} done in {i % 7} ms" for i in range(80))
    hosts = "\n".join(f"10.0.0.{i}:8080:up latency={i} ms" for i in range(80))
    # A linter's findings carry a column: the log compressor folds them by rule instead.
    ruff = "\n".join(
        f"src/pkg/mod{i}.py:{i + 3}:1: F401 `os` imported but unused" for i in range(80)
    )
    for text in (log, hosts, ruff):
        choice = explain(text, count_tokens=token_counter.count)
        assert all(t.name != "grep" for t in choice.trials)
    # A compiler's diagnostics name a file and line too: all of them problems, kept as written.
    gcc = "\n".join(
        f"src/mod{i}.c:{i + 10}:5: warning: unused variable 'x{i}' [-Wunused-variable]"
        for i in range(40)
    )
    result = compress(gcc, count_tokens=token_counter.count, kind="tool_output")
    assert missing_error_lines(gcc, result.text) == []
