"""Which line of a directory listing each of its entries was read from: where the marks of a
listed file (its size among the largest, its name) are placed (segment.extremes,
segment.row_name_marks)."""

from __future__ import annotations

from collections import defaultdict, deque

from ..compress.listing_parse import Entry, parse_listing

__all__ = ["listed_entries"]


def listed_entries(lines: list[str]) -> list[tuple[int, Entry]]:
    """Each entry of the listing `lines` hold, with the index of the line it was read from;
    an entry not found as a line of its own is left out. Entries come folder by folder (a
    `find` lists a folder's files between another's), so each takes the first unused line
    that reads as it does."""
    at: defaultdict[str, deque[int]] = defaultdict(deque)
    for i, line in enumerate(lines):
        at[line.strip()].append(i)
    found: list[tuple[int, Entry]] = []
    for folder in parse_listing(lines).folders.values():
        for item in folder.items:
            if isinstance(item, Entry):
                free = at.get(item.line.strip())
                if free:
                    found.append((free.popleft(), item))
    return found
