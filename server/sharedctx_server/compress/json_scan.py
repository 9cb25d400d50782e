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

# A string (a key when a colon follows it: in valid JSON only keys are followed by one), an
# opening or closing bracket, or a bare value (number, true, false, null). Commas and colons
# carry nothing a valid document's structure needs and are not matched: a record of four
# fields costs 10 turns of the loop rather than 17.
_TOKEN = re.compile(
    r'("[^"\\]*(?:\\.[^"\\]*)*")([ \t\r\n]*:)?|([\[{])|([\]}])|[^\s\[\]{}:,"]+', re.DOTALL
)
_STRING, _KEY, _OPEN, _CLOSE = 1, 2, 3, 4


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


def scan_json(text: str, max_depth: int, long_chars: int) -> Scan:
    """Spans of a valid JSON document whose top-level value is an array or an object."""
    stack: list[Node | None] = []  # the open containers (None below the tracked depth)
    long_strings: list[tuple[int, int]] = []
    root: Node | None = None
    for match in _TOKEN.finditer(text):
        which = match.lastindex
        if which == _OPEN:
            depth = len(stack)
            kind = "array" if match.group(_OPEN) == "[" else "object"
            node = Node(match.start(), -1, kind, depth) if depth <= max_depth + 1 else None
            if not stack:
                root = node
            elif (top := stack[-1]) is not None and node is not None:
                top.values.append(node)
            stack.append(node)
        elif which == _CLOSE:
            closed = stack.pop()
            if closed is not None:
                closed.end = match.end()
        elif which == _KEY:
            if stack and (top := stack[-1]) is not None:
                top.keys.append(match.span(_STRING))
        elif stack:
            start, end = match.span(_STRING) if which == _STRING else match.span()
            if which == _STRING and end - start > long_chars:
                long_strings.append((start, end))
            top = stack[-1]
            if top is not None and top.depth <= max_depth:
                top.values.append(Node(start, end, "value", top.depth + 1))
    if root is None:
        raise ValueError("not a JSON array or object")
    return Scan(root, long_strings)
