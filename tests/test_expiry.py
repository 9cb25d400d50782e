"""Expiries acted on when they fall due: an entry's expiry reaches watchers, the totals and
Fit within about a second of its TTL, with nothing else happening, exactly once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import redis
from sharedctx import AsyncClient, Change
from sharedctx_server.settings import Settings
from sharedctx_server.state import keys as K
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving
from .test_watch_and_replicas import take, watching

NS = "team-a/expiry"


async def expiries(stream: AsyncIterator[Change], n: int, timeout: float = 10) -> list[Change]:
    """The next `n` expire events of the stream (other events pass)."""
    out: list[Change] = []

    async def collect() -> None:
        async for change in stream:
            if change.op == "expire":
                out.append(change)
                if len(out) == n:
                    return

    await asyncio.wait_for(collect(), timeout)
    return out


async def test_a_lone_entrys_expiry_reaches_watchers_on_time_with_its_version(
    client: AsyncClient,
) -> None:
    stream = await watching(client, NS)
    await client.put(NS, "k", "first")
    written = await client.put(NS, "k", "second", ttl_seconds=1)
    assert written.expires_at is not None
    (event,) = await expiries(stream, 1)
    seen_at = time.time()
    assert (event.key, event.version) == ("k", 2)
    assert event.time == written.expires_at  # stamped with the expiry, not when it was noticed
    assert seen_at - written.expires_at.timestamp() < 2.0  # about a second, not at a next write


async def test_the_totals_and_fit_see_the_expiry_when_it_happens(
    client: AsyncClient, clean_redis: str
) -> None:
    stream = await watching(client, NS)
    await client.put(NS, "stays", "a note about volcanoes")
    await client.put(NS, "goes", "a note about volcanoes too", ttl_seconds=1)
    await expiries(stream, 1)
    direct = redis.Redis.from_url(clean_redis)
    try:
        # Read straight from Redis: no Stats call (which would sweep) has happened.
        entries = direct.hget(K.namespace(NS, "-").stats, "entries")
    finally:
        direct.close()
    assert int(entries or 0) == 1
    assert (await client.fit(NS, "volcanoes", 1000)).keys == ["stays"]


async def test_each_expiry_is_reported_once_however_many_replicas_run(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with (
        serving(settings, token_counter) as (_, a),
        serving(settings, token_counter) as (_, b),
        serving(settings, token_counter) as (_, c),
    ):
        stream = await watching(a, NS)
        for i in range(20):
            await (a, b, c)[i % 3].put(NS, f"k{i}", "x", ttl_seconds=1)
        events = await expiries(stream, 20)
        assert sorted(e.key for e in events) == sorted(f"k{i}" for i in range(20))
        # Nothing more comes: a write after the expiries shows up next, not a repeat.
        await a.put(NS, "after", "x")
        (nxt,) = await take(stream, 1)
        assert (nxt.op, nxt.key) == ("put", "after")


async def test_entries_scheduled_by_an_older_server_still_expire_on_time(
    settings: Settings, token_counter: TokenCounter, clean_redis: str
) -> None:
    async with serving(settings, token_counter, expiry_poll_seconds=3600) as (_, old):
        await old.put(NS, "k", "x", ttl_seconds=2)
    direct = redis.Redis.from_url(clean_redis)
    direct.delete(K.EXPIRIES, K.EXPIRIES_FILLED)  # as a server before the schedule left it
    direct.close()
    async with serving(settings, token_counter) as (_, new):
        stream = await watching(new, NS)
        (event,) = await expiries(stream, 1)
        assert event.key == "k"
