"""Redis's clock from sampled offsets: no round trip per reader, refreshed when stale."""

from __future__ import annotations

import asyncio
import time

import redis
from sharedctx_server.server import RunningServer
from sharedctx_server.state.redis_clock import RedisClock

from .support.redis_monitor import client_commands


class Monotonic:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_the_offset_is_measured_at_the_middle_of_the_round_trip() -> None:
    mono = Monotonic()
    clock = RedisClock(max_age_seconds=5, monotonic=mono)
    # The request left at 50.000 s and the reply came at 50.010 s (monotonic); Redis read its
    # clock, 1_000_255 ms, halfway: so Redis's ms = monotonic ms + 950_250.
    clock.observe(redis_ms=1_000_255.0, sent=50.000, received=50.010)
    mono.now = 52.0
    assert clock.now_ms() == 52_000 + 950_250


def test_a_wall_clock_step_on_this_machine_changes_nothing() -> None:
    # Only the monotonic clock is read after a sample, so there is nothing for a step to move.
    mono = Monotonic()
    clock = RedisClock(monotonic=mono)
    clock.observe(redis_ms=9_000_000.0, sent=50.0, received=50.0)
    mono.now = 51.0
    assert clock.now_ms() == 9_001_000


def test_without_a_sample_it_is_not_fresh_and_reads_about_the_wall_clock() -> None:
    clock = RedisClock()
    assert not clock.fresh
    assert abs(clock.now_ms() - time.time() * 1000) < 1_000


def test_a_sample_goes_stale_after_the_maximum_age() -> None:
    mono = Monotonic()
    clock = RedisClock(max_age_seconds=5, monotonic=mono)
    clock.observe(redis_ms=1_000_000.0, sent=50.0, received=50.0)
    mono.now += 5.0
    assert clock.fresh
    mono.now += 0.01
    assert not clock.fresh


def test_a_slow_sample_does_not_replace_a_fresh_one() -> None:
    mono = Monotonic()
    clock = RedisClock(monotonic=mono)
    clock.observe(redis_ms=1_000_000.0, sent=50.0, received=50.002)
    mono.now = 51.0
    before = clock.now_ms()
    # Half a second between send and reply: its midpoint could be 250 ms off.
    clock.observe(redis_ms=2_000_000.0, sent=51.0, received=51.5)
    assert clock.now_ms() == before
    # Once the good sample is stale, a slow one is better than none.
    mono.now = 60.0
    clock.observe(redis_ms=2_000_000.0, sent=59.5, received=60.0)
    assert clock.now_ms() == 2_000_250


async def test_a_fresh_sample_serves_redis_time_without_asking_redis(
    server: RunningServer, redis_url: str
) -> None:
    store = server.store
    assert await store.ping()  # the health loop's call: samples the clock
    with client_commands(redis_url) as seen:
        first = await store.redis_now_ms()
    assert "time" not in seen
    direct = redis.Redis.from_url(redis_url)
    seconds, micros = direct.time()
    direct.close()
    assert abs(first - (seconds * 1000 + micros // 1000)) < 1_000


async def test_concurrent_readers_of_a_stale_clock_share_one_time_call(
    server: RunningServer, redis_url: str
) -> None:
    store = server.store
    store._clock._sampled_at = None  # stale: no sample yet
    with client_commands(redis_url) as seen:
        readings = await asyncio.gather(*(store.redis_now_ms() for _ in range(10)))
    assert seen.count("time") <= 1 + 1  # one from the readers (+ perhaps the health loop's)
    assert max(readings) - min(readings) < 1_000
