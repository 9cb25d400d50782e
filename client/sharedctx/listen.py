"""`--listen HOST:PORT` for the client's own listeners (`sharedctx mcp`, `sharedctx ui`).

Standard library only, so each command can check its arguments without its extra installed.
(The server has its own check, security/auth.py, which the client package never imports.)
"""

from __future__ import annotations

import ipaddress
import os
import socket

__all__ = ["bind", "is_loopback", "split_listen"]


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


def bind(listen: str, example: str) -> socket.socket:
    """A listening TCP socket for `HOST:PORT` (IPv6 in brackets); OSError when taken,
    ValueError (as split_listen) when malformed."""
    host, port = split_listen(listen, example)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host, family = "127.0.0.1", socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=128)
    except OSError as exc:
        # create_server's own message repeats the address as a Python tuple; callers name it.
        raise OSError(exc.errno, os.strerror(exc.errno) if exc.errno else str(exc)) from None
