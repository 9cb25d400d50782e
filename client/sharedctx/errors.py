"""Typed client exceptions, mapped from gRPC status codes in this one place."""

from __future__ import annotations

import re
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from .v1 import sharedctx_pb2 as pb


class SharedCtxError(Exception):
    """Base of every error the client raises for a failed call."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def code_name(self, unknown: str = "ERROR") -> str:
        """The gRPC status name ("NOT_FOUND"), or `unknown` for an error without one."""
        return self.code.name if self.code is not None else unknown


class InvalidArgumentError(SharedCtxError):
    """The request broke a rule; `field` names the offending field when the server said so."""

    field: str = ""


class NotFoundError(SharedCtxError):
    """The entry does not exist or has expired."""


class VersionConflictError(SharedCtxError):
    """A compare-and-set write or delete found another version; nothing changed."""

    key: str = ""
    expected_version: int = 0
    current_version: int = 0


class AlreadyExistsError(VersionConflictError):
    """if_version=0 (create only) but the key exists."""


class ResourceExhaustedError(SharedCtxError):
    """A limit was hit; `limit` names it, `retry_after` (seconds) is set when waiting helps."""

    limit: str = ""
    retry_after: float | None = None


class UnavailableError(SharedCtxError):
    """The server or its Redis cannot be reached right now; retrying later may work."""


class DeadlineExceededError(SharedCtxError):
    """The call's deadline passed before it finished."""


class UnauthenticatedError(SharedCtxError):
    """No valid credentials were sent."""


class PermissionDeniedError(SharedCtxError):
    """The credentials do not allow this namespace or operation."""


class CancelledError(SharedCtxError):
    """The call was cancelled (e.g. it reached a server that had begun shutting down)."""


class InternalError(SharedCtxError):
    """The server failed in a way the caller cannot fix."""


_BY_CODE: dict[grpc.StatusCode, type[SharedCtxError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ABORTED: VersionConflictError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.CANCELLED: CancelledError,
}


def _status_details(error: grpc.RpcError) -> list[Any]:
    """The google.rpc.Status details the server attached (grpc-status-details-bin)."""
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status()
            status.ParseFromString(value)
            return list(status.details)
    return []


# What gRPC itself says of a message over its size limit, before any handler sees it.
_TOO_BIG = re.compile(r"(?:Received|Sent) message larger than max \((\d+) vs\. (\d+)\)")


def from_rpc_error(error: grpc.RpcError) -> SharedCtxError:
    """The typed exception for a failed call, with the server's structured details attached."""
    # Sync calls raise grpc.Call instances, asyncio ones AioRpcError: both have these methods.
    code = error.code() if hasattr(error, "code") else None
    message = (error.details() if hasattr(error, "details") else None) or str(error)
    cls = _BY_CODE.get(code, InternalError) if code is not None else InternalError
    too_big = _TOO_BIG.search(message) if code == grpc.StatusCode.RESOURCE_EXHAUSTED else None
    if too_big is not None:
        # gRPC's own words name neither the request nor what to do about it.
        size, most = int(too_big[1]), int(too_big[2])
        message = (
            f"a message of {size:,} bytes is over the {most:,} bytes gRPC lets through here: "
            "put less per call (the server takes content up to its max_content_bytes and "
            f"batches up to its max_batch_bytes); gRPC said: {message}"
        )
    exc = cls(message, code)
    for detail in _status_details(error):
        if detail.Is(pb.VersionConflict.DESCRIPTOR) and isinstance(exc, VersionConflictError):
            info = pb.VersionConflict()
            detail.Unpack(info)
            exc.key = info.key
            exc.expected_version = info.expected_version
            exc.current_version = info.current_version
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR) and isinstance(
            exc, InvalidArgumentError
        ):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            if bad.field_violations:
                exc.field = bad.field_violations[0].field
        elif detail.Is(error_details_pb2.QuotaFailure.DESCRIPTOR) and isinstance(
            exc, ResourceExhaustedError
        ):
            quota = error_details_pb2.QuotaFailure()
            detail.Unpack(quota)
            if quota.violations:
                exc.limit = quota.violations[0].subject
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR) and isinstance(
            exc, ResourceExhaustedError
        ):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            exc.retry_after = info.retry_delay.ToMilliseconds() / 1000.0
    return exc
