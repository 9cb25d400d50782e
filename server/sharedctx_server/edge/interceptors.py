"""The layers around every handler: undecodable requests become INVALID_ARGUMENT; auth on
every call. They wrap each method's handler once, when the services register
(WrappedRegistration), rather than running as gRPC interceptors on every call.

`server_layers(settings)` builds them once per server. Order matters: the decode guard is
outermost, so a request that cannot be parsed is refused before anything reads it (even an
unauthenticated one gets INVALID_ARGUMENT for garbage, which tells it nothing about the data).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from ..errors import InvalidArgument, PermissionDenied, Unauthenticated
from ..security.auth import Authenticator
from ..security.grants import LISTINGS, OPEN_SERVICES, Grant, required_permission
from ..security.tokens import CERT_NAME_KINDS, cert_name
from ..settings import Settings
from .status import abort_with_error

log = logging.getLogger(__name__)

# The authenticated principal of the current RPC (None when auth is off): for logging. Each RPC
# runs in its own asyncio task, so a value set for one call never shows in another.
_PRINCIPAL: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "sharedctx_principal", default=None
)

Check = Callable[[Any, grpc.aio.ServicerContext], Awaitable[None]]


# The caller's grant (None when auth is off): listings show only what it covers.
_GRANT: contextvars.ContextVar[Grant | None] = contextvars.ContextVar(
    "sharedctx_grant", default=None
)


def current_principal() -> str | None:
    """Who is calling, inside a handler of an authenticated server."""
    return _PRINCIPAL.get()


def current_grant() -> Grant | None:
    """What the caller may do, inside a handler of an authenticated server (None: auth off)."""
    return _GRANT.get()


def server_layers(settings: Settings) -> list[Layer]:
    """The layers a server built from `settings` runs (ConfigError if auth is misset)."""
    layers: list[Layer] = [DecodeGuard()]
    authenticator = Authenticator.from_settings(settings)
    if authenticator is not None:
        layers.append(AuthInterceptor(authenticator))
    return layers


async def _drain(result: Any) -> AsyncIterator[Any]:
    """The items of a server-streaming behaviour: an async generator, or a coroutine that
    calls context.write() (awaited; yields nothing)."""
    if hasattr(result, "__aiter__"):
        async for item in result:
            yield item
    else:
        await result


# around(kind, context): a context manager around the whole call; what it yields, if not None,
# is given each unary reply. kind is "unary", "server_stream", "client_stream" or "bidi_stream".
Around = Callable[[str, grpc.aio.ServicerContext], AbstractContextManager[Any]]


def wrap_handler(
    handler: grpc.RpcMethodHandler,
    check: Check | None = None,
    deserializer: Callable[[bytes], Any] | None = None,
    requests: Callable[[Any, grpc.aio.ServicerContext], Any] | None = None,
    around: Around | None = None,
) -> grpc.RpcMethodHandler:
    """`handler` with `check(request, context)` run first (request None for client streams),
    optionally another request deserializer, `requests` applied to a request stream, and the
    whole call inside `around` (see Around)."""
    des = deserializer or handler.request_deserializer
    ser = handler.response_serializer
    inside = around or _nothing_around

    def stream_of(request_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
        return requests(request_iterator, context) if requests else request_iterator

    if handler.unary_unary:
        uu = handler.unary_unary

        async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with inside("unary", context) as seen:
                if check is not None:
                    await check(request, context)
                reply = await uu(request, context)
                if seen is not None:
                    seen(reply)
                return reply

        return grpc.unary_unary_rpc_method_handler(unary_unary, des, ser)
    if handler.unary_stream:
        us = handler.unary_stream

        async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with inside("server_stream", context):
                if check is not None:
                    await check(request, context)
                async for item in _drain(us(request, context)):
                    yield item

        return grpc.unary_stream_rpc_method_handler(unary_stream, des, ser)
    if handler.stream_unary:
        su = handler.stream_unary

        async def stream_unary(request_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
            with inside("client_stream", context):
                if check is not None:
                    await check(None, context)
                return await su(stream_of(request_iterator, context), context)

        return grpc.stream_unary_rpc_method_handler(stream_unary, des, ser)
    ss = handler.stream_stream

    async def stream_stream(request_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
        with inside("bidi_stream", context):
            if check is not None:
                await check(None, context)
            async for item in _drain(ss(stream_of(request_iterator, context), context)):
                yield item

    return grpc.stream_stream_rpc_method_handler(stream_stream, des, ser)


def _nothing_around(kind: str, context: grpc.aio.ServicerContext) -> AbstractContextManager[Any]:
    return nullcontext(None)


class _Undecodable:
    """Stands in for a request whose bytes did not parse."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _safe(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def parse(raw: bytes) -> Any:
        try:
            return deserializer(raw)
        except DecodeError as exc:
            return _Undecodable(str(exc))

    return parse


def _refusal(problem: str) -> InvalidArgument:
    return InvalidArgument(
        "request",
        f"could not be parsed ({problem}); string fields must be valid UTF-8 and the "
        "bytes a serialised message of the method's request type",
    )


class Layer:
    """Something around every handler; subclasses say how to wrap one (None: leave as is)."""

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler | None:
        """The handler to use for `method` (full name, /package.Service/Method)."""
        raise NotImplementedError


class WrappedRegistration:
    """Stands in for a grpc.aio server while services register, so that each method's handler
    is wrapped once by `layers` (outermost first) rather than by gRPC interceptors, which gRPC
    runs as a chain of coroutines on every call."""

    def __init__(self, server: grpc.aio.Server, layers: Sequence[Layer]) -> None:
        self._server = server
        self._layers = tuple(reversed(layers))  # innermost first: the order of wrapping
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    def wrapped(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """`handler` of `method` (/package.Service/Method) inside every layer, built once."""
        cached = self._wrapped.get(method)
        if cached is None:
            cached = handler
            for layer in self._layers:
                cached = layer.wrap(cached, method) or cached
            self._wrapped[method] = cached
        return cached

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        """What generated add_*_to_server functions call: the handlers, wrapped."""
        self._server.add_generic_rpc_handlers(tuple(_WrappedGeneric(h, self) for h in handlers))

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        """What generated add_*_to_server functions call (gRPC >= 1.63): the handlers, wrapped."""
        wrapped = {name: self.wrapped(h, f"/{service}/{name}") for name, h in handlers.items()}
        self._server.add_registered_method_handlers(service, wrapped)


class _WrappedGeneric(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(self, inner: grpc.GenericRpcHandler, registration: WrappedRegistration) -> None:
        self._inner = inner
        self._registration = registration

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = self._inner.service(details)
        return None if handler is None else self._registration.wrapped(handler, details.method)


class DecodeGuard(Layer):
    """Turns requests that fail to parse into INVALID_ARGUMENT.

    Without it grpc.aio answers UNKNOWN ("Unexpected DecodeError"), e.g. for a string field
    holding invalid UTF-8, which other languages' protobuf libraries will happily send.
    """

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """`handler` with undecodable requests refused."""

        async def check(request: Any, context: grpc.aio.ServicerContext) -> None:
            if isinstance(request, _Undecodable):
                await abort_with_error(context, _refusal(request.problem))

        async def requests(stream: Any, context: grpc.aio.ServicerContext) -> Any:
            async for request in stream:
                if isinstance(request, _Undecodable):
                    await abort_with_error(context, _refusal(request.problem))
                yield request

        return wrap_handler(handler, check, _safe(handler.request_deserializer), requests)


def peer_cert_names(context: grpc.aio.ServicerContext) -> list[str]:
    """The typed names (`uri:...`, `dns:...`, `cn:...`) of the caller's client certificate;
    [] without one. gRPC fills these only for a certificate that passed verification against
    --tls-client-ca."""
    auth = context.auth_context()
    names = []
    for kind, prop in CERT_NAME_KINDS.items():
        for value in auth.get(prop, ()):
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            names.append(cert_name(kind, text))
    return names


class AuthInterceptor(Layer):
    """Authenticates every call and authorises it against the request's `namespace`.

    Health and reflection stay open. Calls whose requests stream in (none in SharedContext
    today) cannot be checked per namespace up front, so they need a grant over every namespace.
    """

    def __init__(self, authenticator: Authenticator) -> None:
        self._auth = authenticator

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler | None:
        """`handler` behind the token and namespace checks (None for the open services)."""
        service, _, name = method.lstrip("/").partition("/")
        if service in OPEN_SERVICES:
            return None
        return wrap_handler(handler, self._checker(name))

    def _checker(self, method: str) -> Check:
        permission = required_permission(method)
        listing = method in LISTINGS

        async def check(request: Any, context: grpc.aio.ServicerContext) -> None:
            namespace = getattr(request, "namespace", None)
            try:
                grant = self._auth.authenticate(
                    context.invocation_metadata(), lambda: peer_cert_names(context)
                )
                if listing:
                    grant.require_any(permission, method)
                else:
                    where = namespace if isinstance(namespace, str) else None
                    grant.require(where, permission, method)
            except (Unauthenticated, PermissionDenied) as exc:
                log.info("refused %s: %s", method, exc)
                await abort_with_error(context, exc)
            _PRINCIPAL.set(grant.principal)
            _GRANT.set(grant)

        return check


__all__ = [
    "AuthInterceptor",
    "DecodeGuard",
    "Layer",
    "WrappedRegistration",
    "current_grant",
    "current_principal",
    "server_layers",
    "wrap_handler",
]
