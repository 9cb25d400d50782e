"""Watch streams and resumes; replicas on one Redis read each other's writes; trimmed logs."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sharedctx import (
    AsyncClient,
    Change,
    InvalidArgumentError,
    PutItem,
    SharedCtxError,
    UnavailableError,
)
from sharedctx.streams import AsyncReplies
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.redis_servers import free_port
from .support.servers import serving, wait_until, wait_up

NS = "team-a/watch"


async def take(stream: AsyncIterator[Change], n: int, timeout: float = 10) -> list[Change]:
    """The next `n` changes of `stream`."""
    out: list[Change] = []

    async def collect() -> None:
        async for change in stream:
            out.append(change)
            if len(out) == n:
                return

    await asyncio.wait_for(collect(), timeout)
    return out


async def watching(client: AsyncClient, namespace: str, **options: Any) -> AsyncReplies[Change]:
    """A Watch of `namespace` that has started: every later change is in its stream."""
    stream = client.watch(namespace, **options)
    await stream.started()
    return stream


async def test_watch_streams_puts_deletes_and_clears(client: AsyncClient) -> None:
    collector = asyncio.create_task(take(await watching(client, NS), 5))
    await client.put(NS, "a", "one")
    await client.put(NS, "a", "two")
    await client.put(NS, "b", "three")
    await client.delete(NS, "a")
    await client.clear(NS)
    changes = await collector
    assert [(c.op, c.key, c.version) for c in changes] == [
        ("put", "a", 1),
        ("put", "a", 2),
        ("put", "b", 1),
        ("delete", "a", 2),
        ("clear", "", 1),
    ]
    versions = [c.namespace_version for c in changes]
    assert versions == list(range(versions[0], versions[0] + 5))


async def test_watch_resumes_after_a_token_missing_nothing(client: AsyncClient) -> None:
    first = asyncio.create_task(take(await watching(client, NS), 1))
    await client.put(NS, "k0", "x")
    (seen,) = await first
    for i in range(1, 4):
        await client.put(NS, f"k{i}", "x")  # written while nobody watches
    resumed = await take(client.watch(NS, seen.resume_token), 3)
    assert [c.key for c in resumed] == ["k1", "k2", "k3"]


async def test_a_watch_broken_before_any_change_resumes_from_its_start(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (running, c):
        stream = c.watch("fresh/ns")  # a namespace never written: its log is empty
        start = await stream.started()
        assert start and stream.resume_token == start
        await running.stop(0.5)  # the server goes away before any change
        with pytest.raises(UnavailableError):
            await take(stream, 1)
        assert stream.resume_token == start
    async with serving(settings, token_counter) as (_, c):
        for key in ("a", "b"):
            await c.put("fresh/ns", key, "written while nobody watched")
        resumed = await take(c.watch("fresh/ns", start), 2)
        assert [(change.op, change.key) for change in resumed] == [("put", "a"), ("put", "b")]


async def test_started_raises_the_refusal_of_a_bad_token(client: AsyncClient) -> None:
    stream = client.watch(NS, "1-0~1")
    with pytest.raises(InvalidArgumentError):
        await stream.started()
    assert stream.resume_token == ""


async def test_watch_from_a_trimmed_position_is_a_clear_error(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, change_log_max=10) as (_, c):
        first = asyncio.create_task(take(await watching(c, NS), 1))
        await c.put(NS, "start", "x")
        (seen,) = await first
        for start in range(0, 600, 200):
            await c.put_many(
                NS,
                [
                    PutItem(key=f"k{i}", content="x", embed="async")
                    for i in range(start, start + 200)
                ],
            )
        with pytest.raises(SharedCtxError) as info:
            await take(c.watch(NS, seen.resume_token), 1)
        assert info.value.code is not None and info.value.code.name == "OUT_OF_RANGE"
        assert "no longer holds" in info.value.message


async def test_a_token_that_is_not_this_logs_is_an_invalid_argument(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (_, c):
        for i in range(3):
            await c.put(NS, f"k{i}", "x")
        # A well-formed token whose record and version do not go together in this log.
        with pytest.raises(SharedCtxError) as info:
            await take(c.watch(NS, "1-0~1"), 1)
        assert info.value.code is not None and info.value.code.name == "INVALID_ARGUMENT"
        assert "resume_token: does not belong to this namespace's change log" in (
            info.value.message
        )


async def test_a_token_ahead_of_the_log_is_refused_not_waited_on(
    settings: Settings, token_counter: TokenCounter
) -> None:
    # Waiting from a record id Redis has not handed out yet would miss every change until
    # then without a word.
    async with serving(settings, token_counter) as (_, c):
        await c.put(NS, "k0", "x")
        seen = (await take(c.watch(NS, "0-0~0"), 1))[0]
        record, _, version = seen.resume_token.partition("~")
        for token in ("4102444800000-0~1", f"{record}~{int(version) + 5}", "1-0~1"):
            namespace = NS if token != "1-0~1" else "never-written"
            with pytest.raises(SharedCtxError) as info:
                await take(c.watch(namespace, token), 1)
            assert info.value.code is not None and info.value.code.name == "INVALID_ARGUMENT"
            assert "resume_token: is ahead of this namespace's change log" in info.value.message
        # The newest record's own token is where a caught-up watcher stands: accepted.
        await c.put(NS, "k1", "y")
        resumed = await take(c.watch(NS, seen.resume_token), 1)
        assert [change.key for change in resumed] == ["k1"]


async def test_a_replica_behind_a_trimmed_log_reloads(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with (
        serving(settings, token_counter, change_log_max=10) as (a, ca),
        serving(settings, token_counter, change_log_max=10) as (_, cb),
    ):
        await ca.put(NS, "first", "the first entry about volcanoes")
        assert (await ca.fit(NS, "volcanoes", 1000)).keys == ["first"]
        for start in range(0, 400, 200):
            await cb.put_many(
                NS,
                [PutItem(key=f"k{i:03d}", content=f"note {i}") for i in range(start, start + 200)],
            )
        await cb.delete(NS, "first")
        result = await ca.fit(NS, "volcanoes", 100_000)
        assert "first" not in result.keys
        assert result.candidates == 400
        assert a.cache is not None and a.cache.stats.loads == 2


async def test_fit_on_one_server_process_sees_a_put_acknowledged_by_another(
    redis_url: str, clean_redis: str, tmp_path: object
) -> None:
    ports = [free_port(), free_port()]
    env = {**os.environ, "SHAREDCTX_REDIS_URL": redis_url, "SHAREDCTX_EMBEDDING_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "sharedctx.cli", "serve", "--listen", f"127.0.0.1:{p}"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for p in ports
    ]
    try:
        async with (
            AsyncClient(f"127.0.0.1:{ports[0]}", timeout=60) as writer,
            AsyncClient(f"127.0.0.1:{ports[1]}", timeout=60) as reader,
        ):
            for client in (writer, reader):
                await wait_up(client)
            await reader.fit(NS, "warm the cache", 100)
            for i in range(15):
                await writer.put(NS, f"fact-{i}", f"fact number {i} about the moon")
                result = await reader.fit(NS, "moon", 100_000, keep_recent=0)
                assert f"fact-{i}" in result.keys
                await writer.delete(NS, f"fact-{i}")
                assert f"fact-{i}" not in (await reader.fit(NS, "moon", 100_000)).keys
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(20)


async def test_turn_strategies_kept_up_to_date_under_concurrent_writes_match_a_fresh_server(
    settings: Settings, token_counter: TokenCounter
) -> None:
    """One server answers RELEVANT and RECENT Fits while writers put, rewrite (moving entries
    in time), delete and let entries expire, so it keeps updating its turns instead of
    regrouping them; afterwards its answers must equal those of a server that groups the
    final entries from scratch."""
    ns = "team-a/turns-under-load"
    base = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
    rng = random.Random(11)

    short_lived: set[str] = set()
    async with serving(settings, token_counter) as (_, kept):
        await kept.clear(ns)

        async def writer(w: int) -> None:
            for i in range(25):
                key = f"w{w}/{rng.randrange(12)}"
                op = rng.random()
                if op < 0.15:
                    await kept.delete(ns, key)
                    continue
                role = rng.choice(["user", "assistant", "assistant", ""])
                minute = rng.randrange(60) if op < 0.3 else 60 + i  # some move back in time
                (short_lived.add if op > 0.95 else short_lived.discard)(key)
                await kept.put(
                    ns, key, f"writer {w} note {i} about deploy {rng.choice(['a', 'b'])}",
                    kind="message" if role else "tool_output", role=role,
                    event_time=base + timedelta(minutes=minute, seconds=w),
                    ttl_seconds=1 if op > 0.95 else 0,
                )  # fmt: skip

        async def fitter() -> None:
            for i in range(40):
                strategy = "relevant" if i % 2 else "recent"
                await kept.fit(ns, "deploy note", 400, strategy=strategy)

        await asyncio.gather(*(writer(w) for w in range(4)), fitter())

        async def lapsed() -> bool:  # expiry changes turns too
            found = await kept.get_many(ns, sorted(short_lived)) if short_lived else []
            return not found

        await wait_until(lapsed)
        async with serving(settings, token_counter) as (_, fresh):
            for strategy in ("relevant", "recent"):
                for budget in (120, 400, 2000):
                    a = await kept.fit(ns, "deploy note", budget, strategy=strategy, explain=True)
                    b = await fresh.fit(ns, "deploy note", budget, strategy=strategy, explain=True)
                    assert a.keys == b.keys
                    assert [(c.key, c.reason, c.score) for c in a.explain] == [
                        (c.key, c.reason, c.score) for c in b.explain
                    ]


def test_the_server_takes_the_clients_keepalive_pings() -> None:
    # A server that took the client's pings on a quiet call as abuse closed the connection
    # ("too_many_pings"): every idle watch ended after 3 minutes (measured: an idle watch
    # died at 180 s before, and lived through 250 s after). Clients ping no more often than
    # the server allows.
    from sharedctx.client import _channel_options
    from sharedctx_server.server import MIN_PING_INTERVAL_MS

    client = dict(_channel_options(()))
    assert client["grpc.keepalive_time_ms"] > MIN_PING_INTERVAL_MS
