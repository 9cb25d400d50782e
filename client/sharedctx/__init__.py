"""sharedctx client: put context entries, fit the best of them into a token budget."""

from .client import AsyncClient, Client
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
