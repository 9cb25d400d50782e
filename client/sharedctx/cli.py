"""The `sharedctx` command: run the server, and put/get/list/touch/delete entries from a shell.

Other commands come from the `sharedctx.commands` entry-point group: each entry point is named
after its command and refers to a `Command`. The server package adds `serve`, `compress` and
`reembed` that way (sharedctx_server/cli.py), so this package never imports the server.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

import grpc

from .client import DEFAULT_TARGET, Client
from .errors import SharedCtxError, UnavailableError
from .fit_table import fit_dict, format_fit_table, format_ranges
from .target import TargetError
from .types import FIT_CHOICES
from .wire import FACTORS, KINDS
from .wording import counted

COMMAND_GROUP = "sharedctx.commands"
_SERVER_HINT = "pip install -e '.[server]' in the sharedctx checkout"
# What the commands of the server package say when it is not installed.
NOT_INSTALLED = {
    "serve": f"the server is not installed: {_SERVER_HINT}",
    "compress": f"compress needs the server: {_SERVER_HINT}",
    "reembed": f"reembed needs the server package: {_SERVER_HINT}",
}


class Command(Protocol):
    """A command another package adds to `sharedctx` (an entry point of COMMAND_GROUP)."""

    @property
    def help(self) -> str:
        """One line for `sharedctx --help`."""
        ...

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare the command's arguments."""
        ...

    def run(self, args: argparse.Namespace) -> int:
        """Do it; return the exit code (a SharedCtxError exits 1 with its status)."""
        ...


@dataclass(frozen=True)
class AddedCommand:
    """A Command made of its parts, for the packages that add commands."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _seconds(text: str) -> float:
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
        type=_seconds,
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


def connect(args: argparse.Namespace) -> Client:
    """A Client for the arguments of add_client_args."""
    return Client(
        args.target, timeout=args.timeout, token=args.token, credentials=channel_credentials(args)
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


def _stdin_text() -> str:
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


def _check_utf8(args: argparse.Namespace) -> None:
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


def _weight(text: str) -> tuple[str, float]:
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


_weight.__name__ = "weight"

# Fit's filters by their command-line flag (repeatable): the Filters field, and its help.
_FILTER_FLAGS = {
    "kind": ("include_kinds", "only entries of this kind (message, tool_output, log, ...)"),
    "exclude_kind": ("exclude_kinds", "leave out entries of this kind"),
    "tag": ("include_tags", "only entries with this tag"),
    "exclude_tag": ("exclude_tags", "leave out entries with this tag"),
    "agent": ("include_agent_ids", "only entries written by this agent id"),
    "exclude_agent": ("exclude_agent_ids", "leave out entries written by this agent id"),
    "thread": ("threads", "only entries of this thread"),
}


def _put(client: Client, args: argparse.Namespace) -> None:
    # `-` is standard input, as for `compress` (a one-character entry reading `-` is rare).
    content = args.content if args.content not in (None, "-") else _stdin_text()
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
    emit(
        args,
        entry.to_dict(),
        f"stored {entry.key} version {entry.version} "
        f"({entry.original_tokens} tokens, {entry.compressed_tokens} compressed)",
    )


def _get(client: Client, args: argparse.Namespace) -> None:
    entry = client.get(args.namespace, args.key, full=args.full)
    if args.json:
        emit(args, entry.to_dict(), "")
        return
    # The text byte for byte (`get --full > copy` is the original); a newline only to end a
    # last line that has none, when a person reads it on a terminal.
    sys.stdout.write(entry.content)
    if entry.content and not entry.content.endswith("\n") and sys.stdout.isatty():
        sys.stdout.write("\n")


def _keys(client: Client, args: argparse.Namespace) -> None:
    found = list(client.keys(args.namespace, args.prefix))
    emit(args, found, "\n".join(found))


def _namespaces(client: Client, args: argparse.Namespace) -> None:
    found = list(client.namespaces(args.prefix))
    lines = [
        f"{n.namespace}  {counted(n.entries, 'entry', 'entries')}, {n.original_tokens} tokens "
        f"({n.compressed_tokens} compressed)"
        for n in found
    ]
    emit(args, [asdict(n) for n in found], "\n".join(lines))


def _delete(client: Client, args: argparse.Namespace) -> None:
    deleted = client.delete(args.namespace, args.key, if_version=args.if_version)
    emit(args, {"deleted": deleted}, "deleted" if deleted else "not found")


def _touch(client: Client, args: argparse.Namespace) -> None:
    live = client.touch(args.namespace, args.keys)
    missing = [k for k in dict.fromkeys(args.keys) if k not in live]
    lines = [
        f"{key}  expires {when.isoformat()}" if when else f"{key}  never expires"
        for key, when in live.items()
    ] + [f"{key}  not found" for key in missing]
    data = {
        "expires_at": {k: when.isoformat() if when else None for k, when in live.items()},
        "missing": missing,
    }
    emit(args, data, "\n".join(lines))


def _stats(client: Client, args: argparse.Namespace) -> None:
    s = client.stats(args.namespace)
    emit(
        args,
        s.__dict__,
        f"{counted(s.entries, 'entry', 'entries')}, {s.original_tokens} tokens "
        f"({s.compressed_tokens} compressed, {s.savings_percent:.1f}% saved), "
        f"{s.bytes_stored} bytes",
    )


def _clear(client: Client, args: argparse.Namespace) -> None:
    n = client.clear(args.namespace)
    emit(args, {"deleted": n}, f"cleared {counted(n, 'entry', 'entries')}")


def _fit(client: Client, args: argparse.Namespace) -> None:
    filters = {field: getattr(args, flag) for flag, (field, _) in _FILTER_FLAGS.items()}
    result = client.fit(
        args.namespace,
        args.query,
        args.budget,
        strategy=args.strategy,
        preset=args.preset,
        weights=dict(args.weight) if args.weight else None,
        recency_decay_rate=args.recency_decay_rate,
        keep_recent=args.keep_recent,
        max_entries=args.max_entries,
        form=args.form,
        compress_threshold=args.compress_threshold,
        adaptive=args.adaptive,
        fill=args.fill,
        filters={field: values for field, values in filters.items() if values} or None,
        min_score=args.min_score,
        include_content=args.content,
        explain=args.explain,
        expand_neighbours=args.neighbours,
        excerpts=args.excerpts,
    )
    if args.json:
        emit(args, fit_dict(result), "")
        return
    print(format_fit_table(result, explain=args.explain))
    if args.content:
        for entry in result.entries:
            where = f", lines {format_ranges(entry)}" if entry.form == "excerpt" else ""
            print(f"\n--- {entry.key} ({entry.form}, {entry.tokens} tokens{where})")
            print(entry.content)


def _watch(client: Client, args: argparse.Namespace) -> None:
    changes = client.watch(args.namespace, args.resume_token or "", include_touches=args.touches)
    stopped = False

    def stop(signum: int, frame: object) -> None:
        # Ctrl-C cancels the call rather than raising KeyboardInterrupt inside gRPC's wait for
        # the next change: raised there, it could leave gRPC's lock held, and the process then
        # hung on its way out (a test's watch ignored Ctrl-C for 30 s, now and then).
        nonlocal stopped
        stopped = True
        changes.close()

    # (Only the main thread may set a handler; elsewhere Ctrl-C is the caller's.)
    handles = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, stop) if handles else None
    try:
        try:
            changes.started()
        except SharedCtxError as exc:  # refused (a bad token, no permission) or no server there
            if stopped:
                raise SystemExit(130) from None
            raise SystemExit(f"sharedctx: {exc.code_name()}: {exc.message}") from None
        # On stderr, so that stdout holds only changes: a person sees it is live.
        print(f"sharedctx: watching {args.namespace} (Ctrl-C to stop)", file=sys.stderr)
        for change in changes:
            when = change.time.isoformat() if change.time else ""
            data = {
                "op": change.op, "key": change.key, "version": change.version,
                "namespace_version": change.namespace_version, "time": when,
                "resume_token": change.resume_token,
            }  # fmt: skip
            emit(args, data, f"{when} {change.op:6} {change.key} v{change.version}")
            sys.stdout.flush()
    except SharedCtxError as exc:
        if stopped:
            pass  # the call Ctrl-C cancelled
        elif isinstance(exc, UnavailableError):  # the server went away mid-stream (restarted)
            raise SystemExit(
                f"sharedctx: the server ended the watch (UNAVAILABLE: {exc.message})"
                f"{_resume_hint(changes.resume_token)}"
            ) from None
        else:
            raise SystemExit(
                f"sharedctx: {exc.code_name()}: {exc.message}{_resume_hint(changes.resume_token)}"
            ) from None
    finally:
        if handles:
            signal.signal(signal.SIGINT, previous)
    if stopped:
        print(f"sharedctx: stopped{_resume_hint(changes.resume_token)}", file=sys.stderr)
        raise SystemExit(130)
    # A watch has no end of its own: the server stopped (or restarted) under it.
    raise SystemExit(
        f"sharedctx: the server ended the watch (stopped?){_resume_hint(changes.resume_token)}"
    )


def _resume_hint(token: str) -> str:
    if not token:
        return "; the server gave no position to resume from, so watch again to start from now"
    return f"; continue without missing a change with --resume-token {token}"


_CLIENT_COMMANDS: dict[str, Callable[[Client, argparse.Namespace], None]] = {
    "put": _put,
    "get": _get,
    "keys": _keys,
    "namespaces": _namespaces,
    "delete": _delete,
    "touch": _touch,
    "stats": _stats,
    "clear": _clear,
    "fit": _fit,
    "watch": _watch,
}


def _calling(command: Callable[[Client, argparse.Namespace], None]) -> Callable[..., int]:
    def run(args: argparse.Namespace) -> int:
        with connect(args) as client:
            command(client, args)
        return 0

    return run


def _absent(hint: str) -> Callable[..., int]:
    def run(args: argparse.Namespace) -> int:
        print(hint, file=sys.stderr)
        return 2

    return run


def _client_parser(
    sub: Any, name: str, help: str, namespaced: bool = True
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help)
    add_client_args(parser, namespaced)
    parser.set_defaults(run=_calling(_CLIENT_COMMANDS[name]))
    return parser


def _client_parsers(sub: Any) -> None:
    put = _client_parser(sub, "put", help="store an entry (content from the argument or stdin)")
    put.add_argument("key")
    put.add_argument("content", nargs="?", help="text to store; read from stdin when omitted or -")
    put.add_argument("--ttl", type=INT64, default=0, help="seconds until it expires")
    put.add_argument("--compressed", help="your own compressed form")
    put.add_argument("--kind", choices=KINDS[1:])
    put.add_argument("--role", default="")
    put.add_argument("--agent-id", default="")
    put.add_argument("--tool-name", default="")
    put.add_argument("--tag", action="append", default=[], dest="tags")
    put.add_argument("--importance", type=float)
    put.add_argument("--thread", default="")
    put.add_argument("--if-version", type=INT64, help="write only at this version (0 = create)")

    get = _client_parser(sub, "get", help="print an entry")
    get.add_argument("key")
    get.add_argument("--full", action="store_true", help="the original instead of compressed")

    keys = _client_parser(sub, "keys", help="list live keys")
    keys.add_argument("prefix", nargs="?", default="")

    spaces = _client_parser(
        sub, "namespaces", help="list namespaces with live entries", namespaced=False
    )
    spaces.add_argument("prefix", nargs="?", default="")

    delete = _client_parser(sub, "delete", help="remove an entry")
    delete.add_argument("key")
    delete.add_argument("--if-version", type=INT64)

    touch = _client_parser(
        sub, "touch", help="restart the TTL of entries (each its own TTL, from now)"
    )
    touch.add_argument("keys", nargs="+", metavar="key")

    _client_parser(sub, "stats", help="namespace totals")
    _client_parser(sub, "clear", help="remove every entry of a namespace")

    fit = _client_parser(sub, "fit", help="the entries that best fill a token budget for a query")
    fit.add_argument("query")
    fit.add_argument("--budget", type=INT64, default=2000, help="token budget (default 2000)")
    fit.add_argument("--strategy", choices=FIT_CHOICES["strategy"])
    fit.add_argument("--keep-recent", type=INT32, help="newest entries forced in (default 2)")
    fit.add_argument("--max-entries", type=INT32)
    fit.add_argument("--form", choices=FIT_CHOICES["form"])
    fit.add_argument("--adaptive", choices=FIT_CHOICES["adaptive"])
    fit.add_argument("--content", action="store_true", help="print the selected texts")
    fit.add_argument("--explain", action="store_true", help="every candidate with factors")
    fit.add_argument(
        "--excerpts",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let large entries come back as excerpts of their matching lines (default on)",
    )
    scoring = fit.add_argument_group("scoring and selection (see docs/fit.md)")
    scoring.add_argument("--preset", help="the weights to start from: default or headroom")
    scoring.add_argument(
        "--weight",
        type=_weight,
        action="append",
        metavar="FACTOR=WEIGHT",
        help="override one factor's weight, e.g. recency=0 (repeatable)",
    )
    scoring.add_argument("--recency-decay-rate", type=float, help="per second (default 0.0001)")
    scoring.add_argument("--min-score", type=float, help="leave out entries scoring below it")
    scoring.add_argument(
        "--neighbours",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="entries next to a strong match in its thread gain a share of its score (default on)",
    )
    scoring.add_argument("--fill", choices=FIT_CHOICES["fill"], help="skip (default) or stop")
    scoring.add_argument(
        "--compress-threshold", type=INT64, help="form auto: full forms up to this many tokens"
    )
    filtering = fit.add_argument_group("filters (each repeatable; an entry must pass all)")
    for flag, (field, what) in _FILTER_FLAGS.items():
        filtering.add_argument(
            f"--{flag.replace('_', '-')}",
            dest=flag,
            action="append",
            metavar="NAME",
            help=what,
            choices=KINDS[1:] if field.endswith("_kinds") else None,
        )

    watch = _client_parser(sub, "watch", help="print the namespace's changes as they happen")
    watch.add_argument("--resume-token", help="continue after this event's token")
    watch.add_argument("--touches", action="store_true", help="show TTL restarts (Touch) too")


def added_commands() -> dict[str, Command]:
    """The commands other installed packages add, by name (first of a name wins)."""
    found: dict[str, Command] = {}
    for point in entry_points(group=COMMAND_GROUP):
        if point.name in found or point.name in _CLIENT_COMMANDS:
            continue
        try:
            found[point.name] = point.load()
        except ImportError:  # a half-installed package: its commands say how to install it
            continue
    return found


def _version() -> str:
    """The installed distribution's version ("unknown" when run from a bare source tree)."""
    try:
        return importlib.metadata.version("sharedctx")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand, added ones included."""
    description = (__doc__ or "").split("\n\n")[0]
    parser = argparse.ArgumentParser(prog="sharedctx", description=description)
    parser.add_argument("--version", action="version", version=f"sharedctx {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, command in added_commands().items():
        p = sub.add_parser(name, help=command.help)
        command.add_arguments(p)
        p.set_defaults(run=command.run)
    for name, hint in NOT_INSTALLED.items():
        if name not in sub.choices:
            # Parsed leniently: whatever the arguments, the answer is how to install it.
            p = sub.add_parser(name, help=f"(not installed: {_SERVER_HINT})")
            p.set_defaults(run=_absent(hint), lenient=True)
    _client_parsers(sub)
    for command_parser in sub.choices.values():
        # What main() reports unknown arguments with: the command's usage, not the list of
        # commands (`sharedctx fit --text q` showed every command and none of fit's options).
        command_parser.set_defaults(command_parser=command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sharedctx` command."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and not getattr(args, "lenient", False):
        command = getattr(args, "command_parser", parser)
        command.error(f"unrecognized arguments: {' '.join(unknown)} (see {command.prog} --help)")
    try:
        _check_utf8(args)
        status = int(args.run(args))
        sys.stdout.flush()  # here, not at exit: a closed pipe must fail inside this try
        return status
    except (TargetError, InputError) as exc:  # the message says what to give instead
        print(f"sharedctx: {exc}", file=sys.stderr)
        return 2
    except SharedCtxError as exc:
        code = exc.code_name()
        hint = ""
        if code == "DEADLINE_EXCEEDED" and getattr(args, "timeout", None):
            hint = f" (no answer within --timeout {args.timeout:g} s: give it longer)"
        print(f"sharedctx: {code}: {exc.message}{hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: stopped as asked, not a crash (128 + SIGINT)
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader stopped early (`| head`): not an error of ours. Point stdout at devnull
        # so that flushing it at exit does not raise again, and exit as a program that
        # SIGPIPE ended would (128 + 13).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
