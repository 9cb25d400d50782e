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
from .types import Entry, PutItem, Stats

__all__ = [
    "AlreadyExistsError",
    "AsyncClient",
    "CancelledError",
    "Client",
    "DeadlineExceededError",
    "Entry",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "PermissionDeniedError",
    "PutItem",
    "ResourceExhaustedError",
    "SharedCtxError",
    "Stats",
    "UnauthenticatedError",
    "UnavailableError",
    "VersionConflictError",
]
