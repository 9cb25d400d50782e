"""The log compressor: similar runs folded with counts, errors kept with context, sized cap."""

from __future__ import annotations

import random
import re

from sharedctx_server.compress import (
    CompressConfig,
    compress,
    explain,
    line_has_error,
    missing_error_lines,
)
from sharedctx_server.compress.masking import line_keys
from sharedctx_server.tokens import TokenCounter

from ..support.tool_outputs import CARGO_BUILD_ERRORS, PYTEST_FAILURES, RUSTC_E0308
from .strategies import letters_name

COUNTED = re.compile(r"^\[\.\.\. (\d+) (?:similar lines?|lines? omitted)\]$")


def _accounted_lines(out: str) -> int:
    """Input lines the output stands for: kept lines plus the counts in its markers."""
    total = 0
    for line in out.split("\n"):
        m = COUNTED.match(line)
        total += int(m.group(1)) if m else 1
    return total


def test_a_run_of_similar_lines_becomes_first_count_last(token_counter: TokenCounter) -> None:
    lines = ["starting sync"]
    lines += [f"2025-01-02 10:00:{i % 60:02d} INFO synced file {i} of 45" for i in range(45)]
    lines += ["sync finished"]
    text = "\n".join(lines)
    out = compress(text, count_tokens=token_counter.count, kind="log").text.split("\n")
    assert out == [
        "starting sync",
        lines[1],
        "[... 43 similar lines]",
        lines[45],
        "sync finished",
    ]


def test_distinct_error_lines_never_fold_into_a_count(token_counter: TokenCounter) -> None:
    lines = [f"10:00:{i:02d} ERROR upload {i} failed: disk full" for i in range(40)]
    text = "\n".join(["begin", *lines, "end"])
    result = compress(text, count_tokens=token_counter.count, kind="log")
    assert missing_error_lines(text, result.text) == []


def test_distinct_warning_lines_never_fold_into_a_count(token_counter: TokenCounter) -> None:
    # pip prints one such warning per folder; folding them hid four of thirteen.
    lines = [
        f"WARNING: Location '/srv/wheels/pkg{i}/' is ignored: it is not a URL" for i in range(12)
    ]
    text = "\n".join(["Collecting rich", *lines, *[f"Installing pkg{i}" for i in range(30)]])
    out = compress(text, count_tokens=token_counter.count, kind="log").text.split("\n")
    assert all(line in out for line in lines)


def test_identical_error_lines_fold_because_the_line_is_still_there(
    token_counter: TokenCounter,
) -> None:
    text = "\n".join(["begin", *["ERROR: connection refused"] * 40, "end"])
    out = compress(text, count_tokens=token_counter.count, kind="log").text
    assert out.split("\n") == [
        "begin",
        "ERROR: connection refused",
        "[... 38 similar lines]",
        "ERROR: connection refused",
        "end",
    ]


def _service_log(warn_at: int = 250, error_at: int = 400) -> str:
    lines = []
    for i in range(600):
        lines.append(f"2025-01-02 10:{i // 60:02d}:{i % 60:02d} INFO handled request {i}")
        lines.append(f"2025-01-02 10:{i // 60:02d}:{i % 60:02d} DEBUG cache lookup key=k{i * 7}")
        if i == warn_at:
            lines.append("2025-01-02 10:04:10 WARNING retrying upstream call (attempt 2)")
        if i == error_at:
            lines.append("2025-01-02 10:06:40 ERROR upstream returned 503; giving up")
    return "\n".join(lines)


def test_error_and_warning_lines_keep_their_context(token_counter: TokenCounter) -> None:
    text = _service_log()
    source = text.split("\n")
    out = compress(text, count_tokens=token_counter.count, kind="log").text.split("\n")
    for needle in ("ERROR upstream returned 503", "WARNING retrying upstream"):
        at = next(i for i, line in enumerate(source) if needle in line)
        kept = out.index(source[at])
        assert out[kept - 1] == source[at - 1]
        assert out[kept + 1] == source[at + 1]


def _shuffled_log(lines: int = 1200, seed: int = 7) -> str:
    """Lines of six kinds in no fixed order: no run repeats, so only the sizer's cap cuts."""
    rng = random.Random(seed)
    kinds = (
        "INFO handled request {i}",
        "DEBUG cache lookup key=k{i}",
        "INFO user {i} signed in",
        "DEBUG pool size={i}",
        "INFO wrote {i} bytes to disk",
        "DEBUG heartbeat {i} ok",
    )
    return "\n".join(
        f"2025-01-02 10:{i // 600:02d}:{i % 60:02d} " + rng.choice(kinds).format(i=i)
        for i in range(lines)
    )


def test_alternating_lines_fold_as_one_run(token_counter: TokenCounter) -> None:
    # Two kinds of lines in turn (a request and its cache lookup): one run, both shown.
    text = _service_log(warn_at=20, error_at=30)
    result = compress(text, count_tokens=token_counter.count, kind="log")
    assert result.compressed_tokens < result.original_tokens / 20
    assert "similar lines]" in result.text
    assert _accounted_lines(result.text) == len(text.split("\n"))
    out = result.text.split("\n")
    assert out[:2] == text.split("\n")[:2]
    assert out[-1] == text.split("\n")[-1]
    assert missing_error_lines(text, result.text) == []


def test_the_cap_marks_every_left_out_stretch_with_its_line_count(
    token_counter: TokenCounter,
) -> None:
    # No run to fold: the sizer sees the information saturate and keeps few lines.
    text = _shuffled_log()
    result = compress(text, count_tokens=token_counter.count, kind="log")
    assert result.compressor == "log"
    assert result.compressed_tokens < result.original_tokens / 4
    assert "lines omitted]" in result.text
    assert _accounted_lines(result.text) == len(text.split("\n"))
    out = result.text.split("\n")
    assert out[:3] == text.split("\n")[:3]
    assert out[-3:] == text.split("\n")[-3:]


def test_the_tool_profile_sets_how_much_is_kept(token_counter: TokenCounter) -> None:
    text = _shuffled_log(seed=11)

    def kept(tool: str) -> int:
        return compress(text, count_tokens=token_counter.count, tool_name=tool).compressed_tokens

    # ls is aggressive, pytest conservative; an unknown tool gets the moderate default.
    assert kept("ls") <= kept("unknown-tool") <= kept("pytest")
    config = CompressConfig(default_profile="aggressive")
    aggressive = compress(text, count_tokens=token_counter.count, config=config)
    assert aggressive.compressed_tokens <= kept("unknown-tool")


def test_whitespace_is_normalised_but_indentation_kept(token_counter: TokenCounter) -> None:
    lines = [f"step {i}:   value =\t\t{i % 3}   " for i in range(12)] + [
        "",
        "",
        "",
        "    indented   x",
    ]
    text = "\n".join(lines * 6)
    out = compress(text, count_tokens=token_counter.count, kind="log").text
    assert "   " not in out.replace("    indented", "")
    assert "\n\n\n" not in out
    assert "    indented x" in out


def test_indentation_after_a_runners_stamp_is_kept() -> None:
    from sharedctx_server.compress.whitespace import normalise_lines

    stamp = "2026-12-05T21:00:00.9650000Z "
    lines = [f"{stamp}with:", f"{stamp}  repository:   acme/shop", f"{stamp}Syncing   acme/shop"]
    assert normalise_lines(lines) == [
        f"{stamp}with:",
        f"{stamp}  repository: acme/shop",  # nested under `with:`
        f"{stamp}Syncing acme/shop",
    ]
    assert normalise_lines(
        ["09:47:16    100051 (22012):   Division by zero", "10:00:01 INFO   up"]
    ) == [
        "09:47:16    100051 (22012): Division by zero",
        "10:00:01 INFO up",
    ]


def test_an_error_line_after_a_bare_e_line_is_kept() -> None:
    # pytest's detail lines start "E"; a bare "E" line once hid the line after it from the
    # error scan, and that line then folded into a run of similar lines.
    words = (
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
        "rho sigma tau upsilon phi chi psi omega"
    )
    line = "pool worker {i} " + words + " batch {j} in {k} ms"
    for at in range(1, 40):
        lines = [line.format(i=i, j=i * 7, k=i % 13) for i in range(40)]
        lines[at:at] = ["E", "E " + line.format(i=99, j=5, k=3)]
        content = "\n".join(lines)
        out = compress(content, count_tokens=lambda s: len(s.split()), kind="log").text
        # Judged line by line, not through the scan under test.
        kept = set(out.split("\n"))
        assert [x for x in lines if line_has_error(x) and x not in kept] == [], at


def test_lines_that_differ_by_the_names_they_carry_fold_as_one_run(
    token_counter: TokenCounter,
) -> None:
    # dpkg.log: three statements per package, each naming a different package.
    lines = []
    for i in range(120):
        pkg = f"lib{letters_name(i * 7)}-dev:amd64"
        lines += [
            f"2026-05-20 16:49:{i % 60:02d} install {pkg} <none> {i % 5}.{i}-1",
            f"2026-05-20 16:49:{i % 60:02d} status half-installed {pkg} {i % 5}.{i}-1",
            f"2026-05-20 16:49:{i % 60:02d} status unpacked {pkg} {i % 5}.{i}-1",
        ]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, kind="log")
    assert result.compressed_tokens < 0.2 * result.original_tokens
    out = result.text.split("\n")
    assert out[:2] == lines[:2] and out[-1] == lines[-1]
    assert _accounted_lines(result.text) == len(lines)


def test_rare_words_are_masked_only_on_lines_with_a_skeleton() -> None:
    skeleton = [f"session opened for user {letters_name(i)} by sshd" for i in range(20)]
    prose = [" ".join(letters_name(i + k) for k in (0, 50, 90, 130)) for i in range(20)]
    masked = line_keys(skeleton + prose)
    assert set(masked[:20]) == {"session opened for user <*> by sshd"}
    assert masked[20:] == prose  # nothing common to stand on: left as written
    assert line_keys(skeleton[:3]) == skeleton[:3]  # too few lines to tell


def test_pytest_failing_source_lines_are_kept_however_far_from_their_explanation(
    token_counter: TokenCounter,
) -> None:
    # `pytest -q` with a failure raised a call down: each call has its `>` line, and the `E`
    # lines come only at the bottom of the block. Whole, it is a test report (whose failures
    # stay whole); without its line of dots, no test passed that a report could count, and
    # the log compressor reads it.
    report = compress(PYTEST_Q, count_tokens=token_counter.count, kind="tool_output")
    assert report.compressor in ("tests", "none") and report.text == PYTEST_Q
    assert explain(PYTEST_Q, count_tokens=token_counter.count).trials[0].name == "tests"
    text = "\n".join(line for line in PYTEST_Q.split("\n") if "[100%]" not in line)
    out = compress(text, count_tokens=token_counter.count, kind="tool_output").text
    assert out != text
    kept = [" ".join(line.split()) for line in out.split("\n")]
    assert '> assert reserve(warehouse, 9)["available"] == 0' in kept
    assert '> assert warehouse["sku"].startswith("GADGET")' in kept


PYTEST_Q = (
    """plugins/loop.py:306: DeprecationWarning: the fixture loop scope is unset.
The event loop scope for asynchronous fixtures will default to the fixture scope. Future \
versions will default the loop scope for asynchronous fixtures to "function" scope. Set the \
default fixture loop scope explicitly in order to avoid unexpected behavior in the future.

  warnings.warn(DeprecationWarning(LOOP_SCOPE_UNSET))
.FF............F                                                         [100%]
"""
    + PYTEST_FAILURES
)


def test_a_quoted_sources_gutter_keeps_its_spacing(token_counter: TokenCounter) -> None:
    # Collapsed, the caret would point at another column of the quoted line.
    frame = [
        "worker.c:7:36: error: 'const struct config' has no member named 'timeout_ms'",
        "    7 |     return c->port + c->retries * c->timeout_ms;",
        "      |                                    ^~",
    ]
    noise = [f"worker.c: note: step {i} of the build   done" for i in range(40)]
    out = compress("\n".join(noise + frame), count_tokens=token_counter.count, kind="log").text
    assert all(line in out.split("\n") for line in frame)
    assert "step 39 of the build done" in out  # elsewhere, inner runs still collapse


def _pods(oom_in: int, count: int = 6) -> str:
    """`kubectl describe pods`: one pod was OOMKilled, each pod's container and status lines
    alike; the pod's `Name:` line is where the block says which pod it is."""
    blocks = []
    for p in range(count):
        state = (
            "    Last State:     Terminated\n      Reason:       OOMKilled\n"
            "      Exit Code:    137\n"
            if p == oom_in
            else "    Last State:     Running\n"
        )
        blocks.append(
            f"Name:             svc-{p}-7d9f8b6c5-x{p}kqp\nNamespace:        payments\n"
            f"Node:             ip-10-0-2-{p}.internal\nStatus:           Running\n"
            f"IP:               10.244.2.{p}\nContainers:\n  app:\n"
            f"    Image:          registry.example/svc-{p}:1.{p}.0\n"
            f"    State:          Running\n{state}"
            f"    Ready:          True\n    Restart Count:  {p}\n"
            + "".join(f"    Mount {m}:        /var/run/secrets/{p}/{m}\n" for m in range(8))
        )
    return "\n".join(blocks)


def test_an_error_line_keeps_the_line_that_opens_its_block(token_counter: TokenCounter) -> None:
    # Without its pod's `Name:` line, OOMKilled read as the previous pod's.
    text = _pods(oom_in=3)
    out = compress(text, count_tokens=token_counter.count, kind="tool_output").text.split("\n")
    assert out != text.split("\n")
    at = out.index("      Reason: OOMKilled")
    names = [line for line in out[:at] if line.startswith("Name:")]
    assert names[-1] == "Name: svc-3-7d9f8b6c5-x3kqp"


def test_what_explains_an_error_is_kept_after_it(token_counter: TokenCounter) -> None:
    # rustc says what is wrong on a caret line under the quoted source; a test runner says it
    # on Expected: and Received: lines. Neither says "error".
    rustc = list(RUSTC_E0308[:8])  # up to the caret that says what is wrong
    jest = [
        "FAIL src/checkout/api.test.ts (5.127 s)",
        "  ● checkout api › applies discount code before tax",
        "    expect(received).toBe(expected) // Object.is equality",
        "    Expected: 90.91",
        "    Received: 90.9",
    ]
    noise = _shuffled_log(600).split("\n")  # nothing folds: the sizer's cap cuts
    for block in (rustc, jest):
        text = "\n".join(noise[:300] + block + noise[300:])
        out = compress(text, count_tokens=token_counter.count, kind="tool_output").text
        assert out != text
        kept = [" ".join(line.split()) for line in out.split("\n")]
        assert " ".join(block[-1].split()) in kept
    # The source line the carets point into and the fix the compiler suggests, too.
    text = "\n".join(CARGO_BUILD_ERRORS)
    kept = compress(text, count_tokens=token_counter.count, kind="tool_output").text.split("\n")
    assert len(kept) < len(CARGO_BUILD_ERRORS)
    for line in (
        "4 |     v.iter().sum()",
        "help: try using a conversion method",
        '8 |     m.insert("a".to_string(), 1);',
    ):
        assert line in kept, line


def test_a_runs_summary_is_kept_wherever_it_is(token_counter: TokenCounter) -> None:
    # terraform prints its plan's summary before a closing note; nothing in it says "error".
    noise = _shuffled_log(600).split("\n")
    summaries = ["Plan: 15 to add, 10 to change, 2 to destroy.", "ok=12 changed=3 failed=0"]
    text = "\n".join(noise[:200] + summaries[:1] + noise[200:400] + summaries[1:] + noise[400:])
    out = compress(text, count_tokens=token_counter.count, kind="tool_output").text.split("\n")
    assert len(out) < 100
    assert all(summary in out for summary in summaries)
    # One count is no summary: "wrote 3 bytes" lines are not all kept.
    assert sum(1 for line in out if "wrote" in line) < 20


def test_what_a_terraform_plan_does_to_each_resource_is_kept(token_counter: TokenCounter) -> None:
    def resource(i: int) -> list[str]:
        return [
            f'  # aws_route53_record.svc["svc{i:02d}"] will be created',
            '  + resource "aws_route53_record" "svc" {',
            "      + id      = (known after apply)",
            f'      + name    = "svc{i:02d}.internal.example.com"',
            "      + ttl     = 300",
            '      + type    = "A"',
            "    }",
            "",
        ]

    lines = ["Terraform will perform the following actions:", ""]
    for i in range(30):
        lines += resource(i)
    lines.append("Plan: 30 to add, 0 to change, 0 to destroy.")
    out = compress("\n".join(lines), count_tokens=token_counter.count).text.split("\n")
    assert [line for line in out if "will be created" in line] == [
        f'  # aws_route53_record.svc["svc{i:02d}"] will be created' for i in range(30)
    ]


def test_what_curl_sent_and_what_came_back_is_kept(token_counter: TokenCounter) -> None:
    # `curl -v`: the request and status lines among headers and bodies that look alike.
    def exchange(path: str, status: str, body: list[str]) -> list[str]:
        return [
            "*   Trying 127.0.0.1:8765...",
            "* Connected to 127.0.0.1 (127.0.0.1) port 8765 (#0)",
            f"> GET {path} HTTP/1.1", "> Host: 127.0.0.1:8765", "> User-Agent: curl/7.88.1",
            "> Accept: */*", ">", "* HTTP 1.0, assume close after body",
            f"< HTTP/1.0 {status}", "< Server: SimpleHTTP/0.6 Python/3.11.7",
            "< Date: Sat, 05 Dec 2026 16:20:33 GMT", "< Content-type: text/html; charset=utf-8",
            "<", "{ [1870 bytes data]", *body, "* Closing connection 0",
        ]  # fmt: skip

    listing = [f'<li><a href="pkg_{i}/">pkg_{i}/</a></li>' for i in range(200)]
    page = ["<html>", "  <head>", "    <title>Error response</title>", "  </head>", "  <body>",
            "    <h1>Error response</h1>", "    <p>Message: File not found.</p>", "  </body>",
            "</html>"]  # fmt: skip
    lines = [*exchange("/", "200 OK", listing), *exchange("/missing.json", "404 Not found", page)]
    out = compress("\n".join(lines), count_tokens=token_counter.count, kind="tool_output")
    kept = out.text.split("\n")
    assert out.compressor == "log" and len(kept) < 40
    exchanged = [line for line in lines if line.startswith(("> GET", "< HTTP"))]
    assert len(exchanged) == 4 and all(line in kept for line in exchanged)


def test_what_a_plan_destroys_or_replaces_is_kept_as_a_warning(
    token_counter: TokenCounter,
) -> None:
    destructive = [
        "  # aws_db_instance.main must be replaced",
        '      ~ identifier = "shop-prod" # forces replacement',
        "  # aws_iam_role_policy.legacy will be destroyed",
    ]
    noise = _shuffled_log(600).split("\n")
    text = "\n".join(noise[:200] + destructive[:2] + noise[200:400] + destructive[2:] + noise[400:])
    out = compress(text, count_tokens=token_counter.count, kind="tool_output").text.split("\n")
    assert len(out) < 120
    kept = [" ".join(line.split()) for line in out]
    assert all(" ".join(line.split()) in kept for line in destructive)


def test_every_undefined_reference_of_a_link_is_kept(token_counter: TokenCounter) -> None:
    lines = [f"gcc -c src/module_{i}.c -o build/module_{i}.o -O2 -Wall" for i in range(400)]
    for i, at in enumerate((50, 120, 200, 260, 390)):
        lines[at] = f"/usr/bin/ld: build/m{at}.o:(.text+0x{i}1): undefined reference to `f{i}'"
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, kind="log")
    assert result.compressed_tokens < 0.5 * result.original_tokens
    assert missing_error_lines(text, result.text) == []
    assert sum("undefined reference" in line for line in result.text.split("\n")) == 5


def test_a_folded_run_keeps_the_order_of_what_it_shows(token_counter: TokenCounter) -> None:
    # Two requests, then publishes and requests alternating: the run's templates are its
    # lines 0 and 2. Shown first with one marker after them, line 1 read as if it came after.
    request = "2026-12-05 10:00:{:02d} INFO request GET /api/users/{} status=200 took {}ms"
    publish = "2026-12-05 10:00:{:02d} INFO queue worker-{} published batch {} of orders to kafka"
    lines = [request.format(i, i, 10 + i) for i in range(2)]
    lines += [(publish if i % 2 == 0 else request).format(i, i, 10 + i) for i in range(2, 40)]
    result = compress("\n".join(lines), count_tokens=token_counter.count, kind="log")
    assert result.text.split("\n") == [
        lines[0],
        "[... 1 similar line]",
        lines[2],
        "[... 36 similar lines]",
        lines[39],
    ]


def test_a_linters_findings_are_kept_before_the_source_it_quotes(
    token_counter: TokenCounter,
) -> None:
    # ruff's full format: a finding, where it is, the source it quotes. The sizer had kept 2
    # of 5 findings (their quoted source looks alike, and so do the findings).
    findings = [
        ("UP035 `typing.Dict` is deprecated, use `dict` instead", "inventory.py:1:1"),
        ("UP035 `typing.List` is deprecated, use `list` instead", "inventory.py:1:1"),
        ("UP006 Use `dict` instead of `Dict` for type annotation", "inventory.py:13:21"),
        ("UP006 Use `list` instead of `List` for type annotation", "inventory.py:44:41"),
        ("E501 Line too long (102 > 100)", "tests/test_pricing.py:34:101"),
    ]
    lines = ["$ ruff check ."]
    for finding, where in findings:
        lines += [finding, f" --> {where}", "  |"]
        lines += [f"{n} |     value_{n} = compute(item, qty, price)" for n in range(9, 14)]
        lines += ["  |     ^^^^", "  |", "help: Replace it", ""]
    lines += ["Found 5 errors.", "[exit code 1]"]
    result = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="bash")
    out = result.text.split("\n")
    assert result.compressed_tokens < 0.7 * result.original_tokens
    # Each where it is; the two of one rule that differ in their names share a heading (a
    # warning's, "deprecated", is never rewritten).
    for finding, where in findings[:2] + findings[4:]:
        assert finding in out and f" --> {where}" in out
    at = out.index("UP006 Use `…` instead of `…` for type annotation")
    assert out[at + 1] == "  inventory.py: 13:21 `dict` `Dict`, 44:41 `list` `List`"
    # A glog line's severity and date, a checksum's name: no rule codes.
    glog = [f"I0612 10:22:{s:02d}.5 1234 server.cc:12] served request {s}" for s in range(60)]
    sums = [f"SHA256: {s:064x}" for s in range(60)]
    for text in (glog, sums):
        kept = compress("\n".join(text), count_tokens=token_counter.count).text.split("\n")
        assert len(kept) < 30
