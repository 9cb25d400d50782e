"""Compiler and linter findings with code frames: errors whole, the others by heading and place."""

from __future__ import annotations

from sharedctx_server.compress import compress, explain, missing_error_lines
from sharedctx_server.tokens import TokenCounter


def _cargo(warnings: int = 12) -> str:
    out = ["   Compiling ringbuf v0.1.0 (/work/ringbuf)"]
    for i in range(warnings):
        out += [
            f"warning: unused variable: `temp_{i}`",
            f"  --> src/lib.rs:{10 + 6 * i}:9",
            "   |",
            f"{10 + 6 * i} |     let temp_{i} = {i};",
            f"   |         ^^^^^^ help: if this is intentional, prefix it with `_`: `_temp_{i}`",
            "",
        ]
        if i == 0:
            out.insert(-1, "   = note: `#[warn(unused_variables)]` on by default")
    out += [
        "error[E0308]: mismatched types",
        "  --> src/lib.rs:90:22",
        "   |",
        '90 |     let wrong: i64 = "text";',
        "   |                ---   ^^^^^^ expected `i64`, found `&str`",
        "   |                |",
        "   |                expected due to this",
        "",
        "warning: `ringbuf` (lib) generated 12 warnings",
        "error: could not compile `ringbuf` (lib) due to 1 previous error; 12 warnings emitted",
    ]
    return "\n".join(out)


def test_cargo_keeps_errors_whole_and_warnings_by_heading_and_place(
    token_counter: TokenCounter,
) -> None:
    text = _cargo()
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "diagnostics"
    assert result.compressed_tokens < 0.6 * result.original_tokens
    out = result.text.split("\n")
    assert out[0].startswith("[diagnostics: 13 findings (1 error) in 1 file; errors whole")
    # The error with its whole frame: what the compiler expected where.
    at = out.index("error[E0308]: mismatched types")
    assert out[at + 1 : at + 7] == [
        "  --> src/lib.rs:90:22",
        "   |",
        '90 |     let wrong: i64 = "text";',
        "   |                --- ^^^^^^ expected `i64`, found `&str`",
        "   |                |",
        "   |                expected due to this",
    ]
    # A warning keeps its heading as written and its place, not its frame.
    at = out.index("warning: unused variable: `temp_3`")
    assert out[at + 1] == "  --> src/lib.rs:28:9"
    assert not any("let temp_3" in line for line in out)
    assert "   Compiling ringbuf v0.1.0 (/work/ringbuf)" in out
    assert out[-1].startswith("error: could not compile `ringbuf`")
    assert missing_error_lines(text, result.text) == []
    assert compress(result.text, count_tokens=token_counter.count).text == result.text


_RUFF = """\
F401 [*] `os` imported but unused
 --> app/main.py:1:8
  |
1 | import os
  |        ^^
2 | import sys
  |
help: Remove unused import: `os`

F401 [*] `json` imported but unused
 --> app/util.py:3:8
  |
3 | import json
  |        ^^^^
  |
help: Remove unused import: `json`

D100 Missing docstring in public module
--> app/main.py:1:1

D100 Missing docstring in public module
--> app/util.py:1:1

E501 Line too long (104 > 100)
  --> app/main.py:40:101
   |
40 |     message = "a line that goes on and on and on and on and on and on and on and on and on"
   |                                                                                      ^^^^
   |

E501 Line too long (117 > 100)
  --> app/util.py:12:101
   |
12 |     return "another line that goes on and on and on and on and on and on and on and on and"
   |                                                                                      ^^^^
   |

B904 Within an `except` clause, raise exceptions with `raise ... from err`
  --> app/util.py:30:9
   |
29 |     except KeyError:
30 |         raise ValueError("missing key")
   |         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
   |

Found 7 errors.
[*] 2 fixable with the `--fix` option.
"""


def test_ruff_findings_of_one_rule_share_a_heading(token_counter: TokenCounter) -> None:
    result = compress(_RUFF, count_tokens=token_counter.count, tool_name="ruff")
    assert result.compressor == "diagnostics"
    out = result.text.split("\n")
    # Headings that differ only in a quoted name: one heading, the names beside the places.
    at = out.index("F401 [*] `…` imported but unused")
    assert out[at + 1 : at + 3] == ["  app/main.py: 1:8 `os`", "  app/util.py: 3:8 `json`"]
    # Identical headings: said once, every place under it.
    at = out.index("D100 Missing docstring in public module")
    assert out[at + 1 : at + 3] == ["  app/main.py: 1:1", "  app/util.py: 1:1"]
    # A number that differs is a slot too; one they share stays.
    at = out.index("E501 Line too long (… > 100)")
    assert out[at + 1 : at + 3] == ["  app/main.py: 40:101 104", "  app/util.py: 12:101 117"]
    # A quoted line that carries an error stays, whatever else of the frame goes.
    assert "29 |     except KeyError:" in out and "   |" not in out
    assert not any(line.startswith("help:") for line in out)
    assert out[-2:] == ["Found 7 errors.", "[*] 2 fixable with the `--fix` option."]
    assert missing_error_lines(_RUFF, result.text) == []
    trials = {t.name: t for t in explain(_RUFF, count_tokens=token_counter.count).trials}
    assert trials["diagnostics"].outcome == "chosen"


def test_one_line_findings_group_by_rule_under_the_folder_they_share(
    token_counter: TokenCounter,
) -> None:
    # ruff's concise format (flake8's and pylint's alike): the place, then the rule.
    root = "/home/dev/projects/shop/src/shop"
    modules = ("os", "re", "io", "sys", "json", "time", "math", "uuid")
    lines = [
        f"{root}/api/orders.py:{n}:1: D103 Missing docstring in public function" for n in (4, 9)
    ]
    lines += [f"{root}/db/{m}.py:1:8: F401 [*] `{m}` imported but unused" for m in modules]
    lines += [
        f"{root}/api/cart.py:{n}:101: E501 Line too long ({n + 100} > 100)" for n in range(10)
    ]
    lines += ["Found 20 errors.", "[*] 8 fixable with the `--fix` option."]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, tool_name="ruff")
    assert result.compressor == "diagnostics"
    out = result.text.split("\n")
    assert out[0].endswith(f", in {root}/; Get with full=true for all]")
    at = out.index("F401 [*] `…` imported but unused")  # every module named at its place
    assert out[at + 1 : at + 1 + len(modules)] == [f"  db/{m}.py: 1:8 `{m}`" for m in modules]
    at = out.index("D103 Missing docstring in public function")
    assert out[at + 1] == "  api/orders.py: 4:1, 9:1"
    at = out.index("E501 Line too long (… > 100)")
    assert out[at + 1].startswith("  api/cart.py: 0:101 100, 1:101 101, 2:101 102, ")
    assert out[-2:] == lines[-2:]
    assert missing_error_lines(text, result.text) == []


def test_gcc_warnings_keep_their_lines_and_lose_their_frames(token_counter: TokenCounter) -> None:
    out = []
    for i in range(8):
        out += [
            f"gen_{i}.c: In function ‘gen_{i}’:",
            f"gen_{i}.c:1:32: warning: unused variable ‘unused’ [-Wunused-variable]",
            f"    1 | int gen_{i}(int a, int b) {{ int unused = a; return a * {i} + b; }}",
            "      |                                ^~~~~~",
        ]
    out += [
        "main.c:9:12: error: implicit declaration of function ‘missing’",
        "    9 |     return missing(total);",
        "      |            ^~~~~~~",
        "make: *** [Makefile:6: app] Error 1",
    ]
    text = "\n".join(out)
    result = compress(text, count_tokens=token_counter.count, tool_name="make")
    assert result.compressor == "diagnostics"
    lines = result.text.split("\n")
    for i in range(8):
        heading = f"gen_{i}.c:1:32: warning: unused variable ‘unused’ [-Wunused-variable]"
        assert heading in lines and f"gen_{i}.c: In function ‘gen_{i}’:" in lines
    assert "int gen_3(" not in result.text
    assert lines[-4:] == out[-4:]  # the error whole
    assert missing_error_lines(text, result.text) == []


def test_runs_of_alike_lines_between_findings_are_counted(token_counter: TokenCounter) -> None:
    # A real project's build names every crate it compiles before the first warning.
    crates = [f"   Compiling crate_{i} v1.{i}.0" for i in range(40)]
    crates.insert(20, "warning: crate_9 uses a deprecated feature")
    text = "\n".join([*crates, _cargo()])
    out = compress(text, count_tokens=token_counter.count).text.split("\n")
    assert out[1:6] == [
        "   Compiling crate_0 v1.0.0",
        "[... 18 similar lines]",
        "   Compiling crate_19 v1.19.0",
        "warning: crate_9 uses a deprecated feature",  # a warning is never folded
        "   Compiling crate_20 v1.20.0",
    ]
    assert out[6:8] == ["[... 19 similar lines]", "   Compiling ringbuf v0.1.0 (/work/ringbuf)"]
    assert "runs of alike lines between findings counted" in out[0]


def test_many_places_are_counted_past_the_cap(token_counter: TokenCounter) -> None:
    blocks = [
        f"D103 Missing docstring in public function\n--> pkg/mod_{i}.py:{i + 1}:5\n"
        for i in range(75)
    ]
    result = compress("\n".join(blocks), count_tokens=token_counter.count)
    assert result.compressor == "diagnostics"
    lines = result.text.split("\n")
    assert lines[1] == "D103 Missing docstring in public function"
    assert sum(1 for line in lines if line.startswith("  pkg/")) == 60
    assert lines[-1] == "  [... 15 more places omitted]"


def test_arrows_in_a_log_are_no_findings(token_counter: TokenCounter) -> None:
    text = "\n".join(f"12:00:{i:02d} INFO route a --> b took {i} ms" for i in range(60))
    choice = explain(text, count_tokens=token_counter.count)
    assert all(t.name != "diagnostics" for t in choice.trials)
