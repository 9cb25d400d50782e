"""Stack traces: exception lines, innermost and entry frames kept; the middle elided."""

from __future__ import annotations

import re

from sharedctx_server.compress import compress, detect, missing_error_lines
from sharedctx_server.tokens import TokenCounter

FRAMES = re.compile(r"^\s*\[\.\.\. (\d+) frames? omitted\]$", re.MULTILINE)


def _python(depth: int) -> str:
    lines = ["Traceback (most recent call last):"]
    lines.append('  File "/srv/app/main.py", line 3, in <module>')
    lines.append("    main()")
    for i in range(depth):
        lines.append(f'  File "/srv/app/layer_{i}.py", line {10 + i}, in step_{i}')
        lines.append(f"    return step_{i + 1}(payload)")
        lines.append("           ^^^^^^^^^^^^^^^^^^^^^^")
    lines.append('  File "/srv/app/db.py", line 88, in fetch')
    lines.append("    raise ConnectionError('database refused the connection')")
    lines.append("ConnectionError: database refused the connection")
    return "\n".join(lines) + "\n"


def test_python_trace_keeps_entry_innermost_and_exception(token_counter: TokenCounter) -> None:
    text = _python(30)
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "stacktrace"
    out = result.text
    assert out.startswith("Traceback (most recent call last):\n")
    assert '  File "/srv/app/main.py", line 3, in <module>\n    main()\n' in out
    # Innermost three frames: two layers and the raising frame, with their source lines.
    assert '  File "/srv/app/layer_28.py", line 38, in step_28\n' in out
    assert '  File "/srv/app/layer_29.py", line 39, in step_29\n' in out
    assert "    raise ConnectionError('database refused the connection')\n" in out
    assert out.endswith("ConnectionError: database refused the connection\n")
    assert [int(n) for n in FRAMES.findall(out)] == [28]
    assert "  [... 28 frames omitted]" in out  # indented like the frames it replaces


def test_chained_python_traces_keep_both_exceptions(token_counter: TokenCounter) -> None:
    cause = _python(12).replace("ConnectionError: database", "OSError: [Errno 111] socket")
    text = (
        cause
        + "\nDuring handling of the above exception, another exception occurred:\n\n"
        + _python(20)
    )
    out = compress(text, count_tokens=token_counter.count).text
    assert "OSError: [Errno 111] socket refused the connection" in out
    assert "During handling of the above exception, another exception occurred:" in out
    assert out.count("Traceback (most recent call last):") == 2
    assert [int(n) for n in FRAMES.findall(out)] == [10, 18]
    assert missing_error_lines(text, out) == []


JAVA = """Exception in thread "main" java.lang.IllegalStateException: could not parse retry count
{frames}
\tat com.example.App.main(App.java:12)
Caused by: java.lang.NumberFormatException: For input string: "x1"
\tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)
\tat java.base/java.lang.Integer.parseInt(Integer.java:668)
\tat com.example.Config.retries(Config.java:5)
\tat com.example.Config.load(Config.java:9)
\t... 31 more
"""


def test_java_trace_keeps_the_throwing_frames_and_the_cause(token_counter: TokenCounter) -> None:
    frames = "\n".join(f"\tat com.example.Layer{i}.call(Layer{i}.java:{i + 3})" for i in range(30))
    text = JAVA.format(frames=frames)
    out = compress(text, count_tokens=token_counter.count).text.split("\n")
    assert out[0].startswith('Exception in thread "main" java.lang.IllegalStateException')
    # Java lists the innermost frame first and the entry frame last.
    assert out[1:4] == [f"\tat com.example.Layer{i}.call(Layer{i}.java:{i + 3})" for i in range(3)]
    assert out[4] == "\t[... 27 frames omitted]"
    assert out[5] == "\tat com.example.App.main(App.java:12)"
    assert 'Caused by: java.lang.NumberFormatException: For input string: "x1"' in out
    assert "\t... 31 more" in out


def test_node_trace(token_counter: TokenCounter) -> None:
    frames = [f"    at parse{i} (/srv/app/parse.js:{i + 1}:17)" for i in range(25)]
    lines = ["TypeError: Cannot read properties of undefined (reading 'id')", *frames]
    lines += [
        "    at Module._compile (node:internal/modules/cjs/loader:1364:14)",
        "",
        "Node.js v20",
    ]
    text = "\n".join(lines)
    out = compress(text, count_tokens=token_counter.count).text.split("\n")
    assert out[:4] == lines[:4]
    assert out[4] == "    [... 22 frames omitted]"
    assert out[5:] == lines[-3:]


def test_go_panic(token_counter: TokenCounter) -> None:
    lines = [
        "panic: runtime error: index out of range [5] with length 3",
        "",
        "goroutine 1 [running]:",
    ]
    for i in range(20):
        lines += [f"main.level{i}(...)", f"\t/srv/app/main.go:{i + 10} +0x1d"]
    lines += ["main.main()", "\t/srv/app/main.go:40 +0x25", "exit status 2"]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "stacktrace"
    out = result.text.split("\n")
    assert out[:9] == lines[:9]  # the panic, the goroutine header, three innermost frames
    assert out[9] == "[... 17 frames omitted]"
    assert out[10:] == lines[-3:]


def test_rust_backtrace(token_counter: TokenCounter) -> None:
    lines = ["thread 'main' panicked at src/main.rs:4:5:", "attempt to divide by zero"]
    lines.append("stack backtrace:")
    for i in range(20):
        lines += [f"  {i:>2}: app::level{i}", f"             at ./src/main.rs:{i + 4}:5"]
    lines.append(
        "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose one."
    )
    text = "\n".join(lines)
    out = compress(text, count_tokens=token_counter.count).text.split("\n")
    assert out[:9] == lines[:9]
    assert out[9] == "   [... 16 frames omitted]"  # indented like the frame it starts at
    assert out[10:] == lines[-3:]


def test_a_frame_whose_source_line_reads_as_an_error_is_kept(token_counter: TokenCounter) -> None:
    text = _python(30).replace(
        "    return step_15(payload)",
        "    log.error('retry budget exhausted'); return step_15(payload)",
    )
    out = compress(text, count_tokens=token_counter.count).text
    assert "log.error('retry budget exhausted')" in out
    assert missing_error_lines(text, out) == []


def test_a_message_quoting_a_trace_keeps_its_own_words(token_counter: TokenCounter) -> None:
    prose = [
        f"Paragraph {i} of my notes about why the deploy went wrong this time." for i in range(20)
    ]
    text = "\n".join(prose) + "\n" + _python(30) + "\n".join(prose)
    assert detect(text, kind="message") == "stacktrace"
    out = compress(text, count_tokens=token_counter.count, kind="message").text
    for line in prose:
        assert line in out
    assert "[... 28 frames omitted]" in out


def test_frames_found_from_their_possible_starts_are_those_of_every_line() -> None:
    # find_frames reads only the lines a frame may start at (outside a Rust backtrace): the
    # frames of each language, mixed with lines that look almost like them, are the same as
    # when every line is read.
    from sharedctx_server.compress.frames import _find_frames, find_frames

    java = "java.lang.IllegalStateException: boom\n" + "".join(
        f"\tat com.x.Y{i}.run(Y{i}.java:{i})\n" for i in range(4)
    )
    node = "TypeError: x\n" + "".join(f"    at fn{i} (/app/f{i}.js:{i}:7)\n" for i in range(3))
    node += "    at async Promise.all (index 0)\n    at new Foo (native)\n"
    go = "goroutine 1 [running]:\n" + "".join(
        f"main.f{i}(0x1)\n\t/app/main.go:{i} +0x1d\n" for i in range(3)
    )
    near = "we met at noon\n  at home\n\tnot.go:x\nFile x\n\tat\n"
    for text in (
        _python(4) + java + near + node + go + near,
        near + go + _python(2),
        "".join("b\n" for _ in range(50)),
    ):
        lines = text.splitlines()
        assert find_frames(lines) == _find_frames(lines, range(len(lines)))
    # Python 6, Java 4, Node 4 (`Promise.all (index 0)` names no place), Go 3.
    assert len(find_frames((_python(4) + java + node + go).splitlines())) == 6 + 4 + 4 + 3
