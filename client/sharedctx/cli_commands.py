"""The client commands of `sharedctx` (put, get, keys, namespaces, delete, touch, stats,
clear, fit, watch): each takes a connected Client and the parsed arguments and prints."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict

from .cli_args import emit, stdin_text
from .client import Client
from .errors import SharedCtxError, UnavailableError
from .fit_table import fit_dict, format_fit_table, format_ranges, format_repeats
from .wording import counted

# Fit's filters by their command-line flag (repeatable): the Filters field, and its help.
FILTER_FLAGS = {
    "kind": ("include_kinds", "only entries of this kind (message, tool_output, log, ...)"),
    "exclude_kind": ("exclude_kinds", "leave out entries of this kind"),
    "tag": ("include_tags", "only entries with this tag"),
    "exclude_tag": ("exclude_tags", "leave out entries with this tag"),
    "agent": ("include_agent_ids", "only entries written by this agent id"),
    "exclude_agent": ("exclude_agent_ids", "leave out entries written by this agent id"),
    "thread": ("threads", "only entries of this thread"),
}


def put(client: Client, args: argparse.Namespace) -> None:
    # `-` is standard input, as for `compress` (a one-character entry reading `-` is rare).
    content = args.content if args.content not in (None, "-") else stdin_text()
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


def get(client: Client, args: argparse.Namespace) -> None:
    entry = client.get(args.namespace, args.key, full=args.full)
    if args.json:
        emit(args, entry.to_dict(), "")
        return
    # The text byte for byte (`get --full > copy` is the original); a newline only to end a
    # last line that has none, when a person reads it on a terminal.
    sys.stdout.write(entry.content)
    if entry.content and not entry.content.endswith("\n") and sys.stdout.isatty():
        sys.stdout.write("\n")


def keys(client: Client, args: argparse.Namespace) -> None:
    found = list(client.keys(args.namespace, args.prefix))
    emit(args, found, "\n".join(found))


def namespaces(client: Client, args: argparse.Namespace) -> None:
    found = list(client.namespaces(args.prefix))
    lines = [
        f"{n.namespace}  {counted(n.entries, 'entry', 'entries')}, {n.original_tokens} tokens "
        f"({n.compressed_tokens} compressed)"
        for n in found
    ]
    emit(args, [asdict(n) for n in found], "\n".join(lines))


def delete(client: Client, args: argparse.Namespace) -> None:
    deleted = client.delete(args.namespace, args.key, if_version=args.if_version)
    emit(args, {"deleted": deleted}, "deleted" if deleted else "not found")


def touch(client: Client, args: argparse.Namespace) -> None:
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


def stats(client: Client, args: argparse.Namespace) -> None:
    s = client.stats(args.namespace)
    emit(
        args,
        s.__dict__,
        f"{counted(s.entries, 'entry', 'entries')}, {s.original_tokens} tokens "
        f"({s.compressed_tokens} compressed, {s.savings_percent:.1f}% saved), "
        f"{s.bytes_stored} bytes",
    )


def clear(client: Client, args: argparse.Namespace) -> None:
    n = client.clear(args.namespace)
    emit(args, {"deleted": n}, f"cleared {counted(n, 'entry', 'entries')}")


def fit(client: Client, args: argparse.Namespace) -> None:
    filters = {field: getattr(args, flag) for flag, (field, _) in FILTER_FLAGS.items()}
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
            if entry.repeats:
                where += f"; {format_repeats(entry)}"
            print(f"\n--- {entry.key} ({entry.form}, {entry.tokens} tokens{where})")
            print(entry.content)


def watch(client: Client, args: argparse.Namespace) -> None:
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


COMMANDS: dict[str, Callable[[Client, argparse.Namespace], None]] = {
    "put": put,
    "get": get,
    "keys": keys,
    "namespaces": namespaces,
    "delete": delete,
    "touch": touch,
    "stats": stats,
    "clear": clear,
    "fit": fit,
    "watch": watch,
}
