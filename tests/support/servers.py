"""Start in-process servers with custom settings inside a test."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from typing import Any

from sharedctx import AsyncClient, SharedCtxError
from sharedctx_server.embedding import Embedder
from sharedctx_server.server import RunningServer, start
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .models import shared_embedder


@asynccontextmanager
async def serving(
    settings: Settings, tokens: TokenCounter, embedder: Embedder | None = None, **overrides: Any
) -> AsyncIterator[tuple[RunningServer, AsyncClient]]:
    """A running server with `overrides` applied to settings, and a client for it (on the
    tests' shared model unless `embedder` is given)."""
    running = await start(
        replace(settings, **overrides), tokens=tokens, embedder=embedder or shared_embedder()
    )
    try:
        async with AsyncClient(f"127.0.0.1:{running.port}", timeout=10, retries=0) as client:
            yield running, client
    finally:
        await running.stop(0.5)


@contextmanager
def threaded(settings: Settings, tokens: TokenCounter) -> Iterator[RunningServer]:
    """A server on its own event loop thread (for blocking clients, or beside another
    event loop such as the inspector's), on the tests' shared model."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    running = asyncio.run_coroutine_threadsafe(
        start(settings, tokens=tokens, embedder=shared_embedder()), loop
    ).result(60)
    try:
        yield running
    finally:
        asyncio.run_coroutine_threadsafe(running.stop(0.5), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


async def wait_up(client: AsyncClient, namespace: str = "team-a/up", timeout: float = 90) -> None:
    """Wait until a server started in another process answers (Stats on `namespace`)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            await client.stats(namespace)
            return
        except SharedCtxError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.2)


async def wait_until(
    predicate: Callable[[], Awaitable[bool]], timeout: float = 10.0, every: float = 0.05
) -> None:
    """Poll an async predicate until it holds (no fixed sleeps in tests)."""
    deadline = time.monotonic() + timeout
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(every)
