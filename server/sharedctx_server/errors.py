"""Domain errors: small, named, free of transport concerns.

The server boundary (`sharedctx_server.edge.status`) is the one place that turns these into gRPC
status codes.
"""

from __future__ import annotations


class SharedCtxError(Exception):
    """Base of every error this server raises on purpose."""


class InvalidArgument(SharedCtxError):
    """A request field breaks a rule; the message names the field and the rule."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


class LimitExceeded(SharedCtxError):
    """A configured limit (size, count, budget, queue) was hit; the message names the limit."""

    def __init__(self, limit: str, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.retry_after_s = retry_after_s


class NotFound(SharedCtxError):
    """The named entry does not exist (or has expired)."""

    def __init__(self, namespace: str, key: str) -> None:
        super().__init__(f"no entry {key!r} in namespace {namespace!r} (absent or expired)")
        self.namespace = namespace
        self.key = key


class VersionConflict(SharedCtxError):
    """A compare-and-set write found a different version; nothing was written."""

    def __init__(self, key: str, expected: int, current: int) -> None:
        if expected == 0:
            msg = f"key {key!r} already exists at version {current} (if_version=0 requires absence)"
        elif current == 0:
            msg = f"key {key!r} does not exist (if_version={expected})"
        else:
            msg = f"key {key!r} is at version {current}, not {expected}; re-read and retry"
        super().__init__(msg)
        self.key = key
        self.expected = expected
        self.current = current


class LogTrimmed(SharedCtxError):
    """A Watch asked to resume from a position the capped change log no longer holds."""


class Unavailable(SharedCtxError):
    """A part the server depends on is not available right now; retrying later may work."""


class StoreUnavailable(Unavailable):
    """Redis could not be reached or did not answer in time."""


class Unauthenticated(SharedCtxError):
    """No credentials, or credentials the server does not accept (unknown, expired, malformed)."""


class PermissionDenied(SharedCtxError):
    """Valid credentials that do not grant this namespace or operation."""


class ConfigError(SharedCtxError):
    """The server's configuration is unusable (bad token file, TLS files, unsafe listen address).

    Raised while starting, never during an RPC; `serve` prints it and exits non-zero.
    """


def listen_error(listen: str, why: str = "") -> ConfigError:
    """The start error for a gRPC address that cannot be bound (`why`: the system's reason,
    when known; gRPC prints its own on stderr)."""
    return ConfigError(
        f"cannot listen on {listen}: the port is in use or the address is not on this machine"
        + (f" ({why})" if why else "")
    )
