"""The inspector on its own thread and event loop (beside a server from support.servers.threaded,
the way `sharedctx serve` and `sharedctx ui` run side by side), and plain HTTP fetches of it."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sharedctx.ui.config import UiConfig
from sharedctx.ui.serve import bind, uvicorn_server


@contextmanager
def inspector(config: UiConfig) -> Iterator[str]:
    """The inspector for `config` on a free loopback port; yields its base URL."""
    sock = bind("127.0.0.1:0")
    port = sock.getsockname()[1]
    server = uvicorn_server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the inspector did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@dataclass(frozen=True)
class Reply:
    """An HTTP reply, as the tests look at it."""

    status: int
    headers: dict[str, str]  # lowercase names
    text: str


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def fetch(
    url: str, *, data: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> Reply:
    """GET `url` (POST a form with `data`), redirects not followed, errors returned."""
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with _OPENER.open(request, timeout=30) as response:
            status, head, raw = response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        status, head, raw = exc.code, exc.headers, exc.read()
    return Reply(status, {k.lower(): v for k, v in head.items()}, raw.decode("utf-8"))
