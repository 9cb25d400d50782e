"""TLS for the gRPC port: server certificate, and optionally required client certificates (mTLS).

Redis's own TLS and password are not configured here: they go in the Redis URL
(`rediss://:password@host:6380/0`, query options such as `ssl_ca_certs=/path/ca.pem` as
redis-py reads them).
"""

from __future__ import annotations

from pathlib import Path

import grpc

from ..errors import ConfigError
from ..settings import Settings


def _read(path: Path, what: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} {path}: {exc.strerror}") from None
    if b"-----BEGIN" not in data:
        raise ConfigError(f"the {what} {path} is not PEM (expected '-----BEGIN ...')")
    return data


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """Credentials for add_secure_port, or None to serve plaintext; ConfigError if half-set."""
    cert, key, client_ca = settings.tls_cert, settings.tls_key, settings.tls_client_ca
    if cert is None and key is None:
        if client_ca is not None:
            raise ConfigError("--tls-client-ca (mTLS) needs --tls-cert and --tls-key as well")
        return None
    if cert is None or key is None:
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    ca = _read(client_ca, "client CA certificate") if client_ca is not None else None
    return grpc.ssl_server_credentials(
        [(_read(key, "TLS private key"), _read(cert, "TLS certificate"))],
        root_certificates=ca,
        require_client_auth=ca is not None,
    )


def describe(settings: Settings) -> str:
    """How the port is protected, for the startup log."""
    if settings.tls_client_ca is not None:
        return "mTLS (client certificates required)"
    return "TLS" if settings.tls_cert is not None else "plaintext"
