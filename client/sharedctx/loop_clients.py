"""One AsyncClient per event loop, for the long-lived objects that serve async calls from
whatever loop calls them (the MCP tools, the LangGraph store).

A grpc.aio channel belongs to the loop it was made on, so each loop gets a client of its own,
made on first use. A client whose loop has closed can serve nothing more: it is closed the
next time a client is asked for (its channel would otherwise stay open until collected).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .client import AsyncClient

__all__ = ["LoopClients"]


class LoopClients:
    """The AsyncClient of each event loop, made by `connect`."""

    def __init__(self, connect: Callable[[], AsyncClient]) -> None:
        self._connect = connect
        self._clients: dict[asyncio.AbstractEventLoop, AsyncClient] = {}
        # Closings of stale clients under way; kept so that the tasks are not collected
        # before they finish, and so that close() can wait for them.
        self._closing: set[asyncio.Task[None]] = set()

    def get(self) -> AsyncClient:
        """The running loop's client; closes those of loops that have closed."""
        loop = asyncio.get_running_loop()
        self._close_stale(loop)
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._connect()
        return client

    async def close(self) -> None:
        """Close every client (call it when no other loop still uses them)."""
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            await client.close()
        # A closing started on another loop finishes there (a task cannot be awaited across
        # loops).
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(task for task in self._closing if task.get_loop() is loop))

    def _close_stale(self, loop: asyncio.AbstractEventLoop) -> None:
        # get() is not a coroutine (callers use it inline), so the closing runs as a task on
        # the running loop: a channel whose loop is gone has no call left to wait for.
        for old in list(self._clients):  # a copy: loops of other threads may add theirs
            if not old.is_closed():
                continue
            stale = self._clients.pop(old, None)  # None: another thread took it first
            if stale is not None:
                task = loop.create_task(stale.close())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
