"""The inspector's web app: routes, templates, the gRPC client it shares between requests, and
how server errors become pages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from ..client import AsyncClient
from ..errors import SharedCtxError
from . import fmt, live, pages, playground, signin
from .access import AccessMiddleware, Sessions
from .config import UiConfig

__all__ = ["create_app"]

HERE = Path(__file__).resolve().parent


def templates() -> Jinja2Templates:
    """The page templates, escaping every value (keys and contents are arbitrary text)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(fmt.FILTERS)
    return Jinja2Templates(env=env)


async def _server_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SharedCtxError)
    code = exc.code_name()
    status = pages.http_status(exc)
    return pages.render(
        request,
        "error.html",
        {
            "title": "The server cannot be reached"
            if code in ("UNAVAILABLE", "DEADLINE_EXCEEDED")
            else "The server refused the request",
            "code": code,
            "message": exc.message,
        },
        status=status,
    )


def create_app(config: UiConfig) -> Starlette:
    """The inspector for `config`; its gRPC client opens when the app starts."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Made here, on the serving event loop, which grpc.aio channels are bound to.
        async with AsyncClient(
            config.target,
            timeout=config.timeout,
            token=config.token,
            credentials=config.credentials,
        ) as client:
            app.state.client = client
            yield

    ns = "{namespace:path}"
    routes = [
        Route("/", pages.namespaces),
        Route(f"/ns/{ns}", pages.namespace),
        Route(f"/row/{ns}", pages.row),
        Route(f"/entry/{ns}", pages.entry),
        Route(f"/raw/{ns}", pages.raw),
        Route(f"/fit/{ns}", playground.page),
        Route(f"/events/{ns}", live.events),
        Route("/login", signin.login, methods=["GET", "POST"]),
        Route("/logout", signin.logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    sessions = Sessions(config.token)
    app = Starlette(
        routes=routes,
        middleware=[Middleware(AccessMiddleware, config=config, sessions=sessions)],
        exception_handlers={SharedCtxError: _server_error},
        lifespan=lifespan,
    )
    app.state.config = config
    # Whether the web server is shutting down; serve.py points it at uvicorn's flag.
    app.state.stopping = lambda: False
    app.state.sessions = sessions
    app.state.templates = templates()
    return app
