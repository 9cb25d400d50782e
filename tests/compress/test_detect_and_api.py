"""Detection, the error-line predicate, binary content, describe() and the settings object."""

from __future__ import annotations

import json
import random

import pytest
from sharedctx_server.compress import (
    COMPRESSORS,
    CompressConfig,
    Compressed,
    compress,
    describe,
    detect,
    explain,
    has_marker,
    line_has_error,
    line_has_warning,
    looks_binary,
)
from sharedctx_server.compress.config import DEFAULT_CONFIG, tool_key
from sharedctx_server.compress.error_lines import warning_flags
from sharedctx_server.fit import error_indicator
from sharedctx_server.fit.segments import omission_marker, shown_line
from sharedctx_server.tokens import TokenCounter

PROSE = " ".join(
    f"Sentence number {i} explains the design of the store in plain words for readers."
    for i in range(80)
)
LOG = "\n".join(f"2025-01-02 10:00:{i % 60:02d} INFO worker: handled job {i}" for i in range(50))
CODE = "\n".join(
    ["import os", "", "class Store:", "    def get(self, key):", "        return self.data[key]"]
    * 8
)


GO_LOG = "\n".join(
    f'client.go:{229 + i % 3}: [debug] Looks like there are no changes for Service "svc-{i}"'
    for i in range(60)
) + (
    "\nError: UPGRADE FAILED: timed out waiting for the condition\n"
    + "".join(f"main.f{i}\n\thelm.sh/helm/v3/cmd/helm/f{i}.go:{i + 10}\n" for i in range(6))
)


@pytest.mark.parametrize(
    ("content", "kind", "tool", "expected"),
    [
        (json.dumps([{"id": i} for i in range(20)]), None, None, "json"),
        (json.dumps({"a": [1, 2]}), "message", None, "json"),
        (LOG, None, None, "log"),
        (LOG, "log", None, "log"),
        ("\n".join(f"file_{i}.txt" for i in range(30)), None, "ls", "log"),
        ("\n".join(f"file_{i}.txt" for i in range(30)), "note", None, "text"),
        (PROSE, None, None, "text"),
        ("\n\n".join([PROSE[:400]] * 12), "tool_output", None, "text"),
        (CODE, None, None, "text"),
        ("short", None, None, "text"),
        # Records that start with the source location a logger puts first (Go's log with
        # Lshortfile, as `helm --debug` prints), with a Go trace at the end: still a log.
        (GO_LOG, "tool_output", "helm", "log"),
    ],
)
def test_detect(content: str, kind: str | None, tool: str | None, expected: str) -> None:
    assert detect(content, kind=kind, tool_name=tool) == expected


def test_detect_a_trace_inside_a_long_log_as_log() -> None:
    trace = "Traceback (most recent call last):\n" + '  File "a.py", line 1, in f\n    g()\n' * 5
    assert detect(trace + "ValueError: x") == "stacktrace"
    assert detect(LOG + "\n" + LOG + "\n" + trace + "ValueError: x\n" + LOG) == "log"


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: could not connect",
        "2025-01-02 10:00:00 ERROR db: deadlock detected",
        "ValueError: invalid literal for int()",
        "java.lang.IllegalStateException: closed",
        "Caused by: java.io.IOException: broken pipe",
        "E       assert 3 == 4",
        "E       +  where 3 = add(1, 2)",
        "AssertionError [ERR_ASSERTION]: values differ",
        "Assertion `n < 3' failed.",
        "FAILED tests/test_x.py::test_y - KeyError: 'id'",
        "3 failed, 10 passed in 1.2s",
        "panic: runtime error: index out of range",
        "thread 'main' panicked at src/main.rs:4:5:",
        "Segmentation fault (core dumped)",
        "error[E0308]: mismatched types",
        "Traceback (most recent call last):",
        "the request timed out after 30 s",
        "E: Unable to locate package libfoo-dev",  # apt
        "npm ERR! code E404",  # npm before 9
    ],
)
def test_error_lines(line: str) -> None:
    assert line_has_error(line)
    assert line_has_error("   " + line.replace(" ", "    "))  # judged with whitespace collapsed


@pytest.mark.parametrize(
    "line",
    [
        "INFO: all good",
        "no errors found",
        "0 failed, 12 passed",
        "errors: 0",
        '  File "/srv/app/errors.py", line 12, in handle_error',
        "    at com.example.ErrorHandler.handle(ErrorHandler.java:42)",
        "    at handleError (/srv/app/errors.js:10:5)",
        "\t/srv/app/errors.go:12 +0x1d",
        "Every test passed.",
        "E:\\data\\reports is mounted",  # a drive, not apt's label
    ],
)
def test_not_error_lines(line: str) -> None:
    assert not line_has_error(line)


def test_warning_lines() -> None:
    assert line_has_warning("2025-01-02 WARNING disk 91% full")
    assert line_has_warning("DeprecationWarning: use load() instead")
    assert line_has_warning("W: Some index files failed to download")  # apt
    assert not line_has_warning("build finished with 0 warnings")
    assert not line_has_warning("all good")


def test_warning_flags_judge_as_each_line_would() -> None:
    # The whole-text scan finds the same lines as asking each: cues at a line's ends, a cue
    # split across two lines (none), case, `\r` and a lowercased line of another length.
    lines = [
        "WARN",
        "w",
        ": disk full",
        "W: apt label",
        "x\r",
        "İİ warning: dotted capitals lowercase longer",
        "build finished with 0 warnings",
        "",
        "module.db must be replaced",
        "DeprecationWarning: old",
        "all good",
    ]
    assert warning_flags(lines) == [line_has_warning(line) for line in lines]


def test_binary_looking_content() -> None:
    assert looks_binary("PNG\x00\x01\x02")
    assert looks_binary("\x01\x02\x03\x04abc\x05\x06")
    assert not looks_binary("plain text\twith tabs\r\nand CRLF\n")
    assert not looks_binary("")
    assert not looks_binary("ansi colour \x1b[31mred\x1b[0m in a long enough line of output")
    # Densely coloured output (every word its own colour) is still text.
    assert not looks_binary("\x1b[31mERROR\x1b[0m \x1b[1mbold\x1b[0m line\n" * 50)


def test_coloured_output_compresses_to_its_text_with_every_error_line(
    token_counter: TokenCounter,
) -> None:
    lines = [f"\x1b[32mPASSED\x1b[0m tests/test_app.py::test_{i}" for i in range(150)]
    lines[90] = "\x1b[31mFAILED\x1b[0m tests/test_app.py::test_90 - \x1b[1mKeyError: 'id'\x1b[0m"
    content = "\n".join(lines) + "\n"
    result = compress(content, count_tokens=token_counter.count, kind="tool_output")
    assert "\x1b" not in result.text
    assert "FAILED tests/test_app.py::test_90 - KeyError: 'id'" in result.text
    assert result.compressed_tokens < result.original_tokens
    again = compress(result.text, count_tokens=token_counter.count, kind="tool_output")
    assert again.text == result.text


def test_binary_looking_content_is_left_alone(token_counter: TokenCounter) -> None:
    blob = "\x00\x01" * 600
    assert compress(blob, count_tokens=token_counter.count).compressor == "none"


def test_short_prose_is_untouched_and_long_prose_only_loses_whitespace(
    token_counter: TokenCounter,
) -> None:
    short = "A  note   with   odd spacing.\n\n\n\nStill short, but over the minimum. " * 12
    assert compress(short, count_tokens=token_counter.count).text == short
    long = ("A   paragraph   with    extra   spaces   and   tabs\t\there.   \n\n\n\n" * 80) + PROSE
    result = compress(long, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "text"
    assert result.text.split() == long.split()
    assert "\n\n\n" not in result.text and "  " not in result.text
    # Nothing but whitespace went: the explanation promises no markers.
    from sharedctx_server.compress.explanation import explanation_lines

    lines = explanation_lines(explain(long, count_tokens=token_counter.count, kind="document"))
    assert "left out by text: extra whitespace" in lines
    assert not any("carries a [... N ... omitted] marker" in line for line in lines)


def test_content_carrying_a_marker_is_a_compressed_form(token_counter: TokenCounter) -> None:
    text = LOG + "\n[... 12 lines omitted]\n" + LOG
    assert has_marker(text)
    assert compress(text, count_tokens=token_counter.count).compressor == "none"
    # Quoted in a sentence, or in a diff of one, a JSON marker is not one: a 1.6 MB `git
    # diff` that added such a line to a README was stored uncompressed.
    member = '"_omitted": "… 12 of 40 keys omitted; Get with full=true for all"'
    assert not has_marker(f"+- in an object, one member `{member}`\n")
    assert has_marker(f'{{\n  "name": "x",\n  {member}\n}}\n')
    assert has_marker(f'{{"name": "x", {member}}}')
    # A Fit excerpt put back as an entry is a reduced form already.
    excerpt = f"{LOG}\n{omission_marker(412)}\n{shown_line('GET /x?' + 'a=1&' * 400)}\n"
    assert has_marker(excerpt) and has_marker(f"{LOG}\n{omission_marker(1)}")
    assert has_marker(f"{LOG}\n{shown_line('x ' * 800)}")
    assert not has_marker("an excerpt says [... 12 lines omitted ...] where lines were left out")


def test_describe() -> None:
    saved = Compressed("x", "log", 12_345, 2_345)
    assert describe(saved) == "log: 12,345 -> 2,345 tokens (81% saved)"
    assert saved.token_density == pytest.approx(12_345 / 2_345)
    same = Compressed("x", "none", 42, 42)
    assert describe(same) == "none: 42 tokens, stored as is"
    assert same.token_density == 1.0
    assert set(COMPRESSORS) == {
        "json", "listing", "table", "diff", "status", "blame", "grep", "diagnostics", "yaml",
        "tests", "source", "markup", "log", "stacktrace", "text", "none",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("pytest", "pytest"),
        ("python -m pytest -x", "pytest"),
        ("/usr/bin/ls -lR", "ls"),
        ("  PIP  ", "pip"),
        ("", ""),
        (None, ""),
    ],
)
def test_tool_key(name: str | None, key: str) -> None:
    assert tool_key(name) == key


def test_config_profiles_and_validation() -> None:
    config = CompressConfig()
    assert config.profile_for("ls").name == "aggressive"
    assert config.profile_for("python -m pytest").name == "conservative"
    assert config.profile_for("curl").name == "moderate"
    assert config.profile_for(None).name == "moderate"
    custom = CompressConfig(tool_profiles=(("curl", "aggressive"),), default_profile="conservative")
    assert custom.profile_for("curl").name == "aggressive"
    assert custom.profile_for("ls").name == "conservative"
    with pytest.raises(ValueError, match="unknown adaptive profile"):
        CompressConfig(default_profile="extreme")
    with pytest.raises(ValueError):
        CompressConfig(context_lines=-1)
    with pytest.raises(ValueError):
        CompressConfig(json_long_string_chars=100, json_string_keep_chars=300)
    hash(config)  # frozen and hashable: safe to share between threads and cache on


def test_thresholds_come_from_the_config(token_counter: TokenCounter) -> None:
    verbs = ("GET", "PUT", "POST", "HEAD", "DELETE", "PATCH", "OPTIONS", "TRACE")
    rng = random.Random(5)  # verbs in no fixed order: no run to fold, the cap cuts
    lines = [f"10:00:{i % 60:02d} {rng.choice(verbs)} /items/{i}" for i in range(300)]
    lines[40] = "10:00:40 ERROR disk full"
    text = "\n".join(lines)
    small = CompressConfig(min_chars=len(text) + 1)
    assert compress(text, count_tokens=token_counter.count, config=small).compressor == "none"
    wide = CompressConfig(context_lines=3)
    result = compress(text, count_tokens=token_counter.count, kind="log", config=wide)
    assert "lines omitted]" in result.text
    assert "\n".join(lines[37:44]) in result.text


def test_a_form_that_leaves_something_out_must_save_enough(token_counter: TokenCounter) -> None:
    from dataclasses import replace

    log = "\n".join(f"2026-12-05 10:00:{i:02d} INFO worker: processed batch {i}" for i in range(40))
    saved = compress(log, count_tokens=token_counter.count)
    assert saved.compressor == "log"
    share = 1 - saved.compressed_tokens / saved.original_tokens
    # Asked to save more than it does, the same form is not worth its omissions.
    strict = replace(DEFAULT_CONFIG, min_saved=share + 0.01)
    choice = explain(log, count_tokens=token_counter.count, config=strict)
    assert choice.result.compressor == "none" and choice.result.text == log
    [log_trial] = [t for t in choice.trials if t.name == "log"]
    assert log_trial.outcome == f"saves {share:.0%}, under the {share + 0.01:.0%} worth an omission"


def test_what_failing_commands_say_is_an_error_line() -> None:
    for line in (
        "ls: cannot access '/srv/data': No such file or directory",
        "bash: kubeclt: command not found",
        "rm: cannot remove '/etc/hosts': Operation not permitted",
        "make: *** No rule to make target 'dist/app.js', needed by 'all'.  Stop.",
        "/usr/bin/ld: cannot find -lssl",
        "\tlibfoo.so.1 => not found",
    ):
        assert line_has_error(line), line
    assert not line_has_error("You cannot access the admin page without a token.")
    # strace's failed lookups: a program probing for files is no line a form must keep, but
    # still error evidence for Fit (which paths did it try?).
    probe = 'openat(AT_FDCWD, "/etc/app.toml", O_RDONLY) = -1 ENOENT (No such file or directory)'
    assert not line_has_error(probe) and error_indicator(probe) > 0


def test_a_settings_file_keeps_every_value(token_counter: TokenCounter) -> None:
    # my.cnf's values differ where its lines look alike: the log compressor had folded
    # `innodb_buffer_pool_size = 128M` into `[... 6 similar lines]`.
    cnf = ["[client]", "port = 3306", "", "[mysqld]"] + [
        f"{name}_size = {i * 16}M" for i, name in enumerate("abcdefghijklmnopqrstuvwxyz")
    ]
    env = [f"export SERVICE_{i}_URL=https://svc{i}.internal:8443/v1" for i in range(30)]
    for lines in (cnf, env, ["$ cat config/app.ini", *cnf]):
        text = "\n".join(lines) + "\n"
        assert detect(text) == "log"  # line output: excerpts cut it line by line
        # Printed by a shell tool too (`cat` through `bash`: its values had been folded).
        for tool in (None, "bash"):
            result = compress(text, count_tokens=token_counter.count, tool_name=tool)
            assert result.compressor in ("text", "none") and not has_marker(result.text)
            assert all(" ".join(line.split()) in result.text for line in lines)
    # logfmt is a log (pairs on each line), whatever its length.
    logfmt = [
        f"ts=2026-12-06T04:{i:02d}:00Z level=info msg=served path=/v1/items/{i}" for i in range(40)
    ]
    assert compress("\n".join(logfmt), count_tokens=token_counter.count).compressor == "log"
    # A long dump of settings (`sysctl -a`) folds its alike lines still.
    sysctl = "\n".join(f"net.ipv4.conf.eth{i}.rp_filter = {i % 2}" for i in range(400))
    assert compress(sysctl, count_tokens=token_counter.count).compressor == "log"


def test_blank_content_is_said_to_be_blank_never_an_empty_form(
    token_counter: TokenCounter,
) -> None:
    # Normalised, only blank lines became "", a form Put refuses from a caller (and Fit
    # returned as an entry of 0 tokens).
    for text in (" \n\t\n   \n" * 3000, "\n" * 5000):
        result = compress(text, count_tokens=token_counter.count)
        assert result.text == f"[... {text.count(chr(10)) + 1:,} blank lines omitted]"
        assert has_marker(result.text) and result.compressed_tokens > 0
