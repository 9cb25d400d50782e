"""Lines that open a block: what the lines after them, up to the next such line, are part of.

`commit <sha>`, `diff --git`, a Markdown heading, pytest's `==== section ====` and
`____ test_name ____` lines, nmap's `Nmap scan report for host`, a line ending in `:` at the
top or after a blank line (how `ls -lR` names its folders), and in a listing of `Key: value`
records, each line with the key the text opens with (`kubectl describe pods`' `Name:`). The
log compressor keeps the opener of a kept error line's block; excerpts show it as a hit's head
(segment.heads).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .shapes import PLANNED_ACTION

__all__ = ["block_openers", "opens_block", "record_key"]

# pytest's section lines (`==== FAILURES ====`) and failure headers (`____ test_x ____`) too;
# nmap's host lines (`Nmap scan report for db-1 (10.0.3.17)`), over that host's ports;
# ansible's `TASK [nginx : Restart nginx] ****` (and PLAY, handlers), over its hosts' results;
# terraform's `  # aws_instance.web will be created`, over the resource's attributes.
_BLOCK_HEAD = re.compile(
    r"^(?:commit [0-9a-f]{7,40}\b|diff --git |#{1,6} |={3,} \S.* ={3,}$|_{3,} \S.* _{3,}$"
    r"|Nmap scan report for |(?:PLAY|TASK|RUNNING HANDLER) \[.*\] \*{3,}$)"
    rf"|{PLANNED_ACTION}|^\s*# \S+ (?:has been |has changed|is tainted)"
)
_FOLDER = re.compile(r"^\S.*:$")
# A `Key: value` line; when the text opens with one whose key comes back at the start of a
# line, that key opens each record of a listing of records (`kubectl describe pods`' `Name:`,
# `apt-cache show`'s `Package:`, `pip show a b`'s `Name:`; indented too, as `stat`'s `File:`).
_KEY_VALUE = re.compile(r"^(\s*[A-Za-z][\w .-]{0,40}):[ \t]+\S")


def record_key(lines: Sequence[str]) -> str | None:
    """The key that opens each record, if the text is a listing of `Key: value` records."""
    match = _KEY_VALUE.match(lines[0]) if lines else None
    if match is None:
        return None
    prefix = match[1] + ":"
    return prefix if any(line.startswith(prefix) for line in lines[1:]) else None


def opens_block(lines: Sequence[str], at: int, key: str | None) -> bool:
    """Whether line `at` opens a block (`key`: the listing's record key, record_key)."""
    line = lines[at]
    if _BLOCK_HEAD.match(line):
        return True
    if key is not None and line.startswith(key):
        return True
    return bool(_FOLDER.match(line)) and (at == 0 or not lines[at - 1].strip())


def block_openers(lines: Sequence[str]) -> list[bool]:
    """Per line, whether it opens a block."""
    key = record_key(lines)
    return [opens_block(lines, i, key) for i in range(len(lines))]
