"""Static bearer tokens and client certificate names from the token file (`serve
--auth-tokens FILE`), held as SHA-256 digests and re-read when the file changes. See
security.auth for the file's format."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, Unauthenticated
from .grants import Grant

log = logging.getLogger(__name__)

_MIN_TOKEN_CHARS = 16


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
