"""Each segment's head: the earlier, short segment that says what it is part of
(docs/excerpts.md, "Heads").

A line of tool output often means little alone: a `ps` row without the header naming its
columns, a file in `ls -lR` without its folder, a `git log --stat` file line without its
commit, a paragraph without its section. Fit shows a hit's head beside it when the budget
allows, so these are found once, at Put:
- block heads: a line that opens a block (`commit <sha>`, `diff --git`, a Markdown heading,
  pytest's `==== section ====` and `____ test_name ____` lines, or a line ending in `:` at
  the top or after a blank line, as `ls -lR` names folders, or in a listing of `Key: value`
  records, the line with the key that opens the text and each record, as `kubectl describe`'s
  `Name:`) heads every segment after it up to the next block head;
- else a table's header row (compress.table_parse) heads every segment below it.
A head is a segment of at most HEAD_TOKENS tokens; a longer one would cost more than it says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..compress.table_parse import find_table

__all__ = ["HEAD_TOKENS", "block_openers", "segment_heads"]

HEAD_TOKENS = 64

# pytest's section lines (`==== FAILURES ====`) and failure headers (`____ test_x ____`) too.
_BLOCK_HEAD = re.compile(
    r"^(?:commit [0-9a-f]{7,40}\b|diff --git |#{1,6} |={3,} \S.* ={3,}$|_{3,} \S.* _{3,}$)"
)
_FOLDER = re.compile(r"^\S.*:$")
# A `Key: value` line; when the text opens with one whose key comes back at the start of a
# line, that key opens each record of a listing of records (`kubectl describe pods`' `Name:`,
# `apt-cache show`'s `Package:`, `pip show a b`'s `Name:`).
_KEY_VALUE = re.compile(r"^([A-Za-z][\w .-]{0,40}):[ \t]+\S")


def _record_key(lines: Sequence[str]) -> str | None:
    """The key that opens each record, if the text is a listing of `Key: value` records."""
    match = _KEY_VALUE.match(lines[0]) if lines else None
    if match is None:
        return None
    prefix = match[1] + ":"
    return prefix if any(line.startswith(prefix) for line in lines[1:]) else None


def _opens_block(lines: Sequence[str], at: int, record_key: str | None) -> bool:
    line = lines[at]
    if _BLOCK_HEAD.match(line):
        return True
    if record_key is not None and line.startswith(record_key):
        return True
    return bool(_FOLDER.match(line)) and (at == 0 or not lines[at - 1].strip())


def block_openers(lines: Sequence[str]) -> list[bool]:
    """Per line, whether it opens a block (a commit, a folder, a section, a record of a
    listing): what the lines after it, up to the next one, are part of."""
    record_key = _record_key(lines)
    return [_opens_block(lines, i, record_key) for i in range(len(lines))]


def segment_heads(lines: list[str], starts: Sequence[int], tokens: Sequence[int]) -> list[int]:
    """Per segment (first lines `starts`, token counts `tokens`), the segment that heads it,
    or -1."""
    n = len(starts)
    heads = [-1] * n
    record_key = _record_key(lines)
    opens = {k for k in range(n) if _opens_block(lines, starts[k], record_key)}
    if opens:
        current = -1
        for k in range(n):
            if k in opens:
                current = k if tokens[k] <= HEAD_TOKENS else -1
            elif current >= 0:
                heads[k] = current
        return heads
    table = find_table(lines)
    if table is None or table.header is None:
        return heads
    header = max(k for k in range(n) if starts[k] <= table.header)
    if tokens[header] > HEAD_TOKENS:
        return heads
    for k in range(header + 1, n):
        heads[k] = header
    return heads
