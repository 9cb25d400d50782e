"""Every ```python block of README.md runs as pasted against a live server.

The blocks run in the order they appear, each in a fresh namespace (a block must bring its own
imports), against an in-process server: the README's address 127.0.0.1:50051 is replaced by
the test server's. A block that raises fails the test, naming the block and its first line.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from sharedctx_server.server import RunningServer

README = Path(__file__).resolve().parents[1] / "README.md"
README_TARGET = "127.0.0.1:50051"

# A fenced block opened by ```python on a line of its own (indented fences included), up to
# the next closing fence.
_PYTHON_BLOCK = re.compile(r"^[ \t]*```python[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.M | re.S)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The README's python blocks, each with the line its code starts on."""
    return [
        (text.count("\n", 0, match.start(1)) + 1, textwrap.dedent(match.group(1)))
        for match in _PYTHON_BLOCK.finditer(text)
    ]


def test_blocks_are_found() -> None:
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2, "README.md should have its Python tour"
    for line, code in blocks:
        assert README_TARGET in code, f"the block at README.md:{line} does not use {README_TARGET}"


# A `print(...)  # what it prints` line: the comment is the start of what the reader sees.
_PRINTS = re.compile(r"^\s*print\(.*\)\s+# (?P<shown>.+?)(?: \.\.\.)?$", re.M)


def test_readme_python_blocks_run(
    threaded_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    target = f"127.0.0.1:{threaded_server.port}"
    for line, code in python_blocks(README.read_text(encoding="utf-8")):
        # Padded so that a traceback names the README's own line numbers.
        source = "\n" * (line - 1) + code.replace(README_TARGET, target)
        compiled = compile(source, str(README), "exec")
        try:
            exec(compiled, {"__name__": "__readme__"})
        except Exception as exc:
            raise AssertionError(f"the python block at README.md:{line} raised {exc!r}") from exc
        printed = capsys.readouterr().out.splitlines()
        for shown in _PRINTS.finditer(code):
            assert any(out.startswith(shown["shown"]) for out in printed), (
                f"the block at README.md:{line} says it prints {shown['shown']!r}: {printed}"
            )
