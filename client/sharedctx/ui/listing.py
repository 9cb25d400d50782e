"""One page of a namespace's entries, sorted by a column.

The API lists keys (Keys) and reads entries (GetMany), nothing in between: sorting by tokens,
time or TTL needs every entry's metadata. Up to `sort_limit` matching keys the page reads them
all (in chunks) and sorts; beyond, it sorts by key only (the order Keys returns) and reads
just the page's entries, and says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..client import AsyncClient
from ..types import Entry

__all__ = ["COLUMNS", "Listing", "load"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NEVER = datetime(9999, 1, 1, tzinfo=UTC)
_CHUNK = 200
_KEYS_PAGE = 1000

# Sortable columns: (heading, sort key, descending first?).
COLUMNS: dict[str, tuple[str, Callable[[Entry], Any], bool]] = {
    "key": ("key", lambda e: e.key, False),
    "kind": ("kind", lambda e: (e.kind, e.key), False),
    "agent": ("agent", lambda e: (e.agent_id, e.key), False),
    "thread": ("thread", lambda e: (e.thread, e.key), False),
    "time": ("time", lambda e: (e.event_time or _EPOCH, e.key), True),
    "ttl": ("TTL left", lambda e: (e.expires_at or _NEVER, e.key), False),
    "full": ("tokens full", lambda e: (e.original_tokens, e.key), True),
    "compressed": ("compressed", lambda e: (e.compressed_tokens, e.key), True),
    "version": ("version", lambda e: (e.version, e.key), True),
}


@dataclass(frozen=True)
class Listing:
    """A page of entries and where it sits."""

    entries: tuple[Entry, ...]
    total: int  # keys matching the prefix
    page: int  # 1-based
    pages: int
    sort: str
    descending: bool
    sortable: bool  # False: too many entries to sort by anything but the key
    page_size: int

    @property
    def first(self) -> int:
        """1-based position of the page's first row (0 when empty)."""
        return (self.page - 1) * self.page_size + 1 if self.entries else 0


async def _read(client: AsyncClient, namespace: str, keys: list[str]) -> list[Entry]:
    """The entries of `keys` that are still live, in the order of `keys`."""
    found: dict[str, Entry] = {}
    chunks = [keys[i : i + _CHUNK] for i in range(0, len(keys), _CHUNK)]
    for part in await asyncio.gather(*(client.get_many(namespace, c) for c in chunks)):
        found.update(part)
    return [found[k] for k in keys if k in found]


async def load(
    client: AsyncClient,
    namespace: str,
    *,
    prefix: str = "",
    sort: str = "time",
    descending: bool | None = None,
    page: int = 1,
    page_size: int = 50,
    sort_limit: int = 2000,
) -> Listing:
    """The page `page` of the entries whose key starts with `prefix`, sorted by `sort`."""
    # Large pages (the server caps them at its max_page_size): one call, not one per 100 keys.
    keys = [k async for k in client.keys(namespace, prefix, page_size=_KEYS_PAGE)]
    total = len(keys)
    sortable = total <= sort_limit
    if sort not in COLUMNS or (not sortable and sort != "key"):
        sort, descending = ("time" if sortable else "key"), None
    if descending is None:
        descending = COLUMNS[sort][2]
    pages = max(1, -(-total // page_size))
    page = min(max(1, page), pages)
    at = (page - 1) * page_size
    if sortable:
        entries = await _read(client, namespace, keys)
        entries.sort(key=COLUMNS[sort][1], reverse=descending)
        rows = entries[at : at + page_size]
    else:
        ordered = sorted(keys, reverse=descending)
        rows = await _read(client, namespace, ordered[at : at + page_size])
    return Listing(tuple(rows), total, page, pages, sort, descending, sortable, page_size)
