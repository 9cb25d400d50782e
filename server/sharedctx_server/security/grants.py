"""What a caller may do: permissions, the permission each RPC needs, and grants (a
principal, the namespace prefixes it may touch, its permissions). See security.auth."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import PermissionDenied
from ..model import NAMESPACE_CHARS

READ, WRITE, ADMIN = "read", "write", "admin"
PERMISSIONS = (READ, WRITE, ADMIN)
ALL_NAMESPACES = "*"

# The permission each SharedContext RPC needs. An RPC missing here needs admin: a new RPC is
# closed until someone decides who may call it.
RPC_PERMISSIONS: dict[str, str] = {
    "Get": READ,
    "GetMany": READ,
    "Keys": READ,
    "Stats": READ,
    "Fit": READ,
    "Watch": READ,
    "Namespaces": READ,
    "Put": WRITE,
    "PutMany": WRITE,
    "Delete": WRITE,
    # Moves expiry times other readers depend on: a change to the namespace, not a read.
    "Touch": WRITE,
    "Clear": ADMIN,
    "Reembed": ADMIN,
}
# Open without credentials so that Kubernetes probes and grpcurl's discovery keep working; they
# expose no entry data.
OPEN_SERVICES = frozenset(
    {
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
        "grpc.reflection.v1.ServerReflection",
    }
)
_PREFIX_RE = re.compile(f"{NAMESPACE_CHARS}+")


# RPCs that span namespaces: a caller with `read` on any prefix may call them, and sees only
# what its grant covers (the handler filters by Grant.can_read).
LISTINGS = frozenset({"Namespaces"})


def required_permission(method: str) -> str:
    """The permission an RPC (bare method name, e.g. "Put") needs."""
    return RPC_PERMISSIONS.get(method, ADMIN)


@dataclass(frozen=True)
class Grant:
    """What one authenticated principal may do."""

    principal: str
    namespaces: tuple[str, ...]
    permissions: frozenset[str]

    @classmethod
    def parse(cls, principal: Any, namespaces: Any, permissions: Any) -> Grant:
        """A grant from untrusted values (file or JWT claims); ValueError names what is wrong."""
        if not isinstance(principal, str) or not principal:
            raise ValueError("principal must be a non-empty string")
        if not _is_str_list(namespaces) or not namespaces:
            raise ValueError('namespaces must be a non-empty list of prefixes (or ["*"])')
        for prefix in namespaces:
            if prefix != ALL_NAMESPACES and not _PREFIX_RE.fullmatch(prefix):
                raise ValueError(
                    f"namespace prefix {prefix!r} is not valid: use characters of "
                    f'{NAMESPACE_CHARS} (prefixes, not globs: "team-a/" not "team-a/*"), '
                    'or "*" for every namespace'
                )
        if not _is_str_list(permissions) or not permissions:
            raise ValueError(f"permissions must be a non-empty list of {', '.join(PERMISSIONS)}")
        unknown = sorted(set(permissions) - set(PERMISSIONS))
        if unknown:
            raise ValueError(f"unknown permission {unknown[0]!r}; use {', '.join(PERMISSIONS)}")
        granted = set(permissions)
        if ADMIN in granted:
            granted |= {READ, WRITE}
        return cls(principal, tuple(namespaces), frozenset(granted))

    def can_read(self, namespace: str) -> bool:
        """True when this grant may read `namespace`."""
        return READ in self.permissions and self.covers(namespace)

    def covers(self, namespace: str) -> bool:
        """True when the namespace starts with one of the granted prefixes."""
        return any(p == ALL_NAMESPACES or namespace.startswith(p) for p in self.namespaces)

    def require_any(self, permission: str, method: str) -> None:
        """PermissionDenied unless this grant holds `permission` on some namespace (listings)."""
        if permission not in self.permissions:
            raise PermissionDenied(
                f"principal {self.principal!r} lacks {permission!r} permission (needed by "
                f"{method}); it holds {', '.join(sorted(self.permissions))}"
            )

    def require(self, namespace: str | None, permission: str, method: str) -> None:
        """PermissionDenied unless this grant allows `permission` on `namespace`.

        `namespace` None (a request without one) needs a grant over every namespace.
        """
        allowed = permission in self.permissions and (
            ALL_NAMESPACES in self.namespaces if namespace is None else self.covers(namespace)
        )
        if not allowed:
            where = "every namespace" if namespace is None else f"namespace {namespace!r}"
            raise PermissionDenied(
                f"principal {self.principal!r} lacks {permission!r} permission on {where} "
                f"(needed by {method}); it holds {', '.join(sorted(self.permissions))} on "
                f"{', '.join(self.namespaces)}"
            )


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
