"""Masking the variable parts of a line (times, ids, numbers) before judging similarity."""

from __future__ import annotations

import re

__all__ = ["line_keys", "mask_line"]

# Order matters: a timestamp is digits too, a hex id may be all digits.
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?\b"
)
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b")
_DIGITS = re.compile(r"\d+")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{8,}")


def mask_line(line: str) -> str:
    """`line` with timestamps, hex ids and numbers replaced by placeholders, spaces collapsed."""
    line = _TIMESTAMP.sub("<t>", line)
    line = _HEX.sub("<x>", line)
    line = _DIGITS.sub("0", line)
    return " ".join(line.split())


def line_keys(lines: list[str]) -> list[str]:
    """What the log compressor compares lines by: numbers, hex ids and paths masked.

    Cheaper than `mask_line` per line (a 1 MiB log has ten thousand lines): numbers and hex
    runs are masked in two passes over the joined lines (neither pattern crosses a newline).
    Numbers go first, so a timestamp needs no pattern of its own (`0-0-0 0:0:0,0` is the same
    on every line) and a hex id is a run of eight or more hex characters; then every word
    holding a `/` (a path, a URL) becomes one placeholder.
    """
    text = _HEX_RUN.sub("<x>", _DIGITS.sub("0", "\n".join(lines)))
    return [
        " ".join(["<p>" if "/" in word else word for word in line.split()])
        if "/" in line
        else " ".join(line.split())
        for line in text.split("\n")
    ]
