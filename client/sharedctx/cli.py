"""The `sharedctx` command: run the server, and put/get/list/delete entries from a shell."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from .client import DEFAULT_TARGET, Client
from .errors import SharedCtxError
from .types import KINDS


def _add_client_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--target",
        default=os.environ.get("SHAREDCTX_TARGET", DEFAULT_TARGET),
        help="server address HOST:PORT (env SHAREDCTX_TARGET; default %(default)s)",
    )
    p.add_argument(
        "--token", default=os.environ.get("SHAREDCTX_TOKEN"), help="bearer token (SHAREDCTX_TOKEN)"
    )
    p.add_argument("--timeout", type=float, default=10.0, help="per-call deadline in seconds")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--tls", action="store_true", help="use TLS, trusting the system's CAs")
    p.add_argument(
        "--tls-ca",
        default=os.environ.get("SHAREDCTX_TLS_CA"),
        help="use TLS, trusting this CA certificate (PEM; env SHAREDCTX_TLS_CA)",
    )
    p.add_argument("--tls-client-cert", help="client certificate (PEM) for servers that want mTLS")
    p.add_argument("--tls-client-key", help="private key (PEM) of --tls-client-cert")
    p.add_argument("-n", "--namespace", required=True, help="namespace, e.g. team-a/session-42")


def _serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--listen", help="HOST:PORT to serve on (default 127.0.0.1:50051)")
    p.add_argument(
        "--redis-url", help="redis:// or rediss:// URL; without it an embedded server is started"
    )
    p.add_argument("--redis-cluster", action="store_true", default=None, help="URL is a cluster")
    p.add_argument("--data-dir", help="embedded server's data folder (~/.local/share/sharedctx)")
    p.add_argument("--default-ttl-seconds", type=int, help="TTL when a Put gives none (0 = never)")
    p.add_argument("--token-encoding", help="tiktoken encoding: o200k_base or cl100k_base")
    p.add_argument("--grace-seconds", type=float, help="drain time on SIGTERM (default 10)")
    p.add_argument("--max-content-bytes", type=int, help="largest content accepted (1 MiB)")
    p.add_argument("--max-batch-entries", type=int, help="most entries per PutMany/GetMany")
    p.add_argument("--log-level", default=os.environ.get("SHAREDCTX_LOG_LEVEL", "INFO"))
    sec = p.add_argument_group("security (each flag also reads SHAREDCTX_<FLAG_NAME>)")
    sec.add_argument("--auth-tokens", type=Path, help="JSON file of bearer tokens and their scope")
    sec.add_argument("--jwt-key", type=Path, help="JWT key file: HS256 secret or PEM public key")
    sec.add_argument("--jwt-issuer", help="required `iss` of JWTs")
    sec.add_argument("--jwt-audience", help="required `aud` of JWTs")
    sec.add_argument("--tls-cert", type=Path, help="server certificate chain (PEM): serve TLS")
    sec.add_argument("--tls-key", type=Path, help="private key (PEM) of --tls-cert")
    sec.add_argument("--tls-client-ca", type=Path, help="require client certificates of this CA")
    sec.add_argument(
        "--insecure",
        action="store_true",
        default=None,
        help="allow serving a non-loopback address without authentication",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(prog="sharedctx", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    _serve_args(sub.add_parser("serve", help="run the gRPC server"))

    put = sub.add_parser("put", help="store an entry (content from the argument or stdin)")
    _add_client_args(put)
    put.add_argument("key")
    put.add_argument("content", nargs="?", help="text to store; read from stdin when omitted")
    put.add_argument("--ttl", type=int, default=0, help="seconds until it expires")
    put.add_argument("--compressed", help="your own compressed form")
    put.add_argument("--kind", choices=KINDS[1:])
    put.add_argument("--role", default="")
    put.add_argument("--agent-id", default="")
    put.add_argument("--tool-name", default="")
    put.add_argument("--tag", action="append", default=[], dest="tags")
    put.add_argument("--importance", type=float)
    put.add_argument("--thread", default="")
    put.add_argument("--if-version", type=int, help="write only at this version (0 = create)")

    get = sub.add_parser("get", help="print an entry")
    _add_client_args(get)
    get.add_argument("key")
    get.add_argument("--full", action="store_true", help="the original instead of compressed")

    keys = sub.add_parser("keys", help="list live keys")
    _add_client_args(keys)
    keys.add_argument("prefix", nargs="?", default="")

    delete = sub.add_parser("delete", help="remove an entry")
    _add_client_args(delete)
    delete.add_argument("key")
    delete.add_argument("--if-version", type=int)

    stats = sub.add_parser("stats", help="namespace totals")
    _add_client_args(stats)

    clear = sub.add_parser("clear", help="remove every entry of a namespace")
    _add_client_args(clear)
    return parser


def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    try:
        from sharedctx_server.errors import ConfigError
        from sharedctx_server.server import serve
        from sharedctx_server.settings import Settings
    except ImportError:
        print("the server is not installed: pip install 'sharedctx[server]'", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = Settings.from_env(
        listen=args.listen,
        redis_url=args.redis_url,
        redis_cluster=args.redis_cluster,
        data_dir=args.data_dir,
        default_ttl_seconds=args.default_ttl_seconds,
        token_encoding=args.token_encoding,
        grace_seconds=args.grace_seconds,
        max_content_bytes=args.max_content_bytes,
        max_batch_entries=args.max_batch_entries,
        auth_tokens=args.auth_tokens,
        jwt_key=args.jwt_key,
        jwt_issuer=args.jwt_issuer,
        jwt_audience=args.jwt_audience,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_client_ca=args.tls_client_ca,
        insecure=args.insecure,
    )
    try:
        asyncio.run(serve(settings))
    except ConfigError as exc:
        print(f"sharedctx serve: {exc}", file=sys.stderr)
        return 2
    return 0


def _read_pem(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise SystemExit(f"sharedctx: cannot read {path}: {exc.strerror}") from None


def _credentials(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """TLS channel credentials from --tls/--tls-ca/--tls-client-*, or None for plaintext."""
    if not (args.tls or args.tls_ca or args.tls_client_cert):
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=_read_pem(args.tls_ca),
        private_key=_read_pem(args.tls_client_key),
        certificate_chain=_read_pem(args.tls_client_cert),
    )


def _emit(args: argparse.Namespace, data: Any, human: str) -> None:
    print(json.dumps(data, ensure_ascii=False) if args.json else human)


def _run_client(args: argparse.Namespace) -> int:
    creds = _credentials(args)
    with Client(args.target, timeout=args.timeout, token=args.token, credentials=creds) as client:
        ns = args.namespace
        if args.command == "put":
            content = args.content if args.content is not None else sys.stdin.read()
            entry = client.put(
                ns,
                args.key,
                content,
                ttl_seconds=args.ttl,
                compressed=args.compressed,
                kind=args.kind,
                role=args.role,
                agent_id=args.agent_id,
                tool_name=args.tool_name,
                tags=tuple(args.tags),
                importance=args.importance,
                thread=args.thread,
                if_version=args.if_version,
            )
            _emit(
                args,
                entry.to_dict(),
                f"stored {entry.key} version {entry.version} "
                f"({entry.original_tokens} tokens, {entry.compressed_tokens} compressed)",
            )
        elif args.command == "get":
            entry = client.get(ns, args.key, full=args.full)
            _emit(args, entry.to_dict(), entry.content)
        elif args.command == "keys":
            found = list(client.keys(ns, args.prefix))
            _emit(args, found, "\n".join(found))
        elif args.command == "delete":
            deleted = client.delete(ns, args.key, if_version=args.if_version)
            _emit(args, {"deleted": deleted}, "deleted" if deleted else "not found")
        elif args.command == "stats":
            s = client.stats(ns)
            _emit(
                args,
                s.__dict__,
                f"{s.entries} entries, {s.original_tokens} tokens "
                f"({s.compressed_tokens} compressed, {s.savings_percent:.1f}% saved), "
                f"{s.bytes_stored} bytes",
            )
        elif args.command == "clear":
            n = client.clear(ns)
            _emit(args, {"deleted": n}, f"cleared {n} entries")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sharedctx` command."""
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    try:
        return _run_client(args)
    except SharedCtxError as exc:
        code = exc.code.name if exc.code is not None else "ERROR"
        print(f"sharedctx: {code}: {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
