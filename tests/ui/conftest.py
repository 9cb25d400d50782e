"""One sharedctx server with the session of data.py, and one inspector in front of it, shared
by the inspector's tests (each test that writes uses a namespace of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sharedctx import Client
from sharedctx.ui.config import UiConfig
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from ..support.servers import threaded
from .data import seed
from .stack import inspector

# Rows per page of a namespace's table here: small enough that the seeded session pages.
PAGE_SIZE = 12


@pytest.fixture(scope="package")
def target(
    redis_url: str, token_counter: TokenCounter, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The gRPC target of a server holding the seeded session."""
    flush = redis.Redis.from_url(redis_url)
    flush.flushdb()
    flush.close()
    tmp: Path = tmp_path_factory.mktemp("ui-server")
    settings = Settings(
        listen="127.0.0.1:0",
        redis_url=redis_url,
        data_dir=tmp / "data",
        cache_dir=tmp / "cache",
        health_interval_seconds=0.1,
        grace_seconds=1.0,
    )
    with threaded(settings, token_counter) as running:
        address = f"127.0.0.1:{running.port}"
        with Client(address) as client:
            seed(client)
        yield address


@pytest.fixture(scope="package")
def ui_url(target: str) -> Iterator[str]:
    """Base URL of an inspector (no token) in front of `target`."""
    with inspector(UiConfig(target=target, page_size=PAGE_SIZE)) as url:
        yield url


@pytest.fixture
def client(target: str) -> Iterator[Client]:
    """A blocking client of the shared server (overrides the suite's async one)."""
    with Client(target) as c:
        yield c
