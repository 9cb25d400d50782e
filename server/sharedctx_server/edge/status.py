"""The one place where errors become gRPC status codes, with messages a person can act on."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from sharedctx.v1 import sharedctx_pb2 as pb

from ..errors import (
    InvalidArgument,
    LimitExceeded,
    LogTrimmed,
    NotFound,
    PermissionDenied,
    SharedCtxError,
    Unauthenticated,
    Unavailable,
    VersionConflict,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
Handler = Callable[..., Awaitable[T]]


def to_status(exc: SharedCtxError) -> status_pb2.Status:
    """google.rpc.Status for a domain error, with typed details where the client can act on them."""
    details: list[Any] = []
    if isinstance(exc, InvalidArgument):
        code = code_pb2.INVALID_ARGUMENT
        details.append(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=exc.field, description=exc.rule
                    )
                ]
            )
        )
    elif isinstance(exc, NotFound):
        code = code_pb2.NOT_FOUND
    elif isinstance(exc, LogTrimmed):
        code = code_pb2.OUT_OF_RANGE
    elif isinstance(exc, VersionConflict):
        code = code_pb2.ALREADY_EXISTS if exc.expected == 0 else code_pb2.ABORTED
        details.append(
            pb.VersionConflict(
                key=exc.key, expected_version=exc.expected, current_version=exc.current
            )
        )
    elif isinstance(exc, LimitExceeded):
        code = code_pb2.RESOURCE_EXHAUSTED
        details.append(
            error_details_pb2.QuotaFailure(
                violations=[
                    error_details_pb2.QuotaFailure.Violation(
                        subject=exc.limit, description=str(exc)
                    )
                ]
            )
        )
        if exc.retry_after_s is not None:
            delay = duration_pb2.Duration()
            delay.FromMilliseconds(int(exc.retry_after_s * 1000))
            details.append(error_details_pb2.RetryInfo(retry_delay=delay))
    elif isinstance(exc, Unavailable):
        code = code_pb2.UNAVAILABLE
    elif isinstance(exc, Unauthenticated):
        code = code_pb2.UNAUTHENTICATED
    elif isinstance(exc, PermissionDenied):
        code = code_pb2.PERMISSION_DENIED
    else:
        code = code_pb2.INTERNAL
    packed = []
    for detail in details:
        holder = any_pb2.Any()
        holder.Pack(detail)
        packed.append(holder)
    return status_pb2.Status(code=code, message=str(exc), details=packed)


# What stops a call or the process rather than failing it: passed on as raised.
_NOT_FAILURES = (asyncio.CancelledError, KeyboardInterrupt, SystemExit, GeneratorExit)


async def _abort_for(exc: BaseException, context: grpc.aio.ServicerContext, name: str) -> NoReturn:
    """End the call for an exception a handler raised: its status, or INTERNAL for a bug.

    A panic out of a native library (pyo3's PanicException: tiktoken's stack overflow on a
    run of a million spaces) is no Exception: uncaught, the call got no status at all."""
    if isinstance(exc, _NOT_FAILURES):
        raise exc
    if isinstance(exc, grpc.aio.AbortError):
        raise exc  # the handler already chose the status
    if isinstance(exc, SharedCtxError):
        await abort_with_error(context, exc)
    # Never leak a traceback to the caller; keep it in the server log.
    log.error("unexpected error in %s", name, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, "internal server error (see server log)")
    raise AssertionError("unreachable: abort always raises")


def maps_errors(handler: Handler[T]) -> Handler[T]:
    """Decorate a servicer method: domain errors become status codes, bugs become INTERNAL."""

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> T:
        try:
            return await handler(self, request, context)
        except BaseException as exc:
            await _abort_for(exc, context, handler.__name__)

    return wrapper


def maps_stream_errors(
    handler: Callable[..., AsyncIterator[T]],
) -> Callable[..., AsyncIterator[T]]:
    """maps_errors for server-streaming methods (async generators)."""

    @functools.wraps(handler)
    async def wrapper(
        self: Any, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[T]:
        try:
            async for item in handler(self, request, context):
                yield item
        except BaseException as exc:
            await _abort_for(exc, context, handler.__name__)

    return wrapper


async def abort_with_error(context: grpc.aio.ServicerContext, exc: SharedCtxError) -> NoReturn:
    """End the call with the status for `exc` (maps_errors, and interceptors, which have none)."""
    status = rpc_status.to_status(to_status(exc))
    # An abort's trailing metadata replaces what was set before (the x-request-id the
    # observing interceptor set), so send both.
    kept = tuple(context.trailing_metadata() or ())
    await context.abort(status.code, status.details, (*kept, *status.trailing_metadata))
    raise AssertionError("unreachable: abort always raises")
