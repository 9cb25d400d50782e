"""Terminal escape sequences in stored text: coloured tool output (pytest --color=yes,
ls --color, git, compilers) is text, but its escapes glue to the words they colour
(`ESC[31mERROR` reads as `31mERROR`) and say nothing an agent reads. Matching, error evidence
and compression see the text without them; the full form keeps them byte for byte."""

from __future__ import annotations

import re

__all__ = ["strip_ansi"]

# CSI (colours, cursor moves: `ESC [ 31 m`), OSC (window titles, links: `ESC ] ... BEL` or
# `ESC ] ... ESC \\`, never across a line), the sequences with intermediate bytes (character
# sets: `ESC ( B`, which `tput sgr0` prints) and the two-character ones (`ESC 7`, `ESC M`).
# None holds a newline, so a text keeps its line numbers without them.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[ -/]+[0-~]|\x1b[0-~]"
)


def strip_ansi(text: str) -> str:
    """`text` without terminal escape sequences (itself when it has none)."""
    return _ANSI.sub("", text) if "\x1b" in text else text
