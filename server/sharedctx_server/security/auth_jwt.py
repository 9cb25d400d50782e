"""JWT bearer tokens (PyJWT): signature, issuer, audience and expiry checked; scope from claims.

Claims: `sub` is the principal, `namespaces` the list of namespace prefixes, `permissions` the
list of read/write/admin, with the same meaning as in the token file (see `auth`). `exp` is
required: a token that never expires is a password that cannot be rotated.

The key file (`--jwt-key`) holds either a PEM public key (RSA -> RS256, EC P-256/384/521 ->
ES256/384/512, Ed25519 -> EdDSA) or, for HS256, the shared secret itself (32 bytes or more).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, Unauthenticated
from ..settings import Settings
from .grants import Grant

# Clock skew tolerated between the token issuer and this server.
LEEWAY_SECONDS = 30
_MIN_SECRET_BYTES = 32
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


@dataclass(frozen=True)
class JwtVerifier:
    """Verifies JWTs signed with one key, for one issuer and audience."""

    key: Any
    algorithm: str
    issuer: str
    audience: str

    @classmethod
    def from_settings(cls, settings: Settings) -> JwtVerifier:
        """Load the key file; ConfigError when anything needed is missing or unusable."""
        try:
            import jwt  # noqa: F401  (checked here so a missing extra fails at startup)
        except ImportError:
            raise ConfigError("JWT auth needs PyJWT: pip install 'pyjwt[crypto]'") from None
        if settings.jwt_key is None or not settings.jwt_issuer or not settings.jwt_audience:
            raise ConfigError("JWT auth needs all of --jwt-key, --jwt-issuer and --jwt-audience")
        try:
            raw = settings.jwt_key.read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"cannot read the JWT key {settings.jwt_key}: {exc.strerror}"
            ) from None
        key, algorithm = _load_key(raw, str(settings.jwt_key))
        return cls(key, algorithm, settings.jwt_issuer, settings.jwt_audience)

    def verify(self, token: str) -> Grant:
        """The grant the token's claims carry, or Unauthenticated saying what was wrong."""
        import jwt

        try:
            claims = jwt.decode(
                token,
                self.key,
                algorithms=[self.algorithm],
                issuer=self.issuer,
                audience=self.audience,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("the bearer token (JWT) has expired; get a new one") from None
        except jwt.InvalidTokenError as exc:
            raise Unauthenticated(f"invalid bearer token (JWT): {exc}") from None
        try:
            return Grant.parse(
                claims.get("sub"), claims.get("namespaces"), claims.get("permissions")
            )
        except ValueError as exc:
            raise Unauthenticated(f"the JWT's scope claims are unusable: {exc}") from None


def _load_key(raw: bytes, where: str) -> tuple[Any, str]:
    if not raw.lstrip().startswith(b"-----BEGIN"):
        secret = raw.strip()
        if len(secret) < _MIN_SECRET_BYTES:
            raise ConfigError(
                f"{where}: an HS256 secret must be at least {_MIN_SECRET_BYTES} bytes "
                f"(got {len(secret)}); or give a PEM public key for RS256/ES256"
            )
        return secret, "HS256"
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(raw)
    except ValueError as exc:
        raise ConfigError(f"{where} is not a PEM public key (a private key? {exc})") from None
    if isinstance(key, rsa.RSAPublicKey):
        return key, "RS256"
    if isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name in _EC_ALGORITHMS:
        return key, _EC_ALGORITHMS[key.curve.name]
    if isinstance(key, ed25519.Ed25519PublicKey):
        return key, "EdDSA"
    raise ConfigError(f"{where}: unsupported key type {type(key).__name__}")
