"""Which segments hold a row a table names, a directory listing's entry, or a part of an item
a line names (a JSON item's `"name":`), as mark terms for BM25 (fit.row_names says why;
docs/excerpts.md, "Named rows")."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from ..compress.listing_parse import Entry
from ..compress.table_parse import Section
from ..fit.lexical import lexical_terms
from ..fit.row_names import NAME_COLUMNS, name_marks

__all__ = ["item_name_terms", "row_name_terms"]

# What a listing's `name -> target` row is, in the words a question uses for it ("what does
# python3 link to?", "which files are symlinks?"): the row itself says it with an arrow.
_LINK_WORDS = lexical_terms("link symlink symbolic")


def row_name_terms(
    starts: Sequence[int],
    tables: Sequence[Section],
    entries: Sequence[tuple[int, Entry]] = (),
) -> dict[int, list[str]]:
    """Per segment (first lines `starts`) holding rows of `tables` with columns that name
    them (headers in NAME_COLUMNS: `docker ps` has IMAGE and NAMES), or `entries` of a
    directory listing (listed_entries: by line), the marks of those rows' names; a listed
    symbolic link's segment also carries the words for one (_LINK_WORDS)."""
    marks: dict[int, list[str]] = {}
    for line, entry in entries:
        held = marks.setdefault(bisect_right(starts, line) - 1, [])
        held.extend(m for m in name_marks(entry.name) if m not in held)
        if entry.target:
            held.extend(w for w in _LINK_WORDS if w not in held)
    for section in tables:
        table = section.table
        if table is None or table.header is None:
            continue
        named = [c for c, column in enumerate(table.columns) if column.lower() in NAME_COLUMNS]
        if not named:
            continue
        for line, values in zip(table.rows, table.values, strict=True):
            held = marks.setdefault(bisect_right(starts, line) - 1, [])
            for c in named:
                if c < len(values):
                    held.extend(m for m in name_marks(values[c]) if m not in held)
    return {k: terms for k, terms in marks.items() if terms}


# The line that names an item: `"name": "grpcio",` (a JSON item cut in parts is headed by it,
# segment.json_parts; which member names an item is json_parts' to choose), or the `Key: value`
# line that opens each record of a listing of records (`Name: grpcio` of `pip show`,
# `Package: python3` of `apt-cache show`; compress.blocks.record_key).
_NAMING_LINE = re.compile(
    r'^\s*"?(?P<key>[A-Za-z_]{2,20})"?\s*:\s*"?(?P<value>[^"\s,{}\[\]]{1,200})"?,?\s*$'
)


def item_name_terms(
    lines: Sequence[str], starts: Sequence[int], heads: Sequence[int]
) -> dict[int, list[str]]:
    """Per segment of an item whose head is the line naming it (`"name": "grpcio"`, `Name:
    grpcio`; a key of NAME_COLUMNS), the marks of that name: on the head and on every segment
    it heads. "What does grpcio require?" is about the `requires_dist` of the item named
    grpcio, two segments below its name, not the lines of the packages that require grpcio."""
    members: dict[int, list[int]] = {}
    for k, head in enumerate(heads):
        if head >= 0:
            members.setdefault(int(head), []).append(k)
    marks: dict[int, list[str]] = {}
    for head, below in members.items():
        found = _NAMING_LINE.match(lines[starts[head]])
        if found is None or found["key"].lower() not in NAME_COLUMNS:
            continue
        named = name_marks(found["value"])
        for k in (head, *below):
            held = marks.setdefault(k, [])
            held.extend(m for m in named if m not in held)
    return marks
