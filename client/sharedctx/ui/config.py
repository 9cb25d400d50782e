"""What the inspector is told at start (`UiConfig`) and the address checks of `--listen`.

Standard library and grpc only, so that `sharedctx ui` can check its arguments (and say how
to install the web stack) without the `ui` extra.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from ..listen import is_loopback, split_listen

__all__ = ["EXAMPLE", "UiConfig", "listen_problem"]

# Host names a browser may use for a loopback listener (checked against the Host header, so
# that a page of another site cannot reach the inspector through DNS rebinding).
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
# What `--listen` looks like, for the messages that say how to write it.
EXAMPLE = "127.0.0.1:8080"


@dataclass(frozen=True)
class UiConfig:
    """The inspector's settings: where the sharedctx server is and how the web side behaves."""

    target: str
    token: str | None = None
    credentials: grpc.ChannelCredentials | None = None
    timeout: float = 10.0
    listen: str = "127.0.0.1:8080"
    # Rows per page of a namespace's table, and how many entries a namespace may have for
    # the table to sort by columns other than the key (sorting needs every entry's metadata).
    page_size: int = 50
    sort_limit: int = 2000

    @property
    def login_required(self) -> bool:
        """With a token, the browser must show the same token (see docs/ui.md)."""
        return bool(self.token)


def listen_problem(listen: str, token: bool, insecure: bool) -> str | None:
    """Why the inspector must not listen on `listen`, or None. Off loopback, anyone who can
    reach the port could read every namespace the inspector's token may read, so it needs the
    token from the browser (`--token`) or an explicit `--insecure`."""
    try:
        host, _ = split_listen(listen, EXAMPLE)
    except ValueError as exc:
        return str(exc)
    if is_loopback(host) or token or insecure:
        return None
    return (
        f"refusing to listen on {listen} without access control: anyone who can reach it could "
        "read every namespace the inspector can. Give --token (SHAREDCTX_TOKEN): the browser "
        "then has to sign in with that same token; or, on a network you trust, pass --insecure."
    )
