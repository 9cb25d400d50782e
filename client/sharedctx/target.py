"""Where a client connects: the `--target` forms people type, turned into a gRPC target.

Accepted: `host`, `host:port`, `[v6addr]`, `[v6addr]:port`, a bare IPv6 address, the same
behind `grpc://`, and gRPC's own `unix:`, `unix-abstract:`, `dns:` and `ipv4:`/`ipv6:`
targets as they are. Without a port, 50051 (the server's default) is used: gRPC itself would
try 443, which is never a sharedctx server. Other schemes (`http://`, `https://`) are refused
with a message that says what to write instead.
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_PORT", "TargetError", "parse_target"]

DEFAULT_PORT = 50051
_PASSTHROUGH = ("unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HOST = re.compile(r"^[A-Za-z0-9._-]+$")


class TargetError(ValueError):
    """A target that is not a server address; the message says what to write instead."""


def parse_target(text: str) -> str:
    """The gRPC target for `text`; TargetError naming what is wrong."""
    target = text.strip()
    if target.startswith(_PASSTHROUGH):
        return target
    scheme = _SCHEME.match(target)
    if scheme:
        if scheme.group(1).lower() != "grpc":
            raise TargetError(
                f"target {text!r}: sharedctx speaks gRPC, not {scheme.group(1)}; give HOST:PORT "
                f"(e.g. 127.0.0.1:{DEFAULT_PORT}) or grpc://HOST:PORT"
            )
        target = target[scheme.end() :].rstrip("/")
    if not target:
        raise TargetError(f"target {text!r}: give HOST:PORT, e.g. 127.0.0.1:{DEFAULT_PORT}")
    if target.startswith("["):
        host, sep, rest = target[1:].partition("]")
        if not sep:
            raise TargetError(
                f"target {text!r}: the ']' after the IPv6 address is missing; write it as "
                f"[ADDRESS]:PORT, e.g. [::1]:{DEFAULT_PORT}"
            )
        if not host:
            raise TargetError(f"target {text!r}: an IPv6 address goes in the brackets: [::1]:50051")
        return f"[{host}]:{_port(rest.removeprefix(':') if rest else '', text)}"
    if target.count(":") > 1:  # a bare IPv6 address
        return f"[{target}]:{DEFAULT_PORT}"
    host, _, port = target.partition(":")
    if not _HOST.match(host):
        raise TargetError(f"target {text!r}: {host!r} is not a host name or address")
    return f"{host}:{_port(port, text)}"


def _port(value: str, text: str) -> int:
    if not value:
        return DEFAULT_PORT
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise TargetError(f"target {text!r}: the port must be a number from 1 to 65535")
    return int(value)
