"""The replies of a server-streaming call (watch, reembed) as an iterator that also says where
a watch stands.

A watch that starts "from now" begins at some point after the call; the server marks that
point by sending its resume token before any change. So `started()` tells a caller when every
later change is surely in the stream, and `resume_token` is always where to continue without
missing one: the last change's token, or the start's while no change has come.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import grpc

from . import calls
from .wire import RESUME_TOKEN_HEADER

R = TypeVar("R")


def _start_token(metadata: Any) -> str:
    """The watch's start token in a call's initial metadata ('' when absent)."""
    for key, value in metadata or ():
        if key == RESUME_TOKEN_HEADER:
            return str(value)
    return ""


class _Stream(Generic[R]):
    """What both flavours keep: the call, how to start it and type its errors, and the
    position. Nothing is sent before the first reply or `started()` is asked for."""

    def __init__(
        self,
        call: calls.Stream[R],
        send: Callable[[calls.Stream[R]], Any],
        error: Callable[[grpc.RpcError], Exception],
    ) -> None:
        self._call, self._send, self._error = call, send, error
        self._rpc: Any = None
        self._token = ""
        self._moved = False  # a reply carried a token: the start's no longer applies
        self._closed = False  # close()d: no call is started any more

    @property
    def resume_token(self) -> str:
        """Where to resume a watch without missing a change: the last change's token, or,
        before any change, the start's (once the server sent it); "" before that, and for
        streams that do not resume (reembed)."""
        return self._token

    def _rpc_started(self) -> Any:
        if self._rpc is None:
            self._rpc = self._send(self._call)
        return self._rpc

    def _reply(self, reply: Any) -> R:
        value = self._call.reply(reply)
        if self._call.resume_token is not None:
            self._token, self._moved = self._call.resume_token(value), True
        return value

    def _note_start(self, metadata: Any) -> str:
        start = _start_token(metadata)
        if not self._moved and start:
            self._token = start
        return start

    def _waits_for_start(self) -> bool:
        """Whether the start's token may still come, for a stream that resumes (read before
        the first reply, so that `resume_token` holds it while the first change is awaited)."""
        return self._call.resume_token is not None and not self._moved and not self._token


class Replies(_Stream[R]):
    """A server-streaming call's replies as they arrive (Client.watch, Client.reembed)."""

    def __iter__(self) -> Replies[R]:
        return self

    def __next__(self) -> R:
        if self._closed:
            raise StopIteration
        rpc = self._rpc_started()
        try:
            if self._waits_for_start():
                self._note_start(rpc.initial_metadata())
            reply = next(rpc)
        except grpc.RpcError as exc:
            self._note_start(rpc.initial_metadata())
            raise self._error(exc) from None
        except StopIteration:
            self._note_start(rpc.initial_metadata())
            raise
        return self._reply(reply)

    def started(self) -> str:
        """Wait until the server has begun the stream and return a watch's start token:
        every change after this returns is in the stream. Raises the call's typed error when
        the server refused it (a bad resume token, no permission)."""
        if self._closed:
            return self._token
        rpc = self._rpc_started()
        start = self._note_start(rpc.initial_metadata())
        if not start and rpc.done() and rpc.code() != grpc.StatusCode.OK:
            raise self._error(rpc) from None
        return start

    def close(self) -> None:
        """Cancel the call (a watch otherwise runs until the server stops); iterating
        afterwards ends at once."""
        self._closed = True
        if self._rpc is not None:
            self._rpc.cancel()


class AsyncReplies(_Stream[R]):
    """A server-streaming call's replies as they arrive (AsyncClient.watch, .reembed)."""

    def __aiter__(self) -> AsyncReplies[R]:
        return self

    async def __anext__(self) -> R:
        if self._closed:
            raise StopAsyncIteration
        rpc = self._rpc_started()
        try:
            if self._waits_for_start():
                self._note_start(await rpc.initial_metadata())
            reply = await rpc.read()
        except grpc.RpcError as exc:
            self._note_start(await rpc.initial_metadata())
            raise self._error(exc) from None
        if reply is grpc.aio.EOF:
            self._note_start(await rpc.initial_metadata())
            raise StopAsyncIteration
        return self._reply(reply)

    async def started(self) -> str:
        """Wait until the server has begun the stream and return a watch's start token:
        every change after this returns is in the stream. Raises the call's typed error when
        the server refused it (a bad resume token, no permission)."""
        if self._closed:
            return self._token
        rpc = self._rpc_started()
        start = self._note_start(await rpc.initial_metadata())
        if not start and rpc.done() and await rpc.code() != grpc.StatusCode.OK:
            raise self._error(await _as_error(rpc)) from None
        return start

    async def aclose(self) -> None:
        """Cancel the call (a watch otherwise runs until the server stops); iterating
        afterwards ends at once. (A read cancelled from outside, as `asyncio.wait_for` does
        on timeout, cancels the call too: wait on a task instead, as the inspector does.)"""
        self._closed = True
        if self._rpc is not None:
            self._rpc.cancel()


async def _as_error(rpc: Any) -> grpc.RpcError:
    """A finished asyncio call's failure as the RpcError its read() raises."""
    try:
        await rpc.read()
    except grpc.RpcError as exc:
        return exc
    raise AssertionError("a failed call read without an error")
