"""Who may use the inspector, and the headers every page carries.

- With `--token`, the browser must sign in with that same token (the one the inspector uses
  to call the server): whoever holds it could read the same namespaces with the CLI anyway,
  so the inspector gives no one more than they already have. A signed-in browser holds a
  session cookie (HttpOnly, SameSite=Strict), an HMAC under a key made at start, so restarting
  the inspector signs everyone out. Scripts may send `Authorization: Bearer <token>` instead.
- On a loopback address the Host header must name a loopback host, so that a web page of
  another site cannot reach the inspector through DNS rebinding.
- Every response forbids framing and scripts, styles or connections from anywhere but the
  inspector itself.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import quote

from ..listen import is_loopback, split_listen
from .config import EXAMPLE, LOOPBACK_NAMES, UiConfig

__all__ = ["COOKIE", "AccessMiddleware", "Sessions"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "sharedctx_ui"
# Inline style attributes are allowed for the bars' widths (numbers the inspector writes);
# scripts only from the inspector's own files.
_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
_OPEN_PATHS = ("/login", "/static/")


class Sessions:
    """Sign-in sessions as signed cookies, under a key made when the app starts."""

    def __init__(self, token: str | None) -> None:
        self._token = token
        self._key = secrets.token_bytes(32)

    def token_matches(self, given: str) -> bool:
        """Whether `given` is the inspector's token (in constant time)."""
        if not self._token:
            return False
        return hmac.compare_digest(given.encode(), self._token.encode())

    def new(self) -> str:
        """A fresh session cookie value."""
        nonce = secrets.token_urlsafe(24)
        return f"{nonce}.{self._sign(nonce)}"

    def valid(self, value: str) -> bool:
        """Whether a cookie value is a session this process made."""
        nonce, _, mac = value.partition(".")
        return bool(nonce) and hmac.compare_digest(mac, self._sign(nonce))

    def _sign(self, nonce: str) -> str:
        return hmac.new(self._key, nonce.encode(), hashlib.sha256).hexdigest()


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def host_name(host_header: str) -> str:
    """The host part of a Host header ("[::1]:8080" -> "::1", "localhost:80" -> "localhost")."""
    if host_header.startswith("["):
        return host_header[1:].partition("]")[0]
    return host_header.rpartition(":")[0] if ":" in host_header else host_header


class AccessMiddleware:
    """Checks Host and sign-in before the app sees a request, and adds the security headers."""

    def __init__(self, app: ASGIApp, config: UiConfig, sessions: Sessions) -> None:
        self.app, self.config, self.sessions = app, config, sessions
        host, _ = split_listen(config.listen, EXAMPLE)
        self._hosts = {host.lower()} | LOOPBACK_NAMES if is_loopback(host) else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        problem = self._refusal(scope)
        if problem is not None:
            await _respond(send_with_headers, *problem)
            return
        await self.app(scope, receive, send_with_headers)

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        """(status, location or "", text) when the request may not go through."""
        if (
            self._hosts is not None
            and host_name(_header(scope, b"host")).lower() not in self._hosts
        ):
            return 421, "", "This inspector only answers to a loopback host name."
        path = scope.get("path", "/")
        if not self.config.login_required or path.startswith(_OPEN_PATHS):
            return None
        if self.signed_in(scope):
            return None
        if scope.get("method") == "GET" and not path.startswith(("/events/", "/row/", "/raw/")):
            query = scope.get("query_string", b"").decode("latin-1")
            target = path + (f"?{query}" if query else "")
            return 303, f"/login?next={quote(target, safe='')}", "Sign in first."
        return 401, "", "Sign in first: this inspector needs its token."

    def signed_in(self, scope: Scope) -> bool:
        """Whether the request carries a session cookie or the bearer token."""
        auth = _header(scope, b"authorization")
        if auth.lower().startswith("bearer ") and self.sessions.token_matches(auth[7:].strip()):
            return True
        cookie = SimpleCookie()
        try:
            cookie.load(_header(scope, b"cookie"))
        except Exception:  # a malformed Cookie header: no session
            return False
        morsel = cookie.get(COOKIE)
        return morsel is not None and self.sessions.valid(morsel.value)


async def _respond(send: Send, status: int, location: str, text: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")]
    if location:
        headers.append((b"location", location.encode("latin-1")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text.encode()})
