"""Each segment's head: the earlier, short segment that says what it is part of
(docs/excerpts.md, "Heads").

A line of tool output often means little alone: a `ps` row without the header naming its
columns, a file in `ls -lR` without its folder, a `git log --stat` file line without its
commit, a paragraph without its section. Fit shows a hit's head beside it when the budget
allows, so these are found once, at Put:
- block heads: a line that opens a block (compress.blocks: a commit, a folder, a section, a
  record of a listing such as `kubectl describe`'s `Name:`; in a terminal session of two or
  more commands, each command line, segment.commands) heads every segment after it up to the
  next block head;
- else a table's header row (compress.table_parse) heads every segment below it (each of
  stacked tables' headers, the segments of its own table);
- and a segment still without a head is headed by the label above it that it is indented
  under (`    Environment:` over `      DATABASE_URL: ...` in `kubectl describe`, `Limits:`,
  `Conditions:`; a YAML key over its block; a `def f(x):` line over the lines of its body).
A stack trace cut into several segments is headed by the record that logged it, which
segment.traces finds beside these (cut.py). A head is a segment of at most HEAD_TOKENS
tokens; a longer one would cost more than it says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..compress.blocks import opens_block, record_key
from ..compress.table_parse import find_tables
from ..compress.whitespace import indentation
from .commands import session_prompts

__all__ = ["HEAD_TOKENS", "segment_heads"]

HEAD_TOKENS = 64
# A label: a line that ends in a colon with nothing after it.
_LABEL = re.compile(r"^[ \t]*\S.*:$")


def segment_heads(lines: list[str], starts: Sequence[int], tokens: Sequence[int]) -> list[int]:
    """Per segment (first lines `starts`, token counts `tokens`), the segment that heads it,
    or -1."""
    n = len(starts)
    heads = [-1] * n
    key = record_key(lines)
    opens = {k for k in range(n) if opens_block(lines, starts[k], key)}
    opens.update(session_prompts(lines, starts))
    if opens:
        current = -1
        for k in range(n):
            if k in opens:
                current = k if tokens[k] <= HEAD_TOKENS else -1
            elif current >= 0:
                heads[k] = current
    else:
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
    _label_heads(lines, starts, tokens, heads)
    return heads


def _label_heads(
    lines: list[str], starts: Sequence[int], tokens: Sequence[int], heads: list[int]
) -> None:
    """Head each segment that has no head by the nearest label it is indented under: its
    lines say what the label's value is ("which environment variables did the pod have?"
    had found `Environment:` alone)."""
    labels: list[tuple[int, int]] = []  # open labels: indentation, segment
    for k, start in enumerate(starts):
        line = lines[start]
        if not line.strip():
            continue  # a blank line closes no block
        indent = indentation(line)
        while labels and labels[-1][0] >= indent:
            labels.pop()
        if heads[k] < 0 and labels:
            heads[k] = labels[-1][1]
        if tokens[k] <= HEAD_TOKENS and _LABEL.match(line) and _single(starts, k, len(lines)):
            labels.append((indent, k))


def _single(starts: Sequence[int], k: int, total: int) -> bool:
    """Whether segment k is one line (a label with its block in one segment heads nothing)."""
    end = starts[k + 1] if k + 1 < len(starts) else total
    return end - starts[k] == 1
