"""`sharedctx ui`: the web inspector's command, registered in the `sharedctx.commands`
entry-point group.

Only the standard library and the client are imported up here, so that the command loads
without the `ui` extra and says how to install it when run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..cli import AddedCommand
from ..cli_args import add_client_args, channel_credentials
from ..listen import is_loopback, split_listen
from ..target import parse_target
from .config import EXAMPLE, UiConfig, listen_problem

__all__ = ["UI", "INSTALL_HINT"]

INSTALL_HINT = (
    "the web inspector needs the ui extra: pip install -e '.[ui]' in the sharedctx checkout"
)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Serve the web inspector: namespaces, entries, both forms of an entry, and a Fit "
        "playground that shows why each entry was or was not chosen. It talks to the server "
        "over gRPC with the same target, token and TLS flags as the other commands."
    )
    add_client_args(parser, namespaced=False)
    parser.add_argument(
        "--listen",
        default=os.environ.get("SHAREDCTX_UI_LISTEN", "127.0.0.1:8080"),
        help="HOST:PORT the web inspector listens on (env SHAREDCTX_UI_LISTEN; default "
        "%(default)s; port 0 picks a free one). Beyond loopback only with --token, which the "
        "browser must then sign in with, or --insecure",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-loopback --listen without a token (anyone who reaches it can read)",
    )
    parser.add_argument("--https-cert", help="serve the inspector over HTTPS with this PEM chain")
    parser.add_argument("--https-key", help="private key (PEM) of --https-cert")


def _run(args: argparse.Namespace) -> int:
    try:
        from .serve import bind, serve
    except ImportError:
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    parse_target(args.target)  # TargetError: the command's one-line message, exit 2
    problem = listen_problem(args.listen, bool(args.token), args.insecure)
    if problem is None and bool(args.https_cert) != bool(args.https_key):
        problem = "--https-cert and --https-key go together"
    if problem is not None:
        print(f"sharedctx ui: {problem}", file=sys.stderr)
        return 2
    config = UiConfig(
        target=args.target,
        token=args.token,
        credentials=channel_credentials(args),
        timeout=args.timeout,
        listen=args.listen,
    )
    host, _ = split_listen(args.listen, EXAMPLE)
    if args.token and not args.https_cert and not is_loopback(host):
        print(
            "sharedctx ui: warning: the token crosses the network in plaintext when people sign "
            "in: add --https-cert/--https-key, or put a TLS proxy in front",
            file=sys.stderr,
        )
    try:
        sock = bind(args.listen)
    except OSError as exc:
        print(f"sharedctx ui: cannot listen on {args.listen}: {exc.strerror}", file=sys.stderr)
        return 2
    port = sock.getsockname()[1]
    scheme = "https" if args.https_cert else "http"
    shown = f"[{host}]" if ":" in host else host
    url = f"{scheme}://{shown}:{port}/"
    if args.json:
        print(json.dumps({"url": url, "target": args.target}), flush=True)
    else:
        sign_in = " (sign in with the token)" if args.token else ""
        print(f"sharedctx ui: open {url}{sign_in}; server {args.target}", flush=True)
    serve(config, sock, https_cert=args.https_cert, https_key=args.https_key)
    return 0


UI = AddedCommand(
    "serve the web inspector (namespaces, entries, a Fit playground)", _add_arguments, _run
)
