"""Who the caller is (bearer tokens, JWTs) and what it may do (namespace prefixes, permissions).

A grant names a principal, the namespace PREFIXES it may touch and its permissions:

- `read`: Get, GetMany, Keys, Stats, Fit, Watch, Namespaces (which lists only what it covers)
- `write`: Put, PutMany, Delete, Touch (write does not imply read)
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

import ipaddress
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..errors import ConfigError, Unauthenticated
from ..settings import Settings, is_unix_socket
from .auth_jwt import JwtVerifier
from .grants import Grant
from .tokens import TokenFile, TokenTable

log = logging.getLogger(__name__)


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
        jwt = jwt_verifier(settings)
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
    if is_unix_socket(listen):
        return True
    host = listen.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        # Empty (all interfaces) or a host name that could resolve anywhere.
        return False


def jwt_verifier(settings: Settings) -> JwtVerifier | None:
    """The configured JWT verifier (None without --jwt-key); ConfigError for a key that cannot
    be read or used, or an issuer or audience without a key. `serve` asks before anything
    starts, so a bad JWT setting stops it before the embedded Redis is up."""
    if settings.jwt_key is not None:
        return JwtVerifier.from_settings(settings)
    if settings.jwt_issuer or settings.jwt_audience:
        raise ConfigError("--jwt-issuer/--jwt-audience need --jwt-key (secret or public key)")
    return None


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
