"""Admission: how many calls a server handles at once, refused with a message that names the
setting to raise.

Two counts, because the calls differ: a Watch stays open for as long as its agent runs and
costs little while it waits, while every other call does its work and ends. Counted together
(gRPC's own `maximum_concurrent_rpcs`), a thousand idle watchers would refuse every Put and
Fit, with gRPC's "Concurrent RPC limit exceeded!", which names no setting. So Watch streams
count toward `max_watches`, everything else toward `max_concurrent_rpcs`; health checks and
reflection are never refused. gRPC's own limit stays on as a backstop at the sum of the two.
Each server process counts its own calls: with `serve --workers N`, the limits are per worker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc

from ..errors import LimitExceeded
from ..security.grants import OPEN_SERVICES
from ..settings import Settings, how_to_set
from .interceptors import Layer, wrap_handler
from .status import abort_with_error

__all__ = ["Admission"]

# The streaming method that stays open while its caller waits for changes.
_WATCH = "Watch"


class _Count:
    """Calls of one kind in progress, against their limit. One event loop runs a server's
    calls, so a plain integer is safe."""

    def __init__(self, setting: str, limit: int, what: str) -> None:
        self.setting = setting
        self.limit = limit
        self.what = what
        self.active = 0

    def refusal(self) -> LimitExceeded:
        return LimitExceeded(
            self.setting,
            f"the server is at its limit of concurrent {self.what} ({self.limit}); retry "
            f"shortly, or raise the server's {how_to_set(self.setting)}",
            retry_after_s=0.1,
        )


class Admission(Layer):
    """Refuses a call beyond its kind's limit with RESOURCE_EXHAUSTED (module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self._calls = _Count("max_concurrent_rpcs", settings.max_concurrent_rpcs, "calls")
        self._watches = _Count("max_watches", settings.max_watches, "Watch streams")

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler | None:
        """`handler` counted against its kind's limit (None for health and reflection)."""
        service, _, name = method.lstrip("/").partition("/")
        if service in OPEN_SERVICES:
            return None
        count = self._watches if name == _WATCH else self._calls
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                _unary(handler.unary_unary, count),
                handler.request_deserializer,
                handler.response_serializer,
            )

        async def check(request: Any, context: grpc.aio.ServicerContext) -> None:
            if count.active > count.limit:  # this call is counted already (_held)
                await abort_with_error(context, count.refusal())

        return wrap_handler(handler, check, around=lambda kind, context: _held(count))


def _unary(inner: Callable[..., Any], count: _Count) -> Callable[..., Any]:
    """A unary call counted while it runs, written out rather than through wrap_handler: most
    calls are unary, and a context manager per call is measurable on a Get."""

    async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
        if count.active >= count.limit:
            await abort_with_error(context, count.refusal())
        count.active += 1
        try:
            return await inner(request, context)
        finally:
            count.active -= 1

    return unary_unary


@contextmanager
def _held(count: _Count) -> Iterator[None]:
    count.active += 1
    try:
        yield None
    finally:
        count.active -= 1
