"""Who the caller is (bearer tokens, JWTs) and what it may do (namespace prefixes, permissions).

A grant names a principal, the namespace PREFIXES it may touch and its permissions:

- `read`: Get, GetMany, Keys, Stats, Fit, Watch
- `write`: Put, PutMany, Delete (write does not imply read)
- `admin`: everything, including Clear and Reembed (implies read and write)

Prefixes match the start of the namespace as text: "team-a/" grants "team-a/session-1" but not
"team-ab/x", so end a prefix with "/" to scope a folder. "*" grants every namespace; an empty
prefix is refused so that a missing value never silently means "everything".

Static tokens come from a JSON file (`serve --auth-tokens FILE`):

    {"tokens": [{"token": "...", "principal": "agent-a",
                 "namespaces": ["team-a/"], "permissions": ["read", "write"]}]}

`"token_sha256": "<hex>"` may replace `"token"` so the file need not hold the secret itself, and
with mTLS (`--tls-client-ca`) `"client_cert": "<type>:<name>"` grants a scope to callers whose
verified client certificate carries that name, so they need no bearer token: `uri:` a URI SAN
(e.g. a SPIFFE id), `dns:` a DNS SAN (case-insensitive), `cn:` the subject common name. The
type is part of the match, so a CN or an email SAN never passes for a URI or DNS name. Every CA
in --tls-client-ca is trusted alike: give each one names only it issues.
Tokens are kept only as SHA-256 digests in memory and compared in constant time. The file is
re-read when it changes (checked at most every `auth_reload_seconds`, as calls come in), so
tokens are added and revoked without a restart, e.g. by updating a Kubernetes Secret.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError, PermissionDenied, Unauthenticated
from ..settings import Settings

log = logging.getLogger(__name__)

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
    "Put": WRITE,
    "PutMany": WRITE,
    "Delete": WRITE,
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
_PREFIX_RE = re.compile(r"[A-Za-z0-9._:/-]+")
_MIN_TOKEN_CHARS = 16


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
                    '[A-Za-z0-9._:/-] (prefixes, not globs: "team-a/" not "team-a/*"), '
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

    def covers(self, namespace: str) -> bool:
        """True when the namespace starts with one of the granted prefixes."""
        return any(p == ALL_NAMESPACES or namespace.startswith(p) for p in self.namespaces)

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


def digest(token: str) -> bytes:
    """SHA-256 of a token: the only form in which tokens are kept in memory."""
    return hashlib.sha256(token.encode("utf-8")).digest()


class TokenTable:
    """Static bearer tokens, held as digests, and client certificate names."""

    def __init__(
        self, entries: Iterable[tuple[bytes, Grant]], certs: dict[str, Grant] | None = None
    ) -> None:
        self._entries = list(entries)
        # Certificate names are not secrets (every peer sees them): a plain lookup is fine.
        self.certs: dict[str, Grant] = dict(certs or {})

    def __len__(self) -> int:
        return len(self._entries) + len(self.certs)

    def current(self) -> TokenTable:
        """This table (a TokenFile answers with its latest one)."""
        return self

    def lookup_cert(self, names: Sequence[str]) -> Grant | None:
        """The grant of a verified certificate's typed names (see `cert_name`), or None.

        Unauthenticated when its names match entries of different principals: which scope was
        meant cannot be told, so none is given.
        """
        typed = (cert_name(*n.split(":", 1)) for n in names if ":" in n)
        grants = {self.certs[n] for n in typed if n in self.certs}
        if len(grants) > 1:
            principals = ", ".join(sorted(g.principal for g in grants))
            raise Unauthenticated(
                f"the client certificate's names match several client_cert entries "
                f"({principals}); give each certificate names of one entry only"
            )
        return grants.pop() if grants else None

    def lookup(self, token: str) -> Grant | None:
        """The grant of `token`, or None; time does not depend on which entry (if any) matches."""
        wanted = digest(token)
        found = None
        # No early exit: every entry is compared, so timing tells nothing about the table.
        for candidate, grant in self._entries:
            if hmac.compare_digest(candidate, wanted):
                found = grant
        return found

    @classmethod
    def load(cls, path: Path, allow_empty: bool = False) -> TokenTable:
        """Read the JSON token file; ConfigError with the file and entry at fault.

        At start an empty list is refused (auth on with nobody allowed in is a mistake more
        often than a wish); a reload takes it, so that every token can be revoked at once.
        """
        try:
            data = json.loads(path.read_text("utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read the auth token file {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise ConfigError(f"the auth token file {path} is not valid JSON: {exc}") from None
        items = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(items, list) or (not items and not allow_empty):
            raise ConfigError(
                f'the auth token file {path} must hold {{"tokens": [...]}} with at least one token'
            )
        entries: list[tuple[bytes, Grant]] = []
        certs: dict[str, Grant] = {}
        seen: set[bytes] = set()
        for i, item in enumerate(items):
            where = f"{path}: tokens[{i}]"
            if not isinstance(item, dict):
                raise ConfigError(f"{where} must be an object")
            try:
                credential = _entry_credential(item)
                grant = Grant.parse(
                    item.get("principal"), item.get("namespaces"), item.get("permissions")
                )
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            if isinstance(credential, str):
                if credential in certs:
                    raise ConfigError(f"{where}: client_cert {credential!r} appears twice")
                certs[credential] = grant
                continue
            if credential in seen:
                raise ConfigError(f"{where}: the same token appears twice")
            seen.add(credential)
            entries.append((credential, grant))
        return cls(entries, certs)


# The client certificate names an entry can match, as gRPC reports them after verification.
CERT_NAME_KINDS = {"uri": "peer_uri", "dns": "peer_dns", "cn": "x509_common_name"}
_CERT_FORMS = (
    'client_cert must be "uri:<URI SAN>", "dns:<DNS SAN>" or "cn:<subject common name>", '
    'e.g. "uri:spiffe://example.org/agent-a"'
)


def cert_name(kind: str, name: str) -> str:
    """The comparable form of a certificate name: `<kind>:<name>`, DNS names lower-cased."""
    kind = kind.strip().lower()
    name = name.strip()
    return f"{kind}:{name.lower() if kind == 'dns' else name}"


def _entry_credential(item: dict[str, Any]) -> bytes | str:
    """A token's digest (bytes), or a client certificate name (str)."""
    token, hashed, cert = item.get("token"), item.get("token_sha256"), item.get("client_cert")
    if sum(v is not None for v in (token, hashed, cert)) != 1:
        raise ValueError('give exactly one of "token", "token_sha256" or "client_cert"')
    if cert is not None:
        if not isinstance(cert, str):
            raise ValueError(_CERT_FORMS)
        kind, _, name = cert.strip().partition(":")
        if kind.lower() not in CERT_NAME_KINDS or not name.strip():
            raise ValueError(_CERT_FORMS)
        return cert_name(kind, name)
    if token is not None:
        if not isinstance(token, str) or len(token) < _MIN_TOKEN_CHARS:
            raise ValueError(f"token must be a string of at least {_MIN_TOKEN_CHARS} characters")
        return digest(token)
    try:
        raw = bytes.fromhex(hashed) if isinstance(hashed, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != hashlib.sha256().digest_size:
        raise ValueError("token_sha256 must be 64 hex digits (sha256 of the token)")
    return raw


class TokenFile:
    """The token file's table, re-read when the file changes.

    A change is noticed at most `reload_seconds` after it happened (0: never re-read), on the
    next call: one stat() per interval, no background task. A file that has become unreadable
    or invalid keeps the last good table in force and logs an error naming the fault every
    interval until it is fixed: locking every agent out over a typo would be worse, and the old
    tokens were valid a moment ago. To revoke every token, write `{"tokens": []}`.
    """

    def __init__(
        self,
        path: Path,
        reload_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        certs_verified: bool = False,
    ) -> None:
        self.path = path
        self._reload_seconds = reload_seconds
        # Whether the server verifies client certificates (--tls-client-ca): without that,
        # client_cert entries can match nobody, which a reload can only warn about.
        self._certs_verified = certs_verified
        self._clock = clock
        self._version = _file_version(path)
        self.table = TokenTable.load(path)
        self._next_check = clock() + reload_seconds

    def __len__(self) -> int:
        return len(self.table)

    def current(self) -> TokenTable:
        """The table in force, after re-reading the file if it is time to check it."""
        if self._reload_seconds > 0 and self._clock() >= self._next_check:
            self.refresh()
        return self.table

    def lookup(self, token: str) -> Grant | None:
        """The grant of `token` in the current table, or None."""
        return self.current().lookup(token)

    def refresh(self) -> bool:
        """Re-read the file if it changed since the last read; True if a new table is in force."""
        self._next_check = self._clock() + self._reload_seconds
        version = _file_version(self.path)
        if version == self._version:
            return False
        try:
            table = TokenTable.load(self.path, allow_empty=True)
        except ConfigError as exc:
            # The version stays the old one, so the next interval tries again: a transient
            # failure (too many open files, a permission change in progress) heals by itself.
            log.error("auth tokens NOT reloaded, the previous ones stay in force: %s", exc)
            return False
        self._version = version
        self.table = table
        log.info("auth tokens reloaded from %s: %d token(s)", self.path, len(table))
        if table.certs and not self._certs_verified:
            log.warning(
                "%s now holds client_cert entries, but this server does not verify client "
                "certificates (no --tls-client-ca): those entries match no caller until it "
                "is restarted with mTLS",
                self.path,
            )
        return True


def _file_version(path: Path) -> tuple[int, int, int] | None:
    # Follows symlinks: a Kubernetes Secret volume swaps a symlink to a new folder on update.
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class TokenVerifier(Protocol):
    """Turns a bearer token into a grant (JWT verification implements this)."""

    def verify(self, token: str) -> Grant:
        """The grant, or Unauthenticated."""
        ...


class Authenticator:
    """Static tokens first, then (if configured) JWTs."""

    def __init__(self, tokens: TokenTable | TokenFile | None, jwt: TokenVerifier | None) -> None:
        self._tokens = tokens
        self._jwt = jwt

    def authenticate(
        self,
        metadata: Sequence[tuple[str, Any]] | None,
        cert_names: Callable[[], Sequence[str]] = tuple,
    ) -> Grant:
        """The caller's grant from its `authorization` metadata or, when it sends none, from
        its verified client certificate's names (`cert_names()`, only asked for then); else
        Unauthenticated."""
        table = self._tokens.current() if self._tokens is not None else None
        names = (
            cert_names()
            if table is not None and table.certs and not _has_authorization(metadata)
            else ()
        )
        if table is not None and names:
            grant = table.lookup_cert(names)
            if grant is not None:
                return grant
            raise Unauthenticated(
                f"client certificate {names[0]!r} has no client_cert entry in the token "
                "file, and no 'authorization: Bearer <token>' metadata was sent"
            )
        token = bearer_token(metadata)
        if table is not None:
            grant = table.lookup(token)
            if grant is not None:
                return grant
        if self._jwt is not None and token.count(".") == 2:
            return self._jwt.verify(token)
        raise Unauthenticated("unknown or revoked bearer token")

    @classmethod
    def from_settings(cls, settings: Settings) -> Authenticator | None:
        """The configured authenticator, or None when auth is off."""
        tokens = (
            TokenFile(
                settings.auth_tokens,
                settings.auth_reload_seconds,
                certs_verified=settings.tls_client_ca is not None,
            )
            if settings.auth_tokens
            else None
        )
        jwt = None
        if settings.jwt_key is not None:
            from .auth_jwt import JwtVerifier

            jwt = JwtVerifier.from_settings(settings)
        elif settings.jwt_issuer or settings.jwt_audience:
            raise ConfigError("--jwt-issuer/--jwt-audience need --jwt-key (secret or public key)")
        if tokens is None and jwt is None:
            return None
        if tokens is not None and tokens.current().certs and settings.tls_client_ca is None:
            raise ConfigError(
                f"{settings.auth_tokens} grants client_cert entries, but client certificates "
                "are only verified with --tls-client-ca (and --tls-cert/--tls-key)"
            )
        log.info(
            "auth on: %d static token(s)%s",
            len(tokens or ()),
            f", JWTs from issuer {settings.jwt_issuer!r}" if jwt else "",
        )
        return cls(tokens, jwt)


def _has_authorization(metadata: Sequence[tuple[str, Any]] | None) -> bool:
    return any(k == "authorization" for k, _ in metadata or ())


def bearer_token(metadata: Sequence[tuple[str, Any]] | None) -> str:
    """The token of `authorization: Bearer <token>`, or Unauthenticated saying what to send."""
    values = [v for k, v in metadata or () if k == "authorization"]
    if not values:
        raise Unauthenticated(
            "missing credentials: send the metadata 'authorization: Bearer <token>' "
            "(Client(token=...), or --token / SHAREDCTX_TOKEN on the command line)"
        )
    value = values[0] if isinstance(values[0], str) else ""
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the authorization metadata must be 'Bearer <token>'")
    return token.strip()


def is_loopback(listen: str) -> bool:
    """True when a gRPC listen address only accepts connections from this machine."""
    if listen.startswith(("unix:", "unix-abstract:")):
        return True
    host = listen.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        # Empty (all interfaces) or a host name that could resolve anywhere.
        return False


def check_listen_is_safe(settings: Settings) -> None:
    """ConfigError when the server would accept anyone's calls from the network."""
    authenticated = bool(settings.auth_tokens or settings.jwt_key or settings.tls_client_ca)
    if is_loopback(settings.listen):
        return
    if authenticated and not settings.tls_cert:
        log.warning("bearer tokens cross the network in plaintext: add --tls-cert/--tls-key")
    if authenticated or settings.insecure:
        return
    raise ConfigError(
        f"refusing to listen on {settings.listen} without authentication: anyone who can reach "
        "it could read, overwrite and clear every namespace. Turn auth on with "
        "--auth-tokens FILE (SHAREDCTX_AUTH_TOKENS), or JWTs with --jwt-key, --jwt-issuer and "
        "--jwt-audience, or require client certificates with --tls-client-ca; or, on a network "
        "you trust, pass --insecure (SHAREDCTX_INSECURE=true)."
    )
