"""Which record a part of a JSON item belongs to: its name, as a head (docs/excerpts.md,
"Heads").

A JSON item too long for one segment (a pod of `kubectl get pods -o json`: its metadata, spec
and status, 45 lines) is cut into runs of lines, and the run that answers says
`"restartCount": 57` or `"phase": "Failed"` with nothing to tell whose: the pod's name sat 30
lines above it, in another run. So the line that names such an item (`"name": "web-6c1f"`,
the shallowest of its name-like members) is cut into a segment of its own, which heads the
item's later segments, as a table's header heads its rows: shown beside a hit when the
budget allows, its words counting for the hit.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from .heads import HEAD_TOKENS

__all__ = ["json_heads", "with_item_names"]

# Members that name a record, best first: a `name` over an `id`, which only numbers it.
_NAME_KEYS = (
    "name",
    "full_name",
    "title",
    "hostname",
    "key",
    "slug",
    "login",
    "username",
    "email",
    "path",
    "filename",
    "file",
    "url",
    "sku",
    "nodeid",
    "id",
    "uid",
)
_RANK = {key: rank for rank, key in enumerate(_NAME_KEYS)}
# A member whose value is a string or a number on its line: `"name": "web-6c1f",`.
_NAMED = re.compile(r'^(\s*)"([A-Za-z_]+)"\s*:\s*(?:"(?:[^"\\]|\\.){1,200}"|-?\d+)\s*,?\s*$')


def with_item_names(
    lines: list[str], items: Sequence[int], starts: Sequence[int]
) -> tuple[list[int], dict[int, int]]:
    """`starts` with the naming line of each item cut into more than one segment made a
    segment of its own, and per such item (by its first line) that naming line."""
    bounds = [*items, len(lines)]
    cut = set(starts)
    names: dict[int, int] = {}
    for a, b in zip(bounds, bounds[1:], strict=False):
        after = bisect_right(starts, a)  # the first segment starting after the item's line
        if after == len(starts) or starts[after] >= b:
            continue  # whole in one segment: its name is in it
        name = _naming_line(lines, a, b)
        if name is None or name == a:
            continue
        names[a] = name
        cut.add(name)
        if name + 1 < b:
            cut.add(name + 1)
    return sorted(cut), names


def json_heads(
    starts: Sequence[int], tokens: Sequence[int], items: Sequence[int], names: dict[int, int]
) -> list[int]:
    """Per segment (first lines `starts`), the segment naming its item when it comes after
    that segment in the item (at most HEAD_TOKENS tokens), or -1."""
    heads = [-1] * len(starts)
    segment_at = {start: k for k, start in enumerate(starts)}
    for i, a in enumerate(items):
        end = items[i + 1] if i + 1 < len(items) else None
        name = names.get(a)
        head = segment_at.get(name) if name is not None else None
        if head is None or tokens[head] > HEAD_TOKENS:
            continue
        k = head + 1
        while k < len(starts) and (end is None or starts[k] < end):
            heads[k] = head
            k += 1
    return heads


def _naming_line(lines: list[str], a: int, b: int) -> int | None:
    """The line of lines[a:b] (one item) holding its name: the shallowest name-like member,
    the best-ranked key among equals, the first among those."""
    best: tuple[int, int, int] | None = None
    for i in range(a, b):
        m = _NAMED.match(lines[i])
        if m is None:
            continue
        rank = _RANK.get(m[2].lower())
        if rank is None:
            continue
        found = (len(m[1]), rank, i)
        if best is None or found < best:
            best = found
    return best[2] if best is not None else None
