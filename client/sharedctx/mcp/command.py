"""`sharedctx mcp`: the MCP server's command, registered in the `sharedctx.commands`
entry-point group.

Only the standard library and the client are imported up here, so that the command loads
without the `mcp` extra and says how to install it when run.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from ..cli import AddedCommand
from ..cli_args import add_client_args, channel_credentials
from ..client import AsyncClient
from ..listen import bind, is_loopback, split_listen
from ..target import parse_target
from ..tokens import SUPPORTED_ENCODINGS

__all__ = ["INSTALL_HINT", "MCP"]

# What `--listen` looks like, for the messages that say how to write it.
_EXAMPLE = "127.0.0.1:8765"

INSTALL_HINT = "sharedctx mcp needs the MCP SDK: pip install -e '.[mcp]' in the sharedctx checkout"
_NAMESPACE = re.compile(r"[A-Za-z0-9._:/-]{1,128}")


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Serve sharedctx's tools (put, get, keys, delete, fit, stats) to MCP clients, over "
        "stdio (the default: the MCP client starts this command) or streamable HTTP at "
        "http://HOST:PORT/mcp. It talks to a running sharedctx server over gRPC with the same "
        "target, token and TLS flags as the other commands."
    )
    add_client_args(parser, namespaced=False, prints=False)
    parser.add_argument(
        "-n",
        "--namespace",
        default=os.environ.get("SHAREDCTX_MCP_NAMESPACE"),
        help="pin every tool to this namespace; the tools then do not ask for one "
        "(env SHAREDCTX_MCP_NAMESPACE)",
    )
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default: the MCP client starts this command and talks over its stdin and "
        "stdout) or http (streamable HTTP at --listen, for clients that connect)",
    )
    parser.add_argument(
        "--listen",
        default=os.environ.get("SHAREDCTX_MCP_LISTEN", _EXAMPLE),
        help="HOST:PORT for --transport http (env SHAREDCTX_MCP_LISTEN; default %(default)s); "
        "beyond loopback only with --http-token or --insecure",
    )
    parser.add_argument(
        "--http-token",
        default=os.environ.get("SHAREDCTX_MCP_HTTP_TOKEN"),
        help="bearer token MCP clients must send over HTTP (env SHAREDCTX_MCP_HTTP_TOKEN)",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-loopback --listen without --http-token",
    )
    parser.add_argument(
        "--token-encoding",
        choices=SUPPORTED_ENCODINGS,
        default=os.environ.get("SHAREDCTX_TOKEN_ENCODING", SUPPORTED_ENCODINGS[0]),
        help="the server's token encoding (its --token-encoding; env SHAREDCTX_TOKEN_ENCODING; "
        "default %(default)s): fit counts the headings it adds the same way, so that its text "
        "stays within budget_tokens",
    )


def _problem(args: argparse.Namespace) -> str | None:
    """Why the arguments cannot be served, or None."""
    if args.namespace is not None and not _NAMESPACE.fullmatch(args.namespace):
        return f"--namespace {args.namespace!r}: 1-128 characters of [A-Za-z0-9._:/-]"
    if args.transport != "http":
        return None
    try:
        host, _ = split_listen(args.listen, _EXAMPLE)
    except ValueError as exc:
        return str(exc)
    if is_loopback(host) or args.http_token or args.insecure:
        return None
    # Like `serve`: whoever reaches the port could read and write every namespace the
    # server's own token allows.
    return (
        f"refusing to serve MCP on {args.listen} without authentication: anyone who can reach "
        "it could read and write the namespaces this server's token allows. Require a bearer "
        "token with --http-token (SHAREDCTX_MCP_HTTP_TOKEN), or, on a network you trust, pass "
        "--insecure."
    )


def _run(args: argparse.Namespace) -> int:
    parse_target(args.target)  # TargetError: the command's one-line message, exit 2
    problem = _problem(args)
    if problem is not None:
        print(f"sharedctx mcp: {problem}", file=sys.stderr)
        return 2
    try:
        from .server import run
    except ImportError:
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    credentials = channel_credentials(args)

    def connect() -> AsyncClient:
        return AsyncClient(
            args.target, timeout=args.timeout, token=args.token, credentials=credentials
        )

    host, port = split_listen(args.listen, _EXAMPLE) if args.transport == "http" else ("", 0)
    if args.transport == "http":
        # Asked now, so a taken port is one line here rather than the HTTP server's traceback.
        try:
            bind(args.listen, _EXAMPLE).close()
        except OSError as exc:
            print(f"sharedctx mcp: cannot listen on {args.listen}: {exc.strerror}", file=sys.stderr)
            return 2
    try:
        run(
            connect, args.namespace, args.transport, host, port, args.http_token,
            args.token_encoding,
        )  # fmt: skip
    except KeyboardInterrupt:
        pass
    return 0


MCP = AddedCommand(
    "serve sharedctx's tools to MCP clients (stdio or streamable HTTP)", _add_arguments, _run
)
