"""Masking the variable parts of a line (times, ids, numbers) before judging similarity."""

from __future__ import annotations

import re

__all__ = ["mask_line"]

# Order matters: a timestamp is digits too, a hex id may be all digits.
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?\b"
)
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b")
_DIGITS = re.compile(r"\d+")


def mask_line(line: str) -> str:
    """`line` with timestamps, hex ids and numbers replaced by placeholders, spaces collapsed."""
    line = _TIMESTAMP.sub("<t>", line)
    line = _HEX.sub("<x>", line)
    line = _DIGITS.sub("0", line)
    return " ".join(line.split())
