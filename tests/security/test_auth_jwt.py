"""JWT bearer tokens: HS256 secret or RS256/ES256 public key; issuer, audience, expiry; scope."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from sharedctx import AsyncClient, PermissionDeniedError, UnauthenticatedError
from sharedctx_server.errors import ConfigError
from sharedctx_server.security.auth_jwt import JwtVerifier
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from ..support.servers import serving
from .conftest import WRITER

NS = "team-a/session-42"
ISSUER = "https://issuer.test"
AUDIENCE = "sharedctx"
SECRET = b"0123456789abcdef0123456789abcdef-shared"


def claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "agent-jwt",
        "exp": now + 300,
        "namespaces": ["team-a/"],
        "permissions": ["read", "write"],
    }
    return {k: v for k, v in {**base, **overrides}.items() if v is not None}


def jwt_settings(settings: Settings, key_file: Path, **extra: Any) -> dict[str, Any]:
    return {"jwt_key": key_file, "jwt_issuer": ISSUER, "jwt_audience": AUDIENCE, **extra}


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "jwt.secret"
    path.write_bytes(SECRET + b"\n")
    return path


async def test_hs256_token_grants_its_scope(
    settings: Settings, token_counter: TokenCounter, secret_file: Path
) -> None:
    token = jwt.encode(claims(), SECRET, algorithm="HS256")
    async with serving(settings, token_counter, **jwt_settings(settings, secret_file)) as (r, _):
        async with AsyncClient(f"127.0.0.1:{r.port}", token=token, retries=0) as c:
            await c.put(NS, "k", "from a JWT")
            assert (await c.get(NS, "k", full=True)).content == "from a JWT"
            with pytest.raises(PermissionDeniedError, match="'agent-jwt' lacks 'write'.*team-b/x"):
                await c.put("team-b/x", "k", "outside the claim")
            with pytest.raises(PermissionDeniedError, match="lacks 'admin'"):
                await c.clear(NS)


BAD_TOKENS: list[tuple[str, dict[str, Any], bytes, str]] = [
    ("expired", {"exp": int(time.time()) - 600}, SECRET, "has expired"),
    ("wrong audience", {"aud": "someone-else"}, SECRET, "Audience"),
    ("wrong issuer", {"iss": "https://evil.test"}, SECRET, "issuer"),
    ("no expiry", {"exp": None}, SECRET, "exp"),
    ("no subject", {"sub": None}, SECRET, "sub"),
    ("wrong key", {}, b"another-secret-that-is-long-enough!!", "Signature verification failed"),
    ("no namespaces claim", {"namespaces": None}, SECRET, "scope claims are unusable"),
    ("bad permission claim", {"permissions": ["root"]}, SECRET, "unknown permission 'root'"),
]


@pytest.mark.parametrize(
    ("case", "changes", "key", "message"), BAD_TOKENS, ids=[c[0] for c in BAD_TOKENS]
)
async def test_bad_jwts_are_unauthenticated_saying_why(
    settings: Settings,
    token_counter: TokenCounter,
    secret_file: Path,
    case: str,
    changes: dict[str, Any],
    key: bytes,
    message: str,
) -> None:
    token = jwt.encode(claims(**changes), key, algorithm="HS256")
    async with serving(settings, token_counter, **jwt_settings(settings, secret_file)) as (r, _):
        async with AsyncClient(f"127.0.0.1:{r.port}", token=token, retries=0) as c:
            with pytest.raises(UnauthenticatedError, match=message):
                await c.get(NS, "k")


def _public_pem(private: Any) -> bytes:
    return bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


@pytest.mark.parametrize("algorithm", ["ES256", "RS256"])
async def test_public_key_tokens_work_alongside_static_tokens(
    settings: Settings,
    token_counter: TokenCounter,
    tmp_path: Path,
    token_file: Path,
    algorithm: str,
) -> None:
    private: Any = (
        ec.generate_private_key(ec.SECP256R1())
        if algorithm == "ES256"
        else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    key_file = tmp_path / "jwt.pub"
    key_file.write_bytes(_public_pem(private))
    token = jwt.encode(claims(permissions=["read"]), private, algorithm=algorithm)
    forged = jwt.encode(claims(), SECRET, algorithm="HS256")  # HS256 with a guessed secret
    extra = jwt_settings(settings, key_file, auth_tokens=token_file)
    async with serving(settings, token_counter, **extra) as (r, _):
        target = f"127.0.0.1:{r.port}"
        async with AsyncClient(target, token=WRITER, retries=0) as static:
            await static.put(NS, "k", "v")
        async with AsyncClient(target, token=token, retries=0) as reader:
            assert (await reader.get(NS, "k", full=True)).content == "v"
            with pytest.raises(PermissionDeniedError, match="'agent-jwt' lacks 'write'"):
                await reader.put(NS, "k2", "v")
        async with AsyncClient(target, token=forged, retries=0) as attacker:
            with pytest.raises(UnauthenticatedError, match="alg value is not allowed"):
                await attacker.get(NS, "k")


def test_a_short_hs256_secret_is_refused(tmp_path: Path) -> None:
    short = tmp_path / "short.secret"
    short.write_bytes(b"too-short")
    with pytest.raises(ConfigError, match="at least 32 bytes"):
        JwtVerifier.from_settings(Settings(jwt_key=short, jwt_issuer=ISSUER, jwt_audience=AUDIENCE))


def test_a_private_key_file_is_refused(tmp_path: Path) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = tmp_path / "private.pem"
    pem.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(ConfigError, match="not a PEM public key"):
        JwtVerifier.from_settings(Settings(jwt_key=pem, jwt_issuer=ISSUER, jwt_audience=AUDIENCE))


def test_a_key_without_issuer_and_audience_is_refused(secret_file: Path) -> None:
    with pytest.raises(ConfigError, match="--jwt-issuer and --jwt-audience"):
        JwtVerifier.from_settings(Settings(jwt_key=secret_file))
