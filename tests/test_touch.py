"""Touch: an entry's TTL restarts from now without a rewrite, everywhere at once (Get, the
index Redis expires by, every replica's Fit cache, the expiry schedule), and reaches watchers."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import timedelta

import pytest
import redis
from sharedctx import AsyncClient, InvalidArgumentError, ResourceExhaustedError
from sharedctx_server.settings import Settings
from sharedctx_server.state import keys as K
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving
from .test_expiry import expiries
from .test_watch_and_replicas import take, watching

NS = "team-a/touch"


async def test_a_touch_restarts_the_ttl_and_changes_nothing_else(
    client: AsyncClient, clean_redis: str
) -> None:
    written = await client.put(NS, "k", "a note", ttl_seconds=30)
    await asyncio.sleep(0.05)
    touched = await client.touch(NS, ["k"])
    after = await client.get(NS, "k")
    assert written.expires_at is not None and after.expires_at is not None
    assert touched == {"k": after.expires_at}
    # 30 s from the touch, not from the write.
    assert timedelta(0) < after.expires_at - written.expires_at < timedelta(seconds=5)
    assert (after.version, after.updated_at, after.content) == (1, written.updated_at, "a note")
    direct = redis.Redis.from_url(clean_redis)
    try:
        # Redis expires the hash and the reapers read the index: both moved with the entry.
        expiry_ms = direct.zscore(K.namespace(NS, "-").exp, "k")
        hash_expiry_ms = direct.pexpiretime(K.entry(NS, "k"))
    finally:
        direct.close()
    assert expiry_ms == hash_expiry_ms == after.expires_at.timestamp() * 1000


async def test_keys_without_a_ttl_are_left_alone_and_absent_or_expired_ones_are_missing(
    client: AsyncClient,
) -> None:
    stream = await watching(client, NS)
    await client.put(NS, "forever", "kept")
    await client.put(NS, "brief", "gone soon", ttl_seconds=1)
    await expiries(stream, 1)
    assert await client.touch(NS, ["forever", "brief", "never-written"]) == {"forever": None}
    assert (await client.get(NS, "forever")).expires_at is None


async def test_watchers_see_the_touch_with_the_entrys_version(client: AsyncClient) -> None:
    stream = await watching(client, NS, include_touches=True)
    plain = await watching(client, NS)  # clients that did not ask for touches never see one
    await client.put(NS, "k", "v1", ttl_seconds=60)
    await client.put(NS, "k", "v2", ttl_seconds=60)
    await client.put(NS, "plain", "no ttl")
    await client.touch(NS, ["k", "plain"])  # `plain` has no TTL: nothing happens to it
    await client.delete(NS, "k")
    ops = [(c.op, c.key, c.version) for c in await take(stream, 5)]
    assert ops == [
        ("put", "k", 1),
        ("put", "k", 2),
        ("put", "plain", 1),
        ("touch", "k", 2),
        ("delete", "k", 2),
    ]
    assert [c.op for c in await take(plain, 4)] == ["put", "put", "put", "delete"]


async def test_a_touched_entry_outlives_its_first_ttl_on_every_replica(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with (
        serving(settings, token_counter) as (_, a),
        serving(settings, token_counter) as (_, b),
    ):
        stream = await watching(a, NS)
        await a.put(NS, "stays", "a note about volcanoes")
        written = await a.put(NS, "touched", "a note about volcanoes too", ttl_seconds=3)
        assert written.expires_at is not None
        # b has the namespace cached before the touch: the change log must move its copy.
        assert (await b.fit(NS, "volcanoes", 1000)).keys == ["stays", "touched"]
        await asyncio.sleep(1.5)
        renewed = (await a.touch(NS, ["touched"]))["touched"]
        assert renewed is not None and renewed > written.expires_at
        # Past the first expiry, before the renewed one.
        await asyncio.sleep(max(0.0, written.expires_at.timestamp() - time.time()) + 0.5)
        assert time.time() < renewed.timestamp()
        assert (await b.fit(NS, "volcanoes", 1000)).keys == ["stays", "touched"]
        assert (await b.get(NS, "touched")).version == 1
        (event,) = await expiries(stream, 1)
        assert (event.key, event.version, event.time) == ("touched", 1, renewed)
        assert (await b.fit(NS, "volcanoes", 1000)).keys == ["stays"]


async def test_bad_touches_are_refused_whole(
    settings: Settings, token_counter: TokenCounter
) -> None:
    limits = replace(settings.limits, max_batch_entries=3)
    async with serving(settings, token_counter, limits=limits) as (_, client):
        await client.put(NS, "k", "x", ttl_seconds=60)
        before = (await client.get(NS, "k")).expires_at
        with pytest.raises(InvalidArgumentError, match="keys"):
            await client.touch(NS, [])
        with pytest.raises(InvalidArgumentError, match=r"keys\[1\]"):
            await client.touch(NS, ["k", ""])
        with pytest.raises(ResourceExhaustedError, match="keys holds 4 items"):
            await client.touch(NS, ["k", "a", "b", "c"])
        with pytest.raises(InvalidArgumentError, match="namespace"):
            await client.touch("bad namespace", ["k"])
        assert (await client.get(NS, "k")).expires_at == before
