"""Where the items of a JSON document sit in its source text, without re-serialising anything.

The compressor keeps items as the exact source text they had (an error line inside an item
stays byte for byte), so it needs item boundaries, not parsed values. The document has already
been validated by `json.loads`; this scanner only tokenises it (one regex, C speed per token)
and records spans. Containers are tracked as nodes down to `max_depth + 1` (the items of the
deepest sized container); below that only long string values are recorded, so the cost stays
one pass and the nesting depth of the document does not matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Node", "Scan", "scan_json"]

_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+', re.DOTALL)


@dataclass
class Node:
    """A value's span [start, end); containers list their values (and, for objects, key spans)."""

    start: int
    end: int
    kind: str  # "array", "object" or "value"
    depth: int
    values: list[Node] = field(default_factory=list)
    keys: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Scan:
    """The document's root container and the spans of its long string values, in order."""

    root: Node
    long_strings: list[tuple[int, int]]


@dataclass
class _Open:
    kind: str
    node: Node | None  # None below the tracked depth
    want_key: bool


def scan_json(text: str, max_depth: int, long_chars: int) -> Scan:
    """Spans of a valid JSON document whose top-level value is an array or an object."""
    stack: list[_Open] = []
    long_strings: list[tuple[int, int]] = []
    root: Node | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        start, end = match.span()
        top = stack[-1] if stack else None
        if token in "[{":
            depth = len(stack)
            kind = "array" if token == "[" else "object"
            node = Node(start, -1, kind, depth) if depth <= max_depth + 1 else None
            if top is None:
                root = node
            elif top.node is not None and node is not None:
                top.node.values.append(node)
            stack.append(_Open(kind, node, want_key=kind == "object"))
        elif token in "]}":
            closed = stack.pop()
            if closed.node is not None:
                closed.node.end = end
        elif token == ":":
            if top is not None:
                top.want_key = False
        elif token == ",":
            if top is not None and top.kind == "object":
                top.want_key = True
        elif top is not None:
            if top.kind == "object" and top.want_key:
                if top.node is not None:
                    top.node.keys.append((start, end))
                continue
            if token[0] == '"' and end - start > long_chars:
                long_strings.append((start, end))
            if top.node is not None and top.node.depth <= max_depth:
                top.node.values.append(Node(start, end, "value", top.node.depth + 1))
    if root is None:
        raise ValueError("not a JSON array or object")
    return Scan(root, long_strings)
