"""sharedctx client: put context entries, fit the best of them into a token budget."""

import os

# gRPC's documented default, made explicit before grpc is first imported: without it, its C
# core writes a handshake's failure to stderr as a raw `I1205 ... ssl_transport_security.cc`
# line (before the error this client explains, and in the server's log on every plaintext
# connection to a TLS port). GRPC_VERBOSITY set by the caller wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from .client import AsyncClient, Client  # noqa: E402 (after the setting it must follow)
from .errors import (
    AlreadyExistsError,
    CancelledError,
    DeadlineExceededError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    SharedCtxError,
    UnauthenticatedError,
    UnavailableError,
    VersionConflictError,
)
from .types import (
    Change,
    Entry,
    FitCandidate,
    FitEntry,
    FitResult,
    NamespaceInfo,
    PutItem,
    ReembedProgress,
    SegmentScore,
    Stats,
)

__all__ = [
    "AlreadyExistsError",
    "AsyncClient",
    "CancelledError",
    "Change",
    "Client",
    "DeadlineExceededError",
    "Entry",
    "FitCandidate",
    "FitEntry",
    "FitResult",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "PermissionDeniedError",
    "NamespaceInfo",
    "PutItem",
    "SegmentScore",
    "ReembedProgress",
    "ResourceExhaustedError",
    "SharedCtxError",
    "Stats",
    "UnauthenticatedError",
    "UnavailableError",
    "VersionConflictError",
]
