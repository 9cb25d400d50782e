"""Signing in to an inspector started with `--token` (see access.py for the model)."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .access import COOKIE, Sessions, host_name
from .pages import render

__all__ = ["login", "logout"]

_MAX_FORM = 16 * 1024
# A wrong token costs a moment, so that guessing is slow.
_FAILURE_DELAY = 0.5


def _next(value: str) -> str:
    """Where to go after signing in: a path of this inspector only (no open redirect)."""
    if value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/"


def _same_origin(request: Request) -> bool:
    """A form posted from this inspector's own pages (browsers send Origin on POST)."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return host_name(urlsplit(origin).netloc) == host_name(request.headers.get("host", ""))


async def login(request: Request) -> Response:
    """The sign-in form; a correct token sets the session cookie."""
    sessions: Sessions = request.app.state.sessions
    target = _next(request.query_params.get("next", "/"))
    if request.method == "GET":
        return render(request, "login.html", {"title": "Sign in", "next": target, "error": ""})
    body = await request.body()
    fields = parse_qs(body[:_MAX_FORM].decode("utf-8", "replace"))
    given = (fields.get("token") or [""])[0].strip()
    target = _next((fields.get("next") or [target])[0])
    if not _same_origin(request) or not sessions.token_matches(given):
        await asyncio.sleep(_FAILURE_DELAY)
        context = {"title": "Sign in", "next": target, "error": "That is not the token."}
        return render(request, "login.html", context, status=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        COOKIE,
        sessions.new(),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


async def logout(request: Request) -> Response:
    """Forget this browser's session."""
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response
