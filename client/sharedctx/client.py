"""`Client` (blocking) and `AsyncClient` (asyncio) for the SharedContext service.

Each call is defined once, in calls.py (its request, whether it is idempotent, its reply's
conversion); `_Calls` makes every definition a method of both clients, and each client only
carries calls its way (and pages through `keys` on calls.keys_page). Idempotent calls (get,
get_many, keys, stats, fit, touch, unconditional delete) are retried with backoff on UNAVAILABLE,
and after the server's delay when it is at a limit and says when to come back; writes are not,
because a lost reply would turn a retry into a second write.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, overload

import grpc

from . import calls
from .errors import ResourceExhaustedError, SharedCtxError, UnavailableError, from_rpc_error
from .streams import AsyncReplies, Replies
from .target import parse_target
from .types import NamespaceInfo
from .v1 import sharedctx_pb2_grpc as pb_grpc

P = ParamSpec("P")
R = TypeVar("R")
DEFAULT_TARGET = "127.0.0.1:50051"
_RETRYABLE = (grpc.StatusCode.UNAVAILABLE,)
# A batch's default deadline per entry (_deadline): twice what an entry took to embed and store
# on two busy cores.
_SECONDS_PER_ENTRY = 0.05
# How gRPC says that no connection could be made (as opposed to a server that answered).
_CONNECT_FAILURE = re.compile(
    r"failed to connect|connection refused|DNS resolution failed|Name or service not known"
    r"|No route to host|Network is unreachable|Connection timed out|Socket closed",
    re.IGNORECASE,
)
_CONNECT_REASON = re.compile(
    r"connection refused|DNS resolution failed|No route to host|Network is unreachable"
    r"|Connection timed out",
    re.IGNORECASE,
)
# What gRPC says when the two ends disagree on TLS: a plaintext client at a TLS port sees the
# socket closed, a TLS client at a plaintext port a handshake error, and a server that wants a
# client certificate closes the socket on one that sends none.
_TLS_MISMATCH = re.compile(
    r"Socket closed|WRONG_VERSION_NUMBER|handshake|SSL|certificate", re.IGNORECASE
)
# A TLS handshake that failed, and why: the server speaks no TLS, or its certificate is not
# signed by a CA this client trusts.
_HANDSHAKE = re.compile(r"handshake failed|WRONG_VERSION_NUMBER|CERTIFICATE_VERIFY_FAILED", re.I)
_HANDSHAKE_CAUSES = (
    (
        "WRONG_VERSION_NUMBER",
        "it does not speak TLS: drop --tls / --tls-ca, or start it with --tls-cert",
    ),
    (
        "CERTIFICATE_VERIFY_FAILED",
        "its certificate is not signed by a CA this client trusts: pass that CA with --tls-ca",
    ),
)
_MAX_MESSAGE = 64 * 1024 * 1024


def _channel_options(extra: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The channel's options: these defaults, unless `extra` (the caller's) sets the same
    name (gRPC would take the first of two)."""
    defaults = [
        ("grpc.max_receive_message_length", _MAX_MESSAGE),
        ("grpc.max_send_message_length", _MAX_MESSAGE),
        # Keep long-lived connections alive through idle NATs and load balancers.
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
    ]
    given = {name for name, _ in extra}
    return [option for option in defaults if option[0] not in given] + list(extra)


def _auth_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying the bearer token, if any."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def _backoff(attempt: int) -> float:
    return float(min(2.0, 0.05 * (2**attempt)) * (0.5 + random.random() / 2))


class _Method:
    """A call definition of calls.py seen as a method: each client class makes its own function
    from it (`owner._<kind>_method`), once, named, documented and signed like the definition
    (with the return annotation `owner._<kind>_result` says, for help() and inspect)."""

    _kind = ""

    def __init__(self, define: Callable[..., Any]) -> None:
        self._define = define
        self._made: dict[type[Any], Callable[..., Any]] = {}

    def _get(self, obj: Any, owner: type[Any]) -> Any:
        method = self._made.get(owner)
        if method is None:
            method = self._made[owner] = self._make(owner)
        return method if obj is None else method.__get__(obj, owner)

    def _make(self, owner: type[Any]) -> Callable[..., Any]:
        define = self._define
        method: Callable[..., Any] = getattr(owner, f"_{self._kind}_method")(define)
        sig = inspect.signature(define)
        # The definition returns a call description, e.g. "Unary[Entry]"; the method, the Entry.
        result = str(sig.return_annotation).partition("[")[2][:-1]
        self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        method.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[self_param, *sig.parameters.values()],
            return_annotation=getattr(owner, f"_{self._kind}_result").format(result),
        )
        method.__name__ = define.__name__
        method.__qualname__ = f"{owner.__name__}.{define.__name__}"
        method.__doc__ = define.__doc__
        method.__module__ = owner.__module__
        return method


class _UnaryMethod(_Method, Generic[P, R]):
    """A unary call: blocking on Client, a coroutine on AsyncClient."""

    _kind = "unary"

    def __init__(self, define: Callable[P, calls.Unary[R]]) -> None:
        super().__init__(define)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Callable[..., Any]: ...
    @overload
    def __get__(self, obj: Client, owner: type[Any]) -> Callable[P, R]: ...
    @overload
    def __get__(
        self, obj: AsyncClient, owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, R]]: ...
    def __get__(self, obj: Any, owner: type[Any]) -> Any:
        return self._get(obj, owner)


class _StreamMethod(_Method, Generic[P, R]):
    """A server-streaming call: Replies (an iterator) on Client, AsyncReplies on AsyncClient."""

    _kind = "stream"

    def __init__(self, define: Callable[P, calls.Stream[R]]) -> None:
        super().__init__(define)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Callable[..., Any]: ...
    @overload
    def __get__(self, obj: Client, owner: type[Any]) -> Callable[P, Replies[R]]: ...
    @overload
    def __get__(self, obj: AsyncClient, owner: type[Any]) -> Callable[P, AsyncReplies[R]]: ...
    def __get__(self, obj: Any, owner: type[Any]) -> Any:
        return self._get(obj, owner)


class _Calls:
    """What both clients hold: a channel from `_api` (the `grpc` module, or `grpc.aio`, which
    have the same two channel constructors), its stub, the per-call defaults, and every call."""

    _api: Any

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        opts = _channel_options(options)
        self.target = parse_target(target)
        self._channel = (
            self._api.secure_channel(self.target, credentials, opts)
            if credentials is not None
            else self._api.insecure_channel(self.target, opts)
        )
        self._stub = pb_grpc.SharedContextStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout, self._retries, self._metadata = timeout, retries, _auth_metadata(token)

    put = _UnaryMethod(calls.put)
    put_many = _UnaryMethod(calls.put_many)
    get = _UnaryMethod(calls.get)
    get_many = _UnaryMethod(calls.get_many)
    delete = _UnaryMethod(calls.delete)
    touch = _UnaryMethod(calls.touch)
    stats = _UnaryMethod(calls.stats)
    clear = _UnaryMethod(calls.clear)
    fit = _UnaryMethod(calls.fit)
    keys_page = _UnaryMethod(calls.keys_page)
    watch = _StreamMethod(calls.watch)
    reembed = _StreamMethod(calls.reembed)

    def _send(self, call: calls.Unary[Any] | calls.Stream[Any], **deadline: float) -> Any:
        """Start `call` on the stub: its reply (sync), an awaitable (asyncio) or a stream."""
        method = getattr(self._stub, call.rpc)
        return method(call.request, metadata=self._metadata, **deadline)

    def _attempts(self, call: calls.Unary[Any]) -> int:
        return self._retries + 1 if call.idempotent else 1

    def _deadline(self, call: calls.Unary[Any]) -> float:
        """The call's own timeout, else the client's, which a batch stretches by its entries:
        each is embedded before the reply (a PutMany of 1,000 messages, the server's default
        batch limit, took 26 s on two busy cores, past the 10 s default)."""
        if call.timeout:
            return call.timeout
        return max(self._timeout, call.entries * _SECONDS_PER_ENTRY)

    def _retry_delay(self, exc: grpc.RpcError, attempt: int, attempts: int) -> float:
        """The pause before attempt `attempt + 1`; the typed error when there is none. A
        server at a limit that says when to come back (RESOURCE_EXHAUSTED with a retry delay:
        its calls at once, its embedding queue) is asked again after that delay, spread a
        little so that refused callers do not all return at once."""
        if attempt + 1 < attempts:
            if exc.code() in _RETRYABLE:
                return _backoff(attempt)
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                error = self._error(exc)
                if isinstance(error, ResourceExhaustedError) and error.retry_after:
                    return error.retry_after * (1 + random.random())
                raise error from None
        raise self._error(exc) from None

    def _error(self, exc: grpc.RpcError) -> SharedCtxError:
        """The typed error for a failed call; one that never reached a server says which
        address was tried and what to check."""
        error = from_rpc_error(exc)
        if isinstance(error, UnavailableError) and _HANDSHAKE.search(error.message):
            cause = next(
                (why for cue, why in _HANDSHAKE_CAUSES if cue in error.message),
                "check that both ends agree: --tls / --tls-ca for a server with --tls-cert, "
                "and --tls-client-cert / --tls-client-key for one that asks for client "
                "certificates",
            )
            return UnavailableError(
                f"the TLS handshake with the sharedctx server at {self.target} failed: "
                f"{cause} (gRPC said: {error.message})",
                error.code,
            )
        if isinstance(error, UnavailableError) and _CONNECT_FAILURE.search(error.message):
            reason = _CONNECT_REASON.search(error.message)
            tls = (
                " If it is, its TLS and yours may differ: --tls / --tls-ca for a server with "
                "--tls-cert, neither for one without, and --tls-client-cert / --tls-client-key "
                "for one that asks for client certificates."
                if reason is None and _TLS_MISMATCH.search(error.message)
                else ""
            )
            return UnavailableError(
                f"cannot reach a sharedctx server at {self.target}"
                f"{f' ({reason.group(0).lower()})' if reason else ''}: is `sharedctx serve` "
                "running there? Check the address (the CLI's --target or SHAREDCTX_TARGET; a "
                "program's target argument, which no environment variable changes)."
                f"{tls} (gRPC said: {error.message})",
                error.code,
            )
        return error


class Client(_Calls):
    """Blocking client. Use as a context manager, or call close().

    Client(target="127.0.0.1:50051", *, timeout=10.0, retries=3, token=None,
    credentials=None, options=()): `retries` with backoff on UNAVAILABLE (or the server's delay
    when it is at a limit), idempotent calls only.
    """

    _api = grpc
    _unary_result = "{}"
    _stream_result = "Replies[{}]"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def _run(self, call: calls.Unary[R]) -> R:
        attempts = self._attempts(call)
        for attempt in range(attempts):
            try:
                reply = self._send(call, timeout=self._deadline(call))
            except grpc.RpcError as exc:
                time.sleep(self._retry_delay(exc, attempt, attempts))
            else:
                return call.reply(reply)
        raise AssertionError("unreachable")

    @staticmethod
    def _unary_method(define: Callable[..., calls.Unary[Any]]) -> Callable[..., Any]:
        def method(self: Client, *args: Any, **kwargs: Any) -> Any:
            return self._run(define(*args, **kwargs))

        return method

    @staticmethod
    def _stream_method(define: Callable[..., calls.Stream[Any]]) -> Callable[..., Any]:
        def method(self: Client, *args: Any, **kwargs: Any) -> Replies[Any]:
            return Replies(define(*args, **kwargs), self._send, self._error)

        return method

    def keys(
        self,
        namespace: str,
        prefix: str = "",
        *,
        page_size: int = 0,
        timeout: float | None = None,
    ) -> Iterator[str]:
        """Every live key with `prefix`, fetched page by page."""
        token = ""
        while True:
            call = calls.keys_page(
                namespace, prefix, page_size=page_size, page_token=token, timeout=timeout
            )
            page, token = self._run(call)
            yield from page
            if not token:
                return

    def namespaces(
        self, prefix: str = "", *, page_size: int = 0, timeout: float | None = None
    ) -> Iterator[NamespaceInfo]:
        """Every namespace with live entries and `prefix` (with auth on, those the caller may
        read), in byte order, fetched page by page."""
        token = ""
        while True:
            page, token = self._run(calls.namespaces_page(prefix, page_size, token, timeout))
            yield from page
            if not token:
                return


class AsyncClient(_Calls):
    """asyncio client (same arguments as Client). Use as an async context manager, or await
    close()."""

    _api = grpc.aio
    _unary_result = "{}"
    _stream_result = "AsyncReplies[{}]"

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel."""
        await self._channel.close()

    async def _run(self, call: calls.Unary[R]) -> R:
        attempts = self._attempts(call)
        for attempt in range(attempts):
            try:
                reply = await self._send(call, timeout=self._deadline(call))
            except grpc.RpcError as exc:
                await asyncio.sleep(self._retry_delay(exc, attempt, attempts))
            else:
                return call.reply(reply)
        raise AssertionError("unreachable")

    @staticmethod
    def _unary_method(define: Callable[..., calls.Unary[Any]]) -> Callable[..., Any]:
        # A coroutine function, so that nothing is built or sent before it is awaited.
        async def method(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
            return await self._run(define(*args, **kwargs))

        return method

    @staticmethod
    def _stream_method(define: Callable[..., calls.Stream[Any]]) -> Callable[..., Any]:
        def method(self: AsyncClient, *args: Any, **kwargs: Any) -> AsyncReplies[Any]:
            return AsyncReplies(define(*args, **kwargs), self._send, self._error)

        return method

    async def keys(
        self,
        namespace: str,
        prefix: str = "",
        *,
        page_size: int = 0,
        timeout: float | None = None,
    ) -> AsyncIterator[str]:
        """Every live key with `prefix`, fetched page by page."""
        token = ""
        while True:
            call = calls.keys_page(
                namespace, prefix, page_size=page_size, page_token=token, timeout=timeout
            )
            page, token = await self._run(call)
            for key in page:
                yield key
            if not token:
                return

    async def namespaces(
        self, prefix: str = "", *, page_size: int = 0, timeout: float | None = None
    ) -> AsyncIterator[NamespaceInfo]:
        """Every namespace with live entries and `prefix` (with auth on, those the caller may
        read), in byte order, fetched page by page."""
        token = ""
        while True:
            page, token = await self._run(calls.namespaces_page(prefix, page_size, token, timeout))
            for info in page:
                yield info
            if not token:
                return


__all__ = ["AsyncClient", "Client"]
