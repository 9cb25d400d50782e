"""The `sharedctx` command: run the server, and put/get/list/delete entries from a shell."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import grpc

from .client import DEFAULT_TARGET, Client
from .errors import SharedCtxError
from .types import KINDS, FitEntry, FitResult


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
    p.add_argument("--log-format", choices=("text", "json"), help="log lines as text or JSON lines")
    p.add_argument("--metrics-listen", help="HOST:PORT for Prometheus /metrics (off when unset)")
    p.add_argument(
        "--excerpts",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="cut large entries into segments at Put so Fit can return excerpts (default on)",
    )
    p.add_argument(
        "--excerpt-min-tokens", type=int, help="smallest entry cut into segments (default 256)"
    )
    quota = p.add_argument_group("per-namespace quotas (0 = unlimited; see the README)")
    quota.add_argument("--namespace-max-entries", type=int, help="most entries per namespace")
    quota.add_argument("--namespace-max-bytes", type=int, help="most content bytes per namespace")
    quota.add_argument(
        "--quota-policy",
        choices=("reject", "evict_oldest"),
        help="what a full namespace does with a write (default reject)",
    )
    quota.add_argument("--quotas", type=Path, help="JSON file of quotas per namespace prefix")
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

    fit = sub.add_parser("fit", help="the entries that best fill a token budget for a query")
    _add_client_args(fit)
    fit.add_argument("query")
    fit.add_argument("--budget", type=int, default=2000, help="token budget (default 2000)")
    fit.add_argument("--strategy", choices=["scored", "relevant", "recent"])
    fit.add_argument("--keep-recent", type=int, help="newest entries forced in (default 2)")
    fit.add_argument("--max-entries", type=int)
    fit.add_argument("--form", choices=["compressed", "full", "auto"])
    fit.add_argument("--adaptive", choices=["none", "conservative", "moderate", "aggressive"])
    fit.add_argument("--content", action="store_true", help="print the selected texts")
    fit.add_argument("--explain", action="store_true", help="every candidate with factors")
    fit.add_argument(
        "--excerpts",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let large entries come back as excerpts of their matching lines (default on)",
    )

    watch = sub.add_parser("watch", help="print the namespace's changes as they happen")
    _add_client_args(watch)
    watch.add_argument("--resume-token", help="continue after this event's token")

    compress = sub.add_parser(
        "compress", help="show the compressed form the server would store (runs locally)"
    )
    compress.add_argument("file", nargs="?", help="file to read; stdin when omitted")
    compress.add_argument("--kind", choices=KINDS[1:], help="the entry's kind (a hint)")
    compress.add_argument("--tool-name", help="the tool that printed it (a hint), e.g. pytest")
    compress.add_argument("--token-encoding", default="o200k_base")
    compress.add_argument("--json", action="store_true", help="machine-readable output")
    compress.add_argument("--stats-only", action="store_true", help="only the token counts")

    reembed = sub.add_parser("reembed", help="recompute embeddings with the server's model")
    _add_client_args(reembed)
    reembed.add_argument("--force", action="store_true", help="also recompute existing ones")
    return parser


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    try:
        from sharedctx_server.edge.logs import configure as configure_logging
        from sharedctx_server.errors import ConfigError
        from sharedctx_server.server import serve
        from sharedctx_server.settings import Settings
    except ImportError:
        print("the server is not installed: pip install 'sharedctx[server]'", file=sys.stderr)
        return 2
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
        log_format=args.log_format,
        metrics_listen=args.metrics_listen,
        excerpts=args.excerpts,
        excerpt_min_tokens=args.excerpt_min_tokens,
        namespace_max_entries=args.namespace_max_entries,
        namespace_max_bytes=args.namespace_max_bytes,
        quota_policy=args.quota_policy,
        quotas=args.quotas,
    )
    try:
        configure_logging(settings.log_format, args.log_level)
    except ValueError as exc:  # an unknown SHAREDCTX_LOG_FORMAT or log level
        print(f"sharedctx serve: {exc}", file=sys.stderr)
        return 2
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


def _compress(args: argparse.Namespace) -> int:
    try:
        from sharedctx_server.compress import compress, describe, looks_binary
        from sharedctx_server.tokens import TokenCounter
    except ImportError:
        print("compress needs the server: pip install 'sharedctx[server]'", file=sys.stderr)
        return 2
    raw = Path(args.file).read_bytes() if args.file else sys.stdin.buffer.read()
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        print("sharedctx: the input is not UTF-8 text; Put would reject it", file=sys.stderr)
        return 1
    if looks_binary(content):
        print("sharedctx: the input looks binary; Put would reject it", file=sys.stderr)
        return 1
    counter = TokenCounter(args.token_encoding)
    result = compress(content, count_tokens=counter.count, kind=args.kind, tool_name=args.tool_name)
    summary = {
        "compressor": result.compressor,
        "original_tokens": result.original_tokens,
        "compressed_tokens": result.compressed_tokens,
        "token_density": round(result.token_density, 3),
    }
    if args.json:
        print(json.dumps({**summary, "compressed": result.text}, ensure_ascii=False))
    else:
        if not args.stats_only:
            print(result.text)
        print(describe(result), file=sys.stderr)
    return 0


def _emit(args: argparse.Namespace, data: Any, human: str) -> None:
    print(json.dumps(data, ensure_ascii=False) if args.json else human)


def _put(client: Client, args: argparse.Namespace) -> None:
    content = args.content if args.content is not None else sys.stdin.read()
    entry = client.put(
        args.namespace,
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


def _get(client: Client, args: argparse.Namespace) -> None:
    entry = client.get(args.namespace, args.key, full=args.full)
    _emit(args, entry.to_dict(), entry.content)


def _keys(client: Client, args: argparse.Namespace) -> None:
    found = list(client.keys(args.namespace, args.prefix))
    _emit(args, found, "\n".join(found))


def _delete(client: Client, args: argparse.Namespace) -> None:
    deleted = client.delete(args.namespace, args.key, if_version=args.if_version)
    _emit(args, {"deleted": deleted}, "deleted" if deleted else "not found")


def _stats(client: Client, args: argparse.Namespace) -> None:
    s = client.stats(args.namespace)
    _emit(
        args,
        s.__dict__,
        f"{s.entries} entries, {s.original_tokens} tokens "
        f"({s.compressed_tokens} compressed, {s.savings_percent:.1f}% saved), "
        f"{s.bytes_stored} bytes",
    )


def _clear(client: Client, args: argparse.Namespace) -> None:
    n = client.clear(args.namespace)
    _emit(args, {"deleted": n}, f"cleared {n} entries")


def _fit(client: Client, args: argparse.Namespace) -> None:
    result = client.fit(
        args.namespace,
        args.query,
        args.budget,
        strategy=args.strategy,
        keep_recent=args.keep_recent,
        max_entries=args.max_entries,
        form=args.form,
        adaptive=args.adaptive,
        include_content=args.content,
        explain=args.explain,
        excerpts=args.excerpts,
    )
    if args.json:
        _emit(args, _fit_dict(result), "")
        return
    print(format_fit_table(result, explain=args.explain))
    if args.content:
        for entry in result.entries:
            where = f", lines {format_ranges(entry)}" if entry.form == "excerpt" else ""
            print(f"\n--- {entry.key} ({entry.form}, {entry.tokens} tokens{where})")
            print(entry.content)


def _fit_dict(result: FitResult) -> dict[str, Any]:
    out = asdict(result)
    for entry in out["entries"]:
        entry["event_time"] = entry["event_time"].isoformat() if entry["event_time"] else None
    return out


def format_ranges(entry: FitEntry) -> str:
    """An excerpt's line ranges for people: "97-104,116 of 166"."""
    parts = [str(a) if a == b else f"{a}-{b}" for a, b in entry.line_ranges]
    return f"{','.join(parts)} of {entry.total_lines}"


def format_fit_table(result: FitResult, explain: bool = False) -> str:
    """A Fit result as a table: rank, key, form, tokens, score (and factors with `explain`;
    an excerpt's lines below its row)."""
    factors = ["recency", "semantic_similarity", "lexical_relevance", "error_indicator"]
    short = {"recency": "rec", "semantic_similarity": "sem", "lexical_relevance": "lex",
             "error_indicator": "err"}  # fmt: skip
    lines = []
    if explain:
        head = f"{'rank':>4}  {'key':30} {'tokens':>6} {'score':>7} " + " ".join(
            f"{short[f]:>5}" for f in factors
        )
        lines.append(head + "  reason")
        chosen = {e.key: e for e in result.entries}
        for c in result.explain:
            entry = chosen.get(c.key)
            rank = str(entry.rank) if entry is not None else "-"
            values = " ".join(
                f"{c.factors[f]:5.2f}" if f in c.factors else "    ?" for f in factors
            )
            tokens = entry.tokens if entry is not None else c.compressed_tokens
            reason = c.reason if entry is None else f"{c.reason} ({entry.form})"
            lines.append(
                f"{rank:>4}  {c.key[:30]:30} {tokens:>6} {c.score:7.3f} {values}  {reason}"
            )
            for seg in c.segments:
                span = f"{seg.first_line}-{seg.last_line}"
                mark = "shown" if seg.chosen else ""
                lines.append(
                    f"{'':6}lines {span:>11} {seg.tokens:>6} relevance {seg.relevance:4.2f} {mark}"
                )
    else:
        lines.append(f"{'rank':>4}  {'key':30} {'form':10} {'tokens':>6} {'score':>7}  lines")
        for e in result.entries:
            where = format_ranges(e) if e.form == "excerpt" else ""
            lines.append(
                f"{e.rank:>4}  {e.key[:30]:30} {e.form:10} {e.tokens:>6} {e.score:7.3f}  {where}"
            )
    lines.append(
        f"{len(result.entries)} of {result.candidates} entries, "
        f"{result.total_tokens} tokens"
        + (f"; left out: {result.left_out_by_reason}" if result.left_out_by_reason else "")
    )
    return "\n".join(lines)


def _watch(client: Client, args: argparse.Namespace) -> None:
    for change in client.watch(args.namespace, args.resume_token or ""):
        when = change.time.isoformat() if change.time else ""
        data = {
            "op": change.op, "key": change.key, "version": change.version,
            "namespace_version": change.namespace_version, "time": when,
            "resume_token": change.resume_token,
        }  # fmt: skip
        _emit(args, data, f"{when} {change.op:6} {change.key} v{change.version}")
        sys.stdout.flush()


def _reembed(client: Client, args: argparse.Namespace) -> None:
    last = None
    for step in client.reembed(args.namespace, force=args.force):
        last = step
        if not args.json:
            width = 30
            filled = int(width * step.done / step.total) if step.total else width
            sys.stderr.write(
                f"\rre-embedding [{'#' * filled}{'.' * (width - filled)}] "
                f"{step.done}/{step.total} ({step.computed} computed)"
            )
            sys.stderr.flush()
    if not args.json:
        sys.stderr.write("\n")
    if last is not None:
        _emit(args, asdict(last), f"{last.done} entries, {last.computed} embeddings computed")


_COMMANDS: dict[str, Callable[[Client, argparse.Namespace], None]] = {
    "put": _put,
    "get": _get,
    "keys": _keys,
    "delete": _delete,
    "stats": _stats,
    "clear": _clear,
    "fit": _fit,
    "watch": _watch,
    "reembed": _reembed,
}


def _run_client(args: argparse.Namespace) -> int:
    creds = _credentials(args)
    with Client(args.target, timeout=args.timeout, token=args.token, credentials=creds) as client:
        _COMMANDS[args.command](client, args)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sharedctx` command."""
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "compress":
        return _compress(args)
    try:
        return _run_client(args)
    except SharedCtxError as exc:
        code = exc.code.name if exc.code is not None else "ERROR"
        print(f"sharedctx: {code}: {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
