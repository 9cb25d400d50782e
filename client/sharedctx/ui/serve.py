"""Run the inspector's web app under uvicorn on a socket bound beforehand (so that port 0
works and the address printed is the one served)."""

from __future__ import annotations

import socket

import uvicorn

from ..listen import split_listen
from .app import create_app
from .config import EXAMPLE, UiConfig

__all__ = ["bind", "serve", "uvicorn_server"]


def bind(listen: str) -> socket.socket:
    """A listening TCP socket for `HOST:PORT` (IPv6 in brackets); OSError when taken."""
    host, port = split_listen(listen, EXAMPLE)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host, family = "127.0.0.1", socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=128)


def uvicorn_server(
    config: UiConfig, *, https_cert: str | None = None, https_key: str | None = None
) -> uvicorn.Server:
    """The uvicorn server of the inspector's app (quiet: warnings and errors only)."""
    app = create_app(config)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            lifespan="on",
            server_header=False,
            # Nothing sits in front of the inspector unless the user puts it there.
            proxy_headers=False,
            ssl_certfile=https_cert,
            ssl_keyfile=https_key,
            # Live-update streams see the stop within half a second (live.py).
            timeout_graceful_shutdown=2,
        )
    )
    # Live-update streams end themselves when the server is asked to stop.
    app.state.stopping = lambda: server.should_exit
    return server


def serve(
    config: UiConfig,
    sock: socket.socket,
    *,
    https_cert: str | None = None,
    https_key: str | None = None,
) -> None:
    """Serve the inspector on `sock` until interrupted."""
    uvicorn_server(config, https_cert=https_cert, https_key=https_key).run(sockets=[sock])
