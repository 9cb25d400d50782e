"""What every `sharedctx` command that calls a server shares: the target, auth and TLS
flags and the channel credentials they make, argument types, reading stdin, printing results."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from .client import DEFAULT_TARGET
from .wire import FACTORS


def seconds(text: str) -> float:
    """A --timeout value: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def add_client_args(
    p: argparse.ArgumentParser, namespaced: bool = True, prints: bool = True
) -> None:
    """The arguments of every command that calls a server (target, auth, TLS, the namespace
    unless the command spans namespaces, and --json for one that `prints` results)."""
    p.add_argument(
        "--target",
        default=os.environ.get("SHAREDCTX_TARGET", DEFAULT_TARGET),
        help="server address HOST:PORT (env SHAREDCTX_TARGET; default %(default)s)",
    )
    p.add_argument(
        "--token", default=os.environ.get("SHAREDCTX_TOKEN"), help="bearer token (SHAREDCTX_TOKEN)"
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=10.0,
        help="per-call deadline in seconds (watch has none)",
    )
    if prints:
        p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--tls", action="store_true", help="use TLS, trusting the system's CAs")
    p.add_argument(
        "--tls-ca",
        default=os.environ.get("SHAREDCTX_TLS_CA"),
        help="use TLS, trusting this CA certificate (PEM; env SHAREDCTX_TLS_CA)",
    )
    p.add_argument("--tls-client-cert", help="client certificate (PEM) for servers that want mTLS")
    p.add_argument("--tls-client-key", help="private key (PEM) of --tls-client-cert")
    if namespaced:
        p.add_argument("-n", "--namespace", required=True, help="namespace, e.g. team-a/session-42")


def _read_pem(path: str | None, flag: str) -> bytes | None:
    if path is None:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SystemExit(f"sharedctx: cannot read {path}: {exc.strerror}") from None
    if b"-----BEGIN " not in data:
        # gRPC would only fail the handshake, which reads as a server that is not there.
        raise SystemExit(f"sharedctx: {flag} {path} holds no PEM block (-----BEGIN ...)")
    return data


def channel_credentials(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """TLS channel credentials from --tls/--tls-ca/--tls-client-*, or None for plaintext."""
    if bool(args.tls_client_cert) != bool(args.tls_client_key):
        # gRPC would abort the process at the first call (a failed check in its C core).
        given, missing = (
            ("--tls-client-cert", "--tls-client-key")
            if args.tls_client_cert
            else ("--tls-client-key", "--tls-client-cert")
        )
        raise SystemExit(f"sharedctx: {given} needs {missing}: mTLS takes the two together")
    if not (args.tls or args.tls_ca or args.tls_client_cert):
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=_read_pem(args.tls_ca, "--tls-ca"),
        private_key=_read_pem(args.tls_client_key, "--tls-client-key"),
        certificate_chain=_read_pem(args.tls_client_cert, "--tls-client-cert"),
    )


def emit(args: argparse.Namespace, data: Any, human: str) -> None:
    """Print `data` as JSON with --json, else `human`: nothing at all when that is empty (no
    keys found), so that `| wc -l` counts 0 and `| while read` runs no time."""
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
    elif human:
        print(human)


class InputError(Exception):
    """Input the command cannot send (exit 2 with the message, as for a bad flag)."""


def stdin_text() -> str:
    """Standard input as UTF-8 text; InputError for bytes that are not."""
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # a text stream put in its place (an embedding program, a test)
        return sys.stdin.read()
    data: bytes = raw.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"the input is not UTF-8 text (byte {exc.start}); Put stores text: "
            "base64-encode binary data"
        ) from None


def check_utf8(args: argparse.Namespace) -> None:
    """InputError for an argument that is not UTF-8 text (the shell hands such bytes over
    as surrogate escapes, which no request can carry)."""
    for name, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(f"the {name} argument is not UTF-8 text") from None


def _integer(bits: int) -> Callable[[str], int]:
    """An argparse type: an integer that fits the request's `bits`-bit signed field."""
    limit = 1 << (bits - 1)

    def parse(text: str) -> int:
        value = int(text)
        if not -limit <= value < limit:
            raise argparse.ArgumentTypeError(f"{text} is out of range (at most {limit - 1})")
        return value

    parse.__name__ = "integer"  # argparse names the type in "invalid integer value"
    return parse


INT32, INT64 = _integer(32), _integer(64)


def weight(text: str) -> tuple[str, float]:
    """An argparse type: `factor=weight`, e.g. `recency=0`."""
    name, sep, value = text.partition("=")
    name = name.strip()
    shape = argparse.ArgumentTypeError(f"{text!r} is not FACTOR=WEIGHT (e.g. recency=0)")
    if not (sep and name):
        raise shape
    if name not in FACTORS:
        raise argparse.ArgumentTypeError(
            f"unknown factor {name!r}; use one of {', '.join(FACTORS)}"
        )
    try:
        return name, float(value)
    except ValueError:
        raise shape from None


weight.__name__ = "weight"
