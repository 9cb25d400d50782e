"""Per-namespace quotas through the real gRPC API on a real Redis: reject, evict, overrides."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sharedctx import AsyncClient, Change, NotFoundError, PutItem, ResourceExhaustedError
from sharedctx_server.errors import ConfigError
from sharedctx_server.server import RunningServer, start
from sharedctx_server.settings import Settings
from sharedctx_server.state import keys as K
from sharedctx_server.state.quotas import Quota, QuotaTable
from sharedctx_server.tokens import TokenCounter

from .support.models import shared_embedder
from .support.servers import serving, wait_until

NS = "team-a/quota"


async def keys_of(client: AsyncClient, namespace: str = NS) -> list[str]:
    return [k async for k in client.keys(namespace)]


async def snapshot(client: AsyncClient, namespace: str = NS) -> tuple[list[str], Any]:
    """What a rejected write must leave unchanged: the keys and the totals."""
    return await keys_of(client, namespace), await client.stats(namespace)


async def is_gone(client: AsyncClient, key: str, namespace: str = NS) -> bool:
    try:
        await client.get(namespace, key)
    except NotFoundError:
        return True
    return False


def raw_keys(server: RunningServer, namespace: str = NS) -> K.NamespaceKeys:
    return K.namespace(namespace, server.store.model_id)


async def age_members(server: RunningServer, namespace: str = NS) -> set[str]:
    """The keys of the namespace's `age` index, read straight from Redis (the server's
    redis-py client, so that this works on a Redis Cluster too)."""
    raw = await server.store.redis.zrange(raw_keys(server, namespace).age, 0, -1)
    return {k.decode() for k in raw}


async def log_ops(server: RunningServer, namespace: str = NS) -> list[tuple[str, str]]:
    _, changes = await server.store.log.after(namespace, "0", 10_000)
    return [(c.op, c.key) for c in changes]


# --- reject --------------------------------------------------------------------------------


async def test_reject_on_max_entries_names_the_limit_and_writes_nothing(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, namespace_max_entries=3) as (_, client):
        await client.put_many(NS, [PutItem(key=f"k{i}", content=f"entry {i}") for i in range(3)])
        before = await snapshot(client)
        with pytest.raises(ResourceExhaustedError) as info:
            await client.put(NS, "k3", "one too many")
        assert info.value.limit == "max_entries"
        assert NS in info.value.message
        assert "1 over its max_entries quota of 3" in info.value.message
        assert "--namespace-max-entries" in info.value.message
        assert await snapshot(client) == before
        assert await is_gone(client, "k3")


async def test_reject_on_max_bytes_names_the_limit_and_writes_nothing(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, namespace_max_bytes=100) as (_, client):
        await client.put(NS, "a", "a" * 60)
        assert (await client.stats(NS)).bytes_stored == 60
        before = await snapshot(client)
        with pytest.raises(ResourceExhaustedError) as info:
            await client.put_many(
                NS, [PutItem(key="b", content="b" * 30), PutItem(key="c", content="c" * 30)]
            )
        assert info.value.limit == "max_bytes"
        assert "120 bytes, 20 over its max_bytes quota of 100" in info.value.message
        assert await snapshot(client) == before


async def test_overwriting_at_the_limit_is_allowed(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(
        settings, token_counter, namespace_max_entries=2, namespace_max_bytes=100
    ) as (_, client):
        await client.put(NS, "a", "a" * 40)
        await client.put(NS, "b", "b" * 50)
        rewritten = await client.put(NS, "a", "A" * 50)  # +10 bytes, no new entry: 100 <= 100
        assert rewritten.version == 2
        stats = await client.stats(NS)
        assert (stats.entries, stats.bytes_stored) == (2, 100)
        with pytest.raises(ResourceExhaustedError) as info:
            await client.put(NS, "b", "b" * 51)  # an overwrite may not grow past max_bytes
        assert info.value.limit == "max_bytes"


async def test_an_entry_larger_than_max_bytes_is_always_rejected(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(
        settings, token_counter, namespace_max_bytes=100, quota_policy="evict_oldest"
    ) as (_, client):
        await client.put(NS, "small", "s" * 10)
        with pytest.raises(ResourceExhaustedError) as info:
            await client.put(NS, "huge", "h" * 101)
        assert info.value.limit == "max_bytes"
        assert "this entry alone is 101 bytes" in info.value.message
        assert await keys_of(client) == ["small"]  # nothing was evicted for it


# --- evict_oldest --------------------------------------------------------------------------


async def test_evict_oldest_keeps_the_newest_and_forgets_the_rest_everywhere(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(
        settings, token_counter, namespace_max_entries=3, quota_policy="evict_oldest"
    ) as (server, client):
        for i in range(3):
            await client.put(NS, f"k{i}", f"distinct text number {i} about topic {i * 7}")
        # Load the Fit cache first, so it must learn of the evictions from the change log.
        assert sorted((await client.fit(NS, "topic", 10_000)).keys) == ["k0", "k1", "k2"]
        for i in range(3, 6):
            await client.put(NS, f"k{i}", f"distinct text number {i} about topic {i * 7}")

        live = ["k3", "k4", "k5"]
        assert await keys_of(client) == live
        for gone in ("k0", "k1", "k2"):
            assert await is_gone(client, gone)
        assert sorted((await client.fit(NS, "topic", 10_000)).keys) == live
        stats = await client.stats(NS)
        entries = [await client.get(NS, k, full=True) for k in live]
        assert stats.entries == 3
        assert stats.bytes_stored == sum(len(e.content.encode()) for e in entries)
        assert stats.original_tokens == sum(e.original_tokens for e in entries)
        assert await age_members(server) == set(live)
        # Embedding references of the evicted texts were released, and their vectors dropped.
        refs = await server.store.redis.hgetall(raw_keys(server).embref)
        vectors = await server.store.redis.hkeys(raw_keys(server).emb)
        assert len(refs) == 3 and set(refs.values()) == {b"1"}
        assert set(vectors) == set(refs)
        assert [op for op in await log_ops(server) if op[0] == "evict"] == [
            ("evict", "k0"),
            ("evict", "k1"),
            ("evict", "k2"),
        ]


async def test_eviction_never_removes_a_key_of_the_same_batch(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(
        settings, token_counter, namespace_max_entries=3, quota_policy="evict_oldest"
    ) as (_, client):
        for key in ("x", "y", "z"):
            await client.put(NS, key, f"{key} first")
        # x is the oldest, but this batch rewrites it: y must go instead.
        await client.put_many(
            NS, [PutItem(key="x", content="x again"), PutItem(key="new", content="new one")]
        )
        assert await keys_of(client) == ["new", "x", "z"]
        assert (await client.get(NS, "x")).content == "x again"


async def test_eviction_follows_write_order_not_key_order(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(
        settings, token_counter, namespace_max_entries=2, quota_policy="evict_oldest"
    ) as (_, client):
        await client.put_many(NS, [PutItem(key="b", content="1"), PutItem(key="a", content="2")])
        await client.put(NS, "b", "rewritten: now the newest")
        await client.put(NS, "c", "3")
        assert await keys_of(client) == ["b", "c"]


async def test_eviction_under_a_byte_limit_asks_for_more_candidates_as_needed(
    settings: Settings, token_counter: TokenCounter
) -> None:
    # 200 entries of 10 bytes fill 2000 bytes; one 1500-byte entry needs 150 evictions, more
    # than the store's first guess of candidates, so the script must ask for more.
    async with serving(
        settings, token_counter, namespace_max_bytes=2000, quota_policy="evict_oldest"
    ) as (server, client):
        small = [PutItem(key=f"s{i:03d}", content=f"entry {i:04d}") for i in range(200)]
        await client.put_many(NS, small[:100])
        await client.put_many(NS, small[100:])
        assert (await client.stats(NS)).bytes_stored == 2000
        await client.put(NS, "big", "b" * 1500)
        expected = [f"s{i:03d}" for i in range(150, 200)] + ["big"]
        assert sorted(await keys_of(client)) == sorted(expected)
        stats = await client.stats(NS)
        assert (stats.entries, stats.bytes_stored) == (51, 2000)
        assert await age_members(server) == set(expected)


async def test_expired_entries_are_swept_before_anything_live_is_evicted(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(
        settings, token_counter, namespace_max_entries=2, quota_policy="evict_oldest"
    ) as (server, client):
        await client.put(NS, "live", "the oldest, and still live")
        await client.put(NS, "short", "newer, but expires", ttl_seconds=1)

        async def expired() -> bool:
            return await is_gone(client, "short")

        await wait_until(expired)
        await client.put(NS, "new", "fits once the expired one is swept")
        assert await keys_of(client) == ["live", "new"]
        ops = await log_ops(server)
        assert ("expire", "short") in ops
        assert not [op for op in ops if op[0] == "evict"]


async def test_watch_sees_evictions(settings: Settings, token_counter: TokenCounter) -> None:
    async with serving(
        settings, token_counter, namespace_max_entries=2, quota_policy="evict_oldest"
    ) as (_, client):
        stream = client.watch(NS)
        first = asyncio.create_task(_take_until(stream, lambda c: True))

        async def watching() -> bool:
            # The stream starts "from now": write until it has seen one of our writes.
            await client.put(NS, "probe", "p")
            return first.done()

        await wait_until(watching)
        (seen,) = first.result()
        await client.put(NS, "a", "one")
        await client.put(NS, "b", "two")
        changes = await _take_until(
            client.watch(NS, seen.resume_token), lambda c: (c.op, c.key) == ("put", "b")
        )
        # Leave out the probe puts (how many the wait made is not fixed).
        tail = [(c.op, c.key) for c in changes if (c.op, c.key) != ("put", "probe")]
        assert tail == [("put", "a"), ("evict", "probe"), ("put", "b")]


async def _take_until(
    stream: AsyncIterator[Change], last: Any, timeout: float = 10
) -> list[Change]:
    out: list[Change] = []

    async def collect() -> None:
        async for change in stream:
            out.append(change)
            if last(change):
                return

    await asyncio.wait_for(collect(), timeout)
    return out


@pytest.mark.parametrize("policy", ["reject", "evict_oldest"])
async def test_concurrent_writers_cannot_overshoot_the_quota(
    settings: Settings, token_counter: TokenCounter, policy: str
) -> None:
    async with serving(settings, token_counter, namespace_max_entries=5, quota_policy=policy) as (
        server,
        client,
    ):

        async def put(i: int) -> bool:
            try:
                await client.put(NS, f"k{i:02d}", f"writer {i}")
            except ResourceExhaustedError:
                return False
            return True

        accepted = await asyncio.gather(*(put(i) for i in range(30)))
        live = await keys_of(client)
        assert len(live) == 5 and (await client.stats(NS)).entries == 5
        assert await age_members(server) == set(live)
        assert sum(accepted) == (5 if policy == "reject" else 30)


# --- the age index stays exact -------------------------------------------------------------


async def test_age_holds_exactly_the_live_keys_after_deletes_expiry_and_clear(
    server: RunningServer, client: AsyncClient
) -> None:
    await client.put_many(NS, [PutItem(key=f"k{i}", content=f"v{i}") for i in range(4)])
    await client.put(NS, "k3", "overwritten")
    await client.delete(NS, "k2")
    assert await age_members(server) == {"k0", "k1", "k3"}

    await client.put_many(
        NS, [PutItem(key=f"t{i}", content="brief", ttl_seconds=1) for i in range(3)]
    )

    async def expired() -> bool:
        return all([await is_gone(client, f"t{i}") for i in range(3)])

    await wait_until(expired)
    await client.stats(NS)  # sweeps the expired ones
    assert await age_members(server) == {"k0", "k1", "k3"}
    assert await client.clear(NS) == 3
    assert await age_members(server) == set()


# --- configuration -------------------------------------------------------------------------


def write_quotas(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "quotas.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


async def test_the_longest_matching_prefix_of_the_quotas_file_wins(
    settings: Settings, token_counter: TokenCounter, tmp_path: Path
) -> None:
    path = write_quotas(
        tmp_path,
        {
            "namespaces": {
                "": {"max_entries": 3},
                "team-a/": {"max_entries": 1},
                "team-a/big/": {"max_entries": 0},
                "team-b/": {"policy": "evict_oldest"},
            }
        },
    )
    async with serving(settings, token_counter, quotas=path, namespace_max_entries=2) as (_, c):
        await c.put("team-a/x", "k0", "x")
        with pytest.raises(ResourceExhaustedError) as info:
            await c.put("team-a/x", "k1", "x")
        assert "for prefix 'team-a/' in the --quotas file" in info.value.message
        await c.put_many("team-a/big/x", [PutItem(key=f"k{i}", content="x") for i in range(5)])
        await c.put_many("other", [PutItem(key=f"k{i}", content="x") for i in range(3)])
        with pytest.raises(ResourceExhaustedError):
            await c.put("other", "k3", "x")
        # team-b/ sets only the policy: max_entries comes from the server default (2).
        for i in range(4):
            await c.put("team-b/x", f"k{i}", "x")
        assert await keys_of(c, "team-b/x") == ["k2", "k3"]


BAD_FILES: list[tuple[str, Any, str]] = [
    ("not JSON", "{nope", "is not valid JSON"),
    ("no namespaces", {"tokens": []}, 'must hold exactly {"namespaces"'),
    ("namespaces a list", {"namespaces": ["team-a/"]}, "must map namespace prefixes"),
    (
        "negative limit",
        {"namespaces": {"t/": {"max_entries": -1}}},
        "namespaces['t/']: max_entries",
    ),
    ("limit a string", {"namespaces": {"t/": {"max_bytes": "10MB"}}}, "max_bytes must be an int"),
    ("limit true", {"namespaces": {"t/": {"max_bytes": True}}}, "max_bytes must be an integer"),
    ("unknown field", {"namespaces": {"t/": {"max_entry": 5}}}, "unknown field 'max_entry'"),
    ("bad policy", {"namespaces": {"t/": {"policy": "lru"}}}, "policy must be one of"),
    ("glob prefix", {"namespaces": {"t/*": {"max_entries": 5}}}, "namespaces['t/*']: a prefix"),
]


@pytest.mark.parametrize(("case", "data", "message"), BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_a_bad_quotas_file_is_a_config_error_naming_the_entry(
    tmp_path: Path, case: str, data: Any, message: str
) -> None:
    settings = Settings(quotas=write_quotas(tmp_path, data))
    with pytest.raises(ConfigError, match=re.escape(message)):
        QuotaTable.from_settings(settings)


def test_bad_defaults_are_config_errors() -> None:
    # The defaults are settings, refused as the settings are built.
    with pytest.raises(ConfigError, match="SHAREDCTX_QUOTA_POLICY must be one of reject, evict"):
        Settings(quota_policy="newest")
    with pytest.raises(ConfigError, match="SHAREDCTX_NAMESPACE_MAX_BYTES must be an integer >= 0"):
        Settings(namespace_max_bytes=-5)
    with pytest.raises(ConfigError, match="cannot read the quotas file"):
        QuotaTable.from_settings(Settings(quotas=Path("/nonexistent/quotas.json")))


async def test_a_bad_quotas_file_stops_the_server_from_starting(
    settings: Settings, token_counter: TokenCounter, tmp_path: Path
) -> None:
    path = write_quotas(tmp_path, {"namespaces": {"team-a/": {"policy": "lru"}}})
    with pytest.raises(ConfigError, match="team-a/"):
        await start(
            replace(settings, quotas=path), tokens=token_counter, embedder=shared_embedder()
        )


async def test_a_bad_quotas_file_stops_the_start_before_the_embedded_redis(tmp_path: Path) -> None:
    path = write_quotas(tmp_path, {"namespaces": {"team-a/": {"policy": "lru"}}})
    data_dir = tmp_path / "never-created"
    with pytest.raises(ConfigError, match="team-a/"):
        await start(Settings(quotas=path, data_dir=data_dir))
    assert not data_dir.exists()


def test_quota_settings_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "SHAREDCTX_NAMESPACE_MAX_ENTRIES": "10",
            "SHAREDCTX_NAMESPACE_MAX_BYTES": "2048",
            "SHAREDCTX_QUOTA_POLICY": "evict_oldest",
            "SHAREDCTX_QUOTAS": "/etc/sharedctx/quotas.json",
        }
    )
    assert settings.quotas == Path("/etc/sharedctx/quotas.json")
    table = QuotaTable.from_settings(replace(settings, quotas=None))
    assert table.for_namespace("any") == Quota(10, 2048, "evict_oldest")
