"""Redis's clock from sampled offsets: no round trip per reader, refreshed when stale."""

from __future__ import annotations

import redis
from sharedctx_server.redis_clock import RedisClock
from sharedctx_server.server import RunningServer

from .support.redis_monitor import client_commands


class FakeTime:
    def __init__(self) -> None:
        self.wall = 1_000.0
        self.mono = 50.0


def test_the_offset_is_measured_at_the_middle_of_the_round_trip() -> None:
    t = FakeTime()
    clock = RedisClock(max_age_seconds=5, wall=lambda: t.wall, monotonic=lambda: t.mono)
    # Redis is 250 ms ahead; the request left at 1000.000 s and the reply came at 1000.010 s.
    clock.observe(redis_ms=1_000_255.0, sent=1_000.000, received=1_000.010)
    t.wall = 1_002.0
    assert clock.now_ms() == 1_002_250


def test_without_a_sample_the_local_clock_is_used_and_it_is_not_fresh() -> None:
    t = FakeTime()
    clock = RedisClock(wall=lambda: t.wall, monotonic=lambda: t.mono)
    assert not clock.fresh
    assert clock.now_ms() == 1_000_000


def test_a_sample_goes_stale_after_the_maximum_age() -> None:
    t = FakeTime()
    clock = RedisClock(max_age_seconds=5, wall=lambda: t.wall, monotonic=lambda: t.mono)
    clock.observe(redis_ms=1_000_000.0, sent=1_000.0, received=1_000.0)
    t.mono += 5.0
    assert clock.fresh
    t.mono += 0.01
    assert not clock.fresh


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
