"""Run the inspector's web app under uvicorn on a socket bound beforehand (so that port 0
works and the address printed is the one served)."""

from __future__ import annotations

import socket

import uvicorn

from ..listen import bind as listen_on
from .app import create_app
from .config import EXAMPLE, UiConfig

__all__ = ["bind", "serve", "uvicorn_server"]


def bind(listen: str) -> socket.socket:
    """A listening TCP socket for the inspector's `--listen`; OSError when taken."""
    return listen_on(listen, EXAMPLE)


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
