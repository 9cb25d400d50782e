"""`--listen HOST:PORT` for the client's own listeners (`sharedctx mcp`, `sharedctx ui`).

Standard library only, so each command can check its arguments without its extra installed.
(The server has its own check, security/auth.py, which the client package never imports.)
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback", "split_listen"]


def split_listen(listen: str, example: str) -> tuple[str, int]:
    """(host, port) of `HOST:PORT` or `[v6]:PORT`; ValueError saying what to write, with
    `example` (e.g. "127.0.0.1:8080")."""
    host, sep, port = listen.strip().rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--listen {listen!r}: give HOST:PORT, e.g. {example}")
    host = host.strip("[]")
    if not host:
        raise ValueError(f"--listen {listen!r}: give the host too, e.g. {example}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """True when an address only accepts connections from this machine (a host name other
    than localhost could resolve anywhere, so it is not)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
