"""The server's commands of `sharedctx`: serve, compress (a local preview of the compressed form
a Put would store) and reembed.

pyproject.toml registers each one in the `sharedctx.commands` entry-point group, where the
client's command finds it. Only the standard library, settings.py and the client are imported
up here, so the commands load without the server extra; serve and compress import the server
when they run, and say how to install it when that fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sharedctx.cli import NOT_INSTALLED, AddedCommand, Command, connect
from sharedctx.cli_args import add_client_args, emit
from sharedctx.wire import KINDS
from sharedctx.wording import counted

from .settings import SECTIONS, Limits, Setting, Settings, reference


def _flag_options(setting: Setting) -> dict[str, Any]:
    """add_argument's options for a setting; every default is None so that the environment
    (then the field's default) applies to flags not given."""
    help_text = f"{setting.meaning} (default {setting.default}; env {setting.env})"
    options: dict[str, Any] = {"default": None, "help": help_text.replace("%", "%%")}
    if setting.kind == "bool":
        options["action"] = argparse.BooleanOptionalAction
    elif setting.kind != "str":
        options["type"] = {"int": int, "float": float, "path": Path}[setting.kind]
    if setting.choices:
        # Shown as argparse shows choices, but checked with every other value (settings.py), so
        # a bad flag and a bad variable get the same message naming both.
        options["metavar"] = "{" + ",".join(setting.choices) + "}"
    return options


def _serve_args(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run the gRPC server. Each flag also reads SHAREDCTX_<FLAG_NAME> (the flag wins); "
        "docs/configuration.md lists every setting."
    )
    groups: dict[str, Any] = {}
    for setting in reference():
        if setting.flag is None:
            continue
        if setting.section not in groups:
            groups[setting.section] = parser.add_argument_group(SECTIONS[setting.section])
        groups[setting.section].add_argument(setting.flag, **_flag_options(setting))


def settings_from(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> Settings:
    """The Settings of `serve`'s parsed flags over the environment (os.environ by default);
    ConfigError (from settings.py) naming the flag and variable of a value not allowed."""
    flags = {s.name: getattr(args, s.name) for s in reference() if s.flag is not None}
    return Settings.from_env(env, **flags)


def _not_installed(command: str, exc: ImportError) -> str:
    """How to install what `command` needs, and which import failed: a dependency that is
    installed but broken (or unreadable by this user) says so rather than "not installed"."""
    return f"{NOT_INSTALLED[command]} (importing it failed: {exc})"


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    try:
        from .cores import cpu_limit, worker_count
        from .edge.logs import configure as configure_logging
        from .errors import ConfigError
        from .workers import serve_workers
    except ImportError as exc:
        print(_not_installed("serve", exc), file=sys.stderr)
        return 2
    try:
        # Every value is checked here, before anything starts (the embedded Valkey, a port).
        settings = settings_from(args)
    except ConfigError as exc:
        print(f"sharedctx serve: error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_format, settings.log_level)
    count = worker_count(settings.workers)
    cpus = cpu_limit()
    if count > settings.max_workers:
        if settings.workers.strip().lower() != "auto":
            print(
                f"sharedctx serve: error: --workers {count} is over the limit of "
                f"{settings.max_workers} (SHAREDCTX_MAX_WORKERS): each worker is a whole server "
                f"with its own model (about 265 MB) and a core, and this process may use {cpus} "
                "CPUs (--workers auto sizes it)",
                file=sys.stderr,
            )
            return 2
        count = settings.max_workers  # auto on a machine with more CPUs than that
    if count > 2 * cpus:
        # Each worker holds its own model and caches (about 265 MB) and wants a core.
        print(
            f"sharedctx serve: warning: {count} workers for {cpus} CPUs; each takes about "
            "265 MB and one core (--workers auto sizes it)",
            file=sys.stderr,
        )
    if count > 1:
        # The supervisor never loads the server (the model, gRPC): only its workers do.
        running = serve_workers(settings, count)
    else:
        try:
            from .server import serve
        except ImportError as exc:
            print(_not_installed("serve", exc), file=sys.stderr)
            return 2
        running = serve(settings)
    try:
        asyncio.run(running)
    except ConfigError as exc:  # what the values alone cannot tell: files, a port in use...
        print(f"sharedctx serve: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _compress_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="file to read; stdin when omitted or -")
    parser.add_argument("--kind", choices=KINDS[1:], help="the entry's kind (a hint)")
    parser.add_argument("--tool-name", help="the tool that printed it (a hint), e.g. pytest")
    encodings = next(s.choices for s in reference() if s.name == "token_encoding")
    parser.add_argument("--token-encoding", default=encodings[0], choices=encodings)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--stats-only", action="store_true", help="only the token counts")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also say which compressor ran, why it won over the others, and what it left out",
    )


def _compress(args: argparse.Namespace) -> int:
    try:
        from .compress import describe, explain, looks_binary
        from .compress.explanation import explanation_data, explanation_lines
        from .tokens import TokenCounter
    except ImportError as exc:
        print(_not_installed("compress", exc), file=sys.stderr)
        return 2
    try:
        reading_stdin = args.file in (None, "-")
        raw = sys.stdin.buffer.read() if reading_stdin else Path(args.file).read_bytes()
    except OSError as exc:
        print(f"sharedctx: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        print("sharedctx: the input is not UTF-8 text; Put would reject it", file=sys.stderr)
        return 1
    if looks_binary(content):
        print("sharedctx: the input looks binary; Put would reject it", file=sys.stderr)
        return 1
    most = Limits().max_content_bytes
    if len(raw) > most:  # still compressed: a server may allow more
        print(
            f"sharedctx: note: {len(raw):,} bytes is over max_content_bytes ({most:,} by "
            "default): a server with the default limits would refuse this Put",
            file=sys.stderr,
        )
    counter = TokenCounter(args.token_encoding)
    choice = explain(content, count_tokens=counter.count, kind=args.kind, tool_name=args.tool_name)
    result = choice.result
    summary: dict[str, Any] = {
        "compressor": result.compressor,
        "original_tokens": result.original_tokens,
        "compressed_tokens": result.compressed_tokens,
        # The share of tokens saved, as the human line's "82% saved" (and Fit's token_density
        # factor) gives it.
        "saved": round(1 - 1 / result.token_density, 3),
    }
    if args.explain:
        summary["explain"] = explanation_data(choice)
    if args.json:
        form = {} if args.stats_only else {"compressed": result.text}
        print(json.dumps({**summary, **form}, ensure_ascii=False))
        return 0
    if not args.stats_only:
        print(result.text)
    report = explanation_lines(choice) if args.explain else [describe(result)]
    print("\n".join(report), file=sys.stderr)
    return 0


def _reembed_args(parser: argparse.ArgumentParser) -> None:
    add_client_args(parser)
    parser.add_argument("--force", action="store_true", help="also recompute existing ones")


def _reembed(args: argparse.Namespace) -> int:
    last = None
    with connect(args) as client:
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
            done = counted(last.done, "entry", "entries")
            emit(args, asdict(last), f"{done}, {last.computed} embeddings computed")
    return 0


SERVE: Command = AddedCommand("run the gRPC server", _serve_args, _serve)
COMPRESS: Command = AddedCommand(
    "show the compressed form the server would store (runs locally)", _compress_args, _compress
)
REEMBED: Command = AddedCommand(
    "recompute embeddings with the server's model", _reembed_args, _reembed
)
