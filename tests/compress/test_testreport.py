"""Test reports: failures whole, passing tests counted by file, for several runners."""

from __future__ import annotations

from sharedctx_server.compress import compress, missing_error_lines
from sharedctx_server.tokens import TokenCounter


def _pytest() -> tuple[str, list[str]]:
    lines = ["=" * 30 + " test session starts " + "=" * 30, "collected 62 items", ""]
    lines += [f"tests/test_api.py::test_get[{i}] PASSED [{i:3d}%]" for i in range(40)]
    lines.append("tests/test_api.py::test_put FAILED [ 66%]")
    lines += [f"tests/test_db.py::test_query_{i} PASSED [{i:3d}%]" for i in range(20)]
    lines.append("tests/test_db.py::test_slow SKIPPED (needs a server) [ 99%]")
    failure = [
        "",
        "=" * 30 + " FAILURES " + "=" * 30,
        "_" * 20 + " test_put " + "_" * 20,
        "",
        "    def test_put():",
        '        client = make_client(retries=0, timeout=0.5, base_url="http://x")',
        ">       assert client.put('k', 'v') == 201",
        "E       assert 500 == 201",
        "E        +  where 500 = <bound method Client.put>('k', 'v')",
        "",
        "tests/test_api.py:31: AssertionError",
        "=" * 20 + " short test summary info " + "=" * 20,
        "FAILED tests/test_api.py::test_put - assert 500 == 201",
        "=" * 20 + " 1 failed, 60 passed, 1 skipped in 0.42s " + "=" * 20,
    ]
    return "\n".join(lines + failure), failure


def test_pytest_keeps_the_failure_whole_and_counts_the_passes(token_counter: TokenCounter) -> None:
    text, failure = _pytest()
    result = compress(text, count_tokens=token_counter.count, tool_name="pytest")
    assert result.compressor == "tests"
    out = result.text.split("\n")
    assert out[0].startswith("[test report: 1 failed, 60 passed, 1 skipped; failures kept whole")
    assert "[... 40 passed tests omitted: tests/test_api.py 40]" in out
    assert "[... 21 passed or skipped tests omitted: tests/test_db.py 21]" in out
    assert "tests/test_api.py::test_put FAILED [ 66%]" in out
    body = "\n".join(out)
    assert "\n".join(line for line in failure if line) in "\n".join(x for x in out if x)
    assert missing_error_lines(text, result.text) == []
    assert "PASSED" not in body


def test_unittest_go_and_cargo_reports(token_counter: TokenCounter) -> None:
    unittest = [f"test_case_{i} (pkg.test_mod.Case.test_case_{i}) ... ok" for i in range(30)]
    unittest += [
        "test_broken (pkg.test_mod.Case.test_broken) ... FAIL",
        "",
        "=" * 70,
        "FAIL: test_broken (pkg.test_mod.Case.test_broken)",
        "-" * 70,
        "AssertionError: 1 != 2",
        "",
        "Ran 31 tests in 0.010s",
        "",
        "FAILED (failures=1)",
    ]
    go = ["=== RUN   TestA"] + [f"--- PASS: TestA{i} (0.00s)" for i in range(30)]
    go += ["--- FAIL: TestB (0.01s)", "    b_test.go:12: want 3, got 4", "FAIL", "FAIL\tpkg\t0.02s"]
    cargo = ["running 32 tests"] + [f"test tests::t{i} ... ok" for i in range(30)]
    cargo += ["test tests::broken ... FAILED", "", "test result: FAILED. 30 passed; 1 failed"]
    for lines, kept in (
        (unittest, "FAIL: test_broken (pkg.test_mod.Case.test_broken)"),
        (go, "--- FAIL: TestB (0.01s)"),
        (cargo, "test tests::broken ... FAILED"),
    ):
        text = "\n".join(lines)
        result = compress(text, count_tokens=token_counter.count)
        assert result.compressor == "tests", lines[0]
        assert kept in result.text.split("\n")
        assert "passed tests omitted" in result.text
        assert missing_error_lines(text, result.text) == []


def test_tap_blocks_of_passing_tests_fold_with_them(token_counter: TokenCounter) -> None:
    lines = ["TAP version 13"]
    for i in range(1, 31):
        lines += [
            f"# Subtest: adds {i}",
            f"ok {i} - adds {i}",
            "  ---",
            "  duration_ms: 0.2",
            "  ...",
        ]
    lines += ["# Subtest: divides", "not ok 31 - divides", "  ---", "  error: 'division by zero'"]
    lines += ["  ...", "1..31", "# tests 31", "# pass 30", "# fail 1"]
    result = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="node")
    assert result.compressor == "tests"
    out = result.text.split("\n")
    assert "[... 30 passed tests omitted]" in out
    assert "not ok 31 - divides" in out
    assert "duration_ms: 0.2" not in result.text


def _pytest_dots(failing_block: list[str], files: int) -> str:
    """pytest's default output: each file's dots wrapped over lines of their own."""
    progress = []
    for f in range(files):
        progress += [f"tests/test_mod{f}.py " + "." * 55 + " [ 20%]", "." * 72 + " [ 47%]"]
    progress += ["tests/test_last.py ..F. [100%]"]
    return "\n".join(
        [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0",
            f"collected {127 * files + 4} items",
            "",
            *progress,
            "",
            "=================================== FAILURES ===================================",
            *failing_block,
            "=========================== short test summary info ============================",
            "FAILED tests/test_last.py::test_restock - ValueError: negative restock -1",
            f"========================= 1 failed, {127 * files + 3} passed in 0.75s ==========",
        ]
    )


FAILING_BLOCK = [
    "_________________________________ test_restock _________________________________",
    "",
    "    def test_restock():",
    "        stock, n = 5, -1",
    ">       assert restock(stock, n) == 4",
    "",
    "tests/test_last.py:12: ",
    "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
    "",
    "stock = 5, n = -1",
    "",
    "    def restock(stock, n):",
    "        if n < 0:",
    '>           raise ValueError(f"negative restock {n}")',
    "E           ValueError: negative restock -1",
    "",
    "tests/test_last.py:5: ValueError",
]


def test_pytest_default_output_counts_every_line_of_dots(token_counter: TokenCounter) -> None:
    text = _pytest_dots(FAILING_BLOCK, files=30)
    result = compress(text, count_tokens=token_counter.count, tool_name="pytest")
    assert result.compressor == "tests"
    out = result.text.split("\n")
    assert "tests/test_last.py ..F. [100%]" in out  # a line with a failure stays
    assert not any(line.startswith("....") for line in out)
    assert "3,810 passing tests counted by file" in out[0]  # the dots folded
    assert all(line.rstrip() in out for line in FAILING_BLOCK if line)


def test_pytest_q_without_a_session_header_is_a_test_report(token_counter: TokenCounter) -> None:
    # `pytest -q`: lines of dots (failures among them) and an undecorated summary.
    dots = ["." * 72 + " [ 50%]"] * 30 + ["." * 30 + "F" + "." * 9 + "E" + " [100%]"]
    summary = "1 failed, 2199 passed, 1 error in 4.18s"
    text = "\n".join([*dots, "=" * 30 + " FAILURES " + "=" * 30, *FAILING_BLOCK, summary])
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "tests"
    out = result.text.split("\n")
    assert "2,199 passing tests counted" in out[0]  # the dots only: F and E are failures
    assert summary in out
    assert all(line.rstrip() in out for line in FAILING_BLOCK if line)


def test_a_short_pytest_report_keeps_its_failures_whole(token_counter: TokenCounter) -> None:
    # Too few passes to fold: the tests form saves nothing, and the log compressor, whose
    # sizer would drop lines of the failure, does not run after all.
    text = _pytest_dots(FAILING_BLOCK * 3, files=1)
    result = compress(text, count_tokens=token_counter.count, tool_name="pytest")
    assert result.compressor == "none" and result.text == text


def test_an_expected_failure_is_not_hidden_under_passed_or_skipped(
    token_counter: TokenCounter,
) -> None:
    lines = ["============================= test session starts ==============================", ""]
    lines += [f"tests/test_a.py::test_{i} PASSED [ {i}%]" for i in range(40)]
    lines += ["tests/test_a.py::test_x XFAIL (known bug) [ 98%]", "tests/test_a.py::test_z FAILED"]
    lines += ["=========================== 1 failed, 40 passed, 1 xfailed in 0.75s ==========="]
    out = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="pytest").text
    assert "[... 41 passed, skipped or expected-to-fail tests omitted: tests/test_a.py 41]" in out


def test_jest_without_verbose_counts_its_passing_files(token_counter: TokenCounter) -> None:
    # One `PASS file` line a passing file; the log compressor had cut the second failure.
    passing = [f"PASS src/lib/mod{i}.test.ts" + (" (1.2 s)" if i % 3 else "") for i in range(40)]
    failure = [
        "FAIL src/user/service.test.ts (5.212 s)",
        "  ● UserService › creates user",
        "",
        "    Expected: 201",
        "    Received: 500",
        "",
        "    > 42 |     expect(res.status).toBe(201);",
        "",
        "  ● UserService › rejects duplicate email",
        "",
        "    TypeError: Cannot read properties of undefined (reading 'code')",
        "",
        "    > 62 |       expect(e.response.code).toBe('DUPLICATE');",
        "",
    ]
    summary = ["Test Suites: 1 failed, 40 passed, 41 total", "Tests:       2 failed, 148 passed"]
    text = "\n".join(["> jest --ci", "", *passing[:20], *failure, *passing[20:], *summary])
    result = compress(text, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "tests"
    lines = result.text.split("\n")
    assert all(line in lines for line in failure if line)
    assert any(
        line.startswith("[... 20 passed test files omitted: src/lib/mod0.test.ts, ")
        for line in lines
    )
    assert missing_error_lines(text, result.text) == []
