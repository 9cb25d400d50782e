"""On a Redis Cluster each namespace lives on one slot, and namespaces spread over the masters."""

from __future__ import annotations

from collections import defaultdict

from redis.asyncio import RedisCluster
from sharedctx import AsyncClient, PutItem
from sharedctx_server.server import RunningServer
from sharedctx_server.state import keys

from ..support.redis_cluster import LocalCluster

# The key kinds the writes below must have created (the segment after the hash tag).
WRITTEN = {"e", "idx", "exp", "sizes", "stats", "meta", "log", "embref", "emb"}


def _kind(key: str) -> str:
    return key.split("}:", 1)[1].split(":", 1)[0]


def known_kinds() -> set[str]:
    """Every kind of key keys.py builds."""
    return {_kind(k) for k in keys.namespace("ns", "model").as_list()} | {
        _kind(keys.entry("ns", "key"))
    }


def _namespaces_on_two_masters(cluster: LocalCluster) -> tuple[str, str]:
    """Two namespace names whose hash tags fall on slots held by different masters."""
    first = "team-a/slots-0"
    for i in range(1, 100):
        other = f"team-b/slots-{i}"
        if cluster.owner_of(f"{{{other}}}") != cluster.owner_of(f"{{{first}}}"):
            return first, other
    raise AssertionError("no namespace found on another master")


async def _write_every_kind_of_key(client: AsyncClient, namespace: str) -> None:
    # Entries (hash per entry), a TTL (exp index), embeddings (emb, embref), stats, meta and
    # the change log: every key type the store has.
    await client.put_many(
        namespace,
        [
            PutItem(key="a", content="the build failed on redis timeouts"),
            PutItem(key="b", content="short lived note", ttl_seconds=3600),
            PutItem(key="c", content="embedded later", embed="async"),
        ],
    )
    await client.fit(namespace, "why did the build fail", 500)
    await client.stats(namespace)
    await client.delete(namespace, "a")


async def test_every_key_of_a_namespace_is_on_one_slot_and_namespaces_spread(
    redis_cluster: LocalCluster, server: RunningServer, client: AsyncClient
) -> None:
    assert isinstance(server.store.redis, RedisCluster)
    first, second = _namespaces_on_two_masters(redis_cluster)
    for namespace in (first, second):
        await _write_every_kind_of_key(client, namespace)
    assert server.embeddings is not None
    await server.embeddings.idle()

    slots: dict[str, set[int]] = defaultdict(set)
    nodes: dict[str, set[int]] = defaultdict(set)
    kinds: dict[str, set[str]] = defaultdict(set)
    outside: set[str] = set()
    for node in redis_cluster.node_clients():
        try:
            port = int(node.connection_pool.connection_kwargs["port"])
            for raw in node.scan_iter(match="*", count=1000):
                key = raw.decode()
                if "{" not in key:
                    outside.add(key)
                    continue
                namespace = key.split("{", 1)[1].split("}", 1)[0]
                slots[namespace].add(int(node.cluster("keyslot", key)))
                nodes[namespace].add(port)
                kinds[namespace].add(_kind(key))
        finally:
            node.close()

    assert set(slots) == {first, second}, "every key carries its namespace's hash tag"
    # ... but the registry of namespaces (the Namespaces RPC) and the expiry schedule.
    known = {keys.NAMESPACES, keys.NAMESPACES_FILLED, keys.EXPIRIES, keys.EXPIRIES_FILLED}
    assert keys.NAMESPACES in outside and outside <= known
    for namespace in (first, second):
        assert len(slots[namespace]) == 1, (namespace, slots[namespace])
        assert len(nodes[namespace]) == 1
        # Every kind of key a write touches is there, and nothing keys.py does not know.
        assert WRITTEN <= kinds[namespace] <= known_kinds(), kinds[namespace]
    assert nodes[first] != nodes[second]
