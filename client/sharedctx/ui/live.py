"""Live updates of a namespace page: the inspector follows the server's Watch stream and passes
each change on to the browser as a server-sent event.

Each event's id is the change's resume token, so when the connection drops (the inspector or
the server restarted), the browser's EventSource reconnects with `Last-Event-ID` and the watch
resumes where it left off without missing a change. When the server's capped change log no
longer holds that position, the page is told to reload (`reset`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from starlette.requests import Request
from starlette.responses import StreamingResponse

from ..client import AsyncClient
from ..errors import SharedCtxError
from ..types import Change
from .fmt import namespace_of

__all__ = ["events"]

# A comment line this often keeps proxies and idle timers from closing a quiet stream.
HEARTBEAT_SECONDS = 15.0
# How often an idle stream checks whether the inspector is shutting down (uvicorn waits for
# open responses before it stops, and a watch never ends by itself).
_POLL_SECONDS = 0.5


def _event(name: str, data: dict[str, Any], event_id: str = "") -> str:
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _change(change: Change) -> dict[str, Any]:
    return {
        "op": change.op,
        "key": change.key,
        "version": change.version,
        "time": change.time.isoformat() if change.time else "",
    }


async def _stream(
    client: AsyncClient,
    namespace: str,
    prefix: str,
    resume: str,
    stopping: Callable[[], bool],
) -> AsyncIterator[str]:
    yield "retry: 2000\n\n"
    changes = client.watch(namespace, resume, include_touches=True)
    pending: asyncio.Future[Change] | None = None
    try:
        try:
            start = await changes.started()
        except SharedCtxError as exc:
            yield _ended(exc, bool(resume))
            return
        # The start's token as the event id: a browser that reconnects before any change
        # resumes from here rather than from whenever it reconnects.
        yield _event("ready", {"resumed": bool(resume)}, start)
        idle = 0.0
        while True:
            if pending is None:
                pending = asyncio.ensure_future(changes.__anext__())
                idle = 0.0
            done, _ = await asyncio.wait({pending}, timeout=_POLL_SECONDS)
            if not done:
                if stopping():
                    yield _event("ended", {"message": "the inspector is stopping"})
                    return
                idle += _POLL_SECONDS
                if idle >= HEARTBEAT_SECONDS:
                    idle = 0.0
                    yield ": keep-alive\n\n"
                continue
            future, pending = pending, None
            try:
                change = future.result()
            except StopAsyncIteration:
                yield _event("ended", {"message": "the server ended the watch (stopped?)"})
                return
            except SharedCtxError as exc:
                yield _ended(exc, False)
                return
            if change.op in (
                "put",
                "touch",
                "delete",
                "expire",
                "evict",
            ) and not change.key.startswith(prefix):
                continue
            yield _event("change", _change(change), change.resume_token)
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pending
        await changes.aclose()


def _ended(exc: SharedCtxError, resuming: bool) -> str:
    """The event for a watch the server ended or refused: `reset` (reload the page) when the
    change log no longer holds where it would resume, or the server refused the position
    (reconnecting with it again would be refused again)."""
    refused = resuming and exc.code == grpc.StatusCode.INVALID_ARGUMENT
    name = "reset" if refused or exc.code == grpc.StatusCode.OUT_OF_RANGE else "ended"
    return _event(name, {"message": exc.message})


async def events(request: Request) -> StreamingResponse:
    """The namespace's changes as server-sent events (only keys with `prefix`)."""
    client: AsyncClient = request.app.state.client
    namespace = namespace_of(request.path_params["namespace"])
    prefix = request.query_params.get("prefix", "")
    resume = request.headers.get("last-event-id", "")
    return StreamingResponse(
        _stream(client, namespace, prefix, resume, request.app.state.stopping),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )
