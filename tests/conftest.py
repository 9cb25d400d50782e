"""Shared fixtures: a real Redis per session (flushed per test) and a real in-process server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
from sharedctx import AsyncClient
from sharedctx_server.server import RunningServer, start
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.models import shared_embedder
from .support.redis_servers import SharedRedis
from .support.servers import threaded


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """URL of the session's real Redis."""
    shared = SharedRedis()
    yield shared.url
    shared.close()


@pytest.fixture
def clean_redis(redis_url: str) -> Iterator[str]:
    """The session Redis, emptied before the test."""
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    client.close()
    yield redis_url


@pytest.fixture(scope="session")
def token_counter() -> TokenCounter:
    """Loaded once: building the encoding takes a moment."""
    return TokenCounter("o200k_base")


@pytest.fixture
def settings(clean_redis: str, tmp_path: Any) -> Settings:
    """Settings for an in-process server on a free loopback port and the session Redis."""
    return Settings(
        listen="127.0.0.1:0",
        redis_url=clean_redis,
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
        health_interval_seconds=0.1,
        grace_seconds=1.0,
    )


@pytest.fixture
async def server(settings: Settings, token_counter: TokenCounter) -> AsyncIterator[RunningServer]:
    """A real gRPC server on 127.0.0.1:<free port> backed by the session Redis."""
    running = await start(settings, tokens=token_counter, embedder=shared_embedder())
    yield running
    await running.stop(0.5)


@pytest.fixture
async def client(server: RunningServer) -> AsyncIterator[AsyncClient]:
    """An AsyncClient connected to `server`."""
    async with AsyncClient(f"127.0.0.1:{server.port}", timeout=10) as c:
        yield c


@pytest.fixture
def threaded_server(settings: Settings, token_counter: TokenCounter) -> Iterator[RunningServer]:
    """A server on its own event loop thread, for the blocking Client."""
    with threaded(settings, token_counter) as running:
        yield running
