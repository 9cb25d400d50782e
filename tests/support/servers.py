"""Start in-process servers with custom settings inside a test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from sharedctx import AsyncClient, SharedCtxError
from sharedctx_server.server import RunningServer, start
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .models import shared_embedder


@asynccontextmanager
async def serving(
    settings: Settings, tokens: TokenCounter, **overrides: Any
) -> AsyncIterator[tuple[RunningServer, AsyncClient]]:
    """A running server with `overrides` applied to settings, and a client for it."""
    running = await start(replace(settings, **overrides), tokens=tokens, embedder=shared_embedder())
    try:
        async with AsyncClient(f"127.0.0.1:{running.port}", timeout=10, retries=0) as client:
            yield running, client
    finally:
        await running.stop(0.5)


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
