"""The `sharedctx` command: run the server, and put/get/list/touch/delete entries from a shell.

Other commands come from the `sharedctx.commands` entry-point group: each entry point is named
after its command and refers to a `Command`. The server package adds `serve`, `compress` and
`reembed` that way (sharedctx_server/cli.py), so this package never imports the server.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol

from .cli_args import (
    INT32,
    INT64,
    InputError,
    add_client_args,
    channel_credentials,
    check_utf8,
    weight,
)
from .cli_commands import COMMANDS as _CLIENT_COMMANDS
from .cli_commands import FILTER_FLAGS
from .client import Client
from .errors import SharedCtxError
from .target import TargetError
from .types import FIT_CHOICES
from .wire import KINDS

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


def connect(args: argparse.Namespace) -> Client:
    """A Client for the arguments of add_client_args."""
    return Client(
        args.target, timeout=args.timeout, token=args.token, credentials=channel_credentials(args)
    )


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
        type=weight,
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
    for flag, (field, what) in FILTER_FLAGS.items():
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
        check_utf8(args)
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
