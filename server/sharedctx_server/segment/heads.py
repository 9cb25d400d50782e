"""Each segment's head: the earlier, short segment that says what it is part of
(docs/excerpts.md, "Heads").

A line of tool output often means little alone: a `ps` row without the header naming its
columns, a file in `ls -lR` without its folder, a `git log --stat` file line without its
commit, a paragraph without its section. Fit shows a hit's head beside it when the budget
allows, so these are found once, at Put:
- block heads: a line that opens a block (compress.blocks: a commit, a folder, a section, a
  record of a listing such as `kubectl describe`'s `Name:`) heads every segment after it up
  to the next block head;
- else a table's header row (compress.table_parse) heads every segment below it (each of
  stacked tables' headers, the segments of its own table).
A head is a segment of at most HEAD_TOKENS tokens; a longer one would cost more than it says.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..compress.blocks import opens_block, record_key
from ..compress.table_parse import find_tables

__all__ = ["HEAD_TOKENS", "segment_heads"]

HEAD_TOKENS = 64


def segment_heads(lines: list[str], starts: Sequence[int], tokens: Sequence[int]) -> list[int]:
    """Per segment (first lines `starts`, token counts `tokens`), the segment that heads it,
    or -1."""
    n = len(starts)
    heads = [-1] * n
    key = record_key(lines)
    opens = {k for k in range(n) if opens_block(lines, starts[k], key)}
    if opens:
        current = -1
        for k in range(n):
            if k in opens:
                current = k if tokens[k] <= HEAD_TOKENS else -1
            elif current >= 0:
                heads[k] = current
        return heads
    for section in find_tables(lines):
        if section.table is None or section.table.header is None:
            continue
        header = max(k for k in range(n) if starts[k] <= section.table.header)
        if tokens[header] > HEAD_TOKENS:
            continue
        for k in range(header + 1, n):
            if starts[k] >= section.end:
                break
            heads[k] = header
    return heads
