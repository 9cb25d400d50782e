"""`SharedContextStore`: a LangGraph `BaseStore` whose items live in sharedctx.

Each LangGraph namespace is a sharedctx namespace (names.py), each item an entry whose
content is the value's JSON; `search` with a query is ranked by Fit's scoring (search.py).
`batch` runs on the blocking client, `abatch` on the asyncio one, through the same plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import grpc
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from ..client import DEFAULT_TARGET, AsyncClient, Client
from ..loop_clients import LoopClients
from . import names, values
from .ops import Layout, list_namespaces, read_entries, to_item, touch_calls, write_calls
from .plans import Plan, arun, gather, parallel, run
from .search import search


class SharedContextStore(BaseStore):
    """LangGraph store backed by a sharedctx server.

    SharedContextStore(target="127.0.0.1:50051", token=None, index=None, ttl=None, *,
    prefix="", credentials=None, timeout=10.0): `index` is LangGraph's IndexConfig, of which
    only `fields` matters (the server embeds, with its own model); `ttl` is LangGraph's
    TTLConfig (`default_ttl` in minutes); `prefix` is prepended to every sharedctx namespace
    the store uses (e.g. "team-a/memories/", so that a token granted that prefix covers it).
    A read with `refresh_ttl` (LangGraph's default, unless the TTLConfig's
    `refresh_on_read` is False) restarts the TTL of each item it returns that has one
    (sharedctx's Touch, which needs `write` permission), as LangGraph's Postgres store does.
    """

    supports_ttl = True

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        token: str | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        *,
        prefix: str = "",
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.index_config = index
        self.ttl_config = ttl
        fields = tuple((index or {}).get("fields") or (values.WHOLE,))
        self._layout = Layout(prefix=names.check_prefix(prefix), fields=fields)
        connection: dict[str, Any] = dict(
            target=target, token=token, credentials=credentials, timeout=timeout
        )
        self._client = Client(**connection)
        self._aclients = LoopClients(lambda: AsyncClient(**connection))

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations with the blocking client; results in the order of `ops`."""
        return run(self._client, _plan(ops, self._layout))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations with the asyncio client; results in the order of `ops`."""
        return await arun(self._aclients.get(), _plan(ops, self._layout))

    def close(self) -> None:
        """Close the blocking client's channel (an asyncio one closes with aclose())."""
        self._client.close()

    async def aclose(self) -> None:
        """Close the blocking and the asyncio clients' channels."""
        self._client.close()
        await self._aclients.close()

    def __enter__(self) -> SharedContextStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SharedContextStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _plan(ops: Iterable[Op], layout: Layout) -> Plan[list[Result]]:
    """A batch, as InMemoryStore runs one: every read sees the store as it was before the
    batch, then the writes, one per (namespace, key) at its first position, the last op
    winning. Every write is checked (namespace, value, TTL) before the first call. The reads
    (one GetMany per namespace for the gets, each search and listing) therefore depend on no
    write and none on another: they run side by side, then the writes together."""
    ops = list(ops)
    results: list[Result] = [None] * len(ops)
    gets: list[tuple[int, str, GetOp]] = []
    reads: list[tuple[int, Plan[Any]]] = []
    # (sharedctx namespace, key) of the entries the searches read that have a TTL
    expiring: set[tuple[str, str]] = set()
    puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for i, op in enumerate(ops):
        if isinstance(op, GetOp):
            gets.append((i, names.encode(op.namespace, layout.prefix), op))
        elif isinstance(op, SearchOp):
            reads.append((i, search(op, layout, expiring)))
        elif isinstance(op, ListNamespacesOp):
            reads.append((i, list_namespaces(op, layout)))
        elif isinstance(op, PutOp):
            puts[(op.namespace, op.key)] = op
        else:
            raise ValueError(f"Unknown operation type: {type(op)}")
    writes = write_calls(puts, layout)
    wanted: dict[str, list[str]] = {}
    for _, name, op in gets:
        wanted.setdefault(name, []).append(op.key)
    # The gets' read stays first, as when the reads ran one after another, so that a batch
    # whose gets and a search both fail still raises the gets' error.
    entries, *found = yield from parallel([read_entries(wanted), *(plan for _, plan in reads)])
    for i, name, op in gets:
        results[i] = to_item(entries.get((name, op.key)), op.namespace, found=False)
    for (i, _), result in zip(reads, found, strict=True):
        results[i] = result
    # TTL refresh of what the reads returned: part of each read, so before the writes would
    # be; alongside them is the same, since a write restarts a TTL anyway.
    renew: dict[str, list[str]] = {}
    for _, name, get in gets:
        entry = entries.get((name, get.key))
        if get.refresh_ttl and entry is not None and entry.expires_at is not None:
            renew.setdefault(name, []).append(get.key)
    for i, _ in reads:
        searched = ops[i]
        if isinstance(searched, SearchOp) and searched.refresh_ttl:
            for item in cast(list[SearchItem], results[i]):
                name = names.encode(item.namespace, layout.prefix)
                if (name, item.key) in expiring:
                    renew.setdefault(name, []).append(item.key)
    yield from gather([*touch_calls(renew), *writes])
    return results
