"""Every call of the SharedContext service, defined once for both clients: the request it
sends, whether a retry is safe, and how its reply becomes a typed value.

client.py makes each definition a method of `Client` (blocking) and `AsyncClient` (asyncio),
which differ only in how they carry a call (deadline, metadata, retries, typed errors). A
definition's signature, defaults and docstring are the method's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message

from . import wire
from .types import (
    AdaptiveName,
    Change,
    Entry,
    FillName,
    FitResult,
    FormName,
    NamespaceInfo,
    PutItem,
    ReembedProgress,
    Stats,
    StrategyName,
)
from .v1 import sharedctx_pb2 as pb

R = TypeVar("R")


@dataclass(frozen=True)
class Unary(Generic[R]):
    """One request with one reply."""

    rpc: str  # the stub's method, e.g. "Get"
    request: Message
    # Retried with backoff on UNAVAILABLE when true: reads and unconditional deletes. Writes are
    # not, because a lost reply would turn a retry into a second write.
    idempotent: bool
    reply: Callable[[Any], R]
    timeout: float | None = None  # None: the client's default (per entry for a batch)
    entries: int = 1  # the entries a write carries


@dataclass(frozen=True)
class Stream(Generic[R]):
    """One request with a stream of replies (never retried: the caller resumes with a token)."""

    rpc: str
    request: Message
    reply: Callable[[Any], R]
    # A reply's resume token, for streams a caller can resume (watch); None: not resumable.
    resume_token: Callable[[R], str] | None = None


def put(
    namespace: str,
    key: str,
    content: str,
    *,
    ttl_seconds: int = 0,
    compressed: str | None = None,
    kind: str | None = None,
    role: str = "",
    agent_id: str = "",
    tool_name: str = "",
    tags: tuple[str, ...] = (),
    importance: float | None = None,
    event_time: datetime | float | None = None,
    thread: str = "",
    if_version: int | None = None,
    embed: str | None = None,
    timeout: float | None = None,
) -> Unary[Entry]:
    """Store one entry (create or overwrite). The options are PutItem's fields.

    ttl_seconds: seconds until it expires, >= 0; 0: the server's default TTL.
    compressed: a compressed form of your own; it wins over the one the server would make.
    kind: "message", "tool_output", "log", "document" or "note"; None: unspecified.
    role: the author's role, for messages ("user", "assistant", ...).
    agent_id: the agent that writes it.
    tool_name: the tool that produced it.
    tags: free-form labels (Fit can filter on them).
    importance: how much it matters, in [0, 1]; None: no annotation (scores as 0).
    event_time: when it happened (datetime, naive = UTC, or epoch seconds); None: now.
    thread: the conversation or task inside the namespace; "": the namespace's default thread.
    if_version: write only if the current version is this (0: only if absent); None: always.
    embed: "sync" (None): Fit-ready on return; "async": returns sooner, the embedding follows.
    timeout: deadline in seconds; None: the client's default.
    """
    item = PutItem(
        key=key,
        content=content,
        ttl_seconds=ttl_seconds,
        compressed=compressed,
        kind=kind,
        role=role,
        agent_id=agent_id,
        tool_name=tool_name,
        tags=tags,
        importance=importance,
        event_time=event_time,
        thread=thread,
        if_version=if_version,
        embed=embed,
    )
    req = wire.put_request(item, namespace)
    return Unary("Put", req, False, lambda r: wire.entry(r.entry), timeout)


def put_many(
    namespace: str, items: Iterable[PutItem | dict[str, Any]], *, timeout: float | None = None
) -> Unary[list[Entry]]:
    """Store several entries atomically (all or none)."""
    req = wire.put_many_request(namespace, items)
    return Unary(
        "PutMany", req, False, lambda r: [wire.entry(e) for e in r.entries], timeout,
        len(req.entries),
    )  # fmt: skip


def get(
    namespace: str, key: str, *, full: bool = False, timeout: float | None = None
) -> Unary[Entry]:
    """One entry: the compressed form, or the original with full=True."""
    req = pb.GetRequest(namespace=namespace, key=key, full=full)
    return Unary("Get", req, True, lambda r: wire.entry(r.entry), timeout)


def get_many(
    namespace: str, keys: Sequence[str], *, full: bool = False, timeout: float | None = None
) -> Unary[dict[str, Entry]]:
    """The entries found, by key (absent or expired keys are left out)."""
    req = pb.GetManyRequest(namespace=namespace, keys=wire.str_list("keys", keys), full=full)
    return Unary("GetMany", req, True, lambda r: {e.key: wire.entry(e) for e in r.entries}, timeout)


def keys_page(
    namespace: str,
    prefix: str = "",
    *,
    page_size: int = 0,
    page_token: str = "",
    timeout: float | None = None,
) -> Unary[tuple[list[str], str]]:
    """One page of the live keys with `prefix`, in byte order, and the token that fetches the
    next ("" after the last): for a caller that pages on later (an MCP tool's cursor)."""
    req = pb.KeysRequest(
        namespace=namespace, prefix=prefix, page_size=page_size, page_token=page_token
    )
    return Unary("Keys", req, True, lambda r: (list(r.keys), r.next_page_token), timeout)


def namespaces_page(
    prefix: str, page_size: int, page_token: str, timeout: float | None
) -> Unary[tuple[list[NamespaceInfo], str]]:
    """One page of the namespaces with live entries and `prefix`, and the next page's token."""
    req = pb.NamespacesRequest(prefix=prefix, page_size=page_size, page_token=page_token)

    def reply(r: pb.NamespacesResponse) -> tuple[list[NamespaceInfo], str]:
        return [wire.namespace_info(n) for n in r.namespaces], r.next_page_token

    return Unary("Namespaces", req, True, reply, timeout)


def delete(
    namespace: str, key: str, *, if_version: int | None = None, timeout: float | None = None
) -> Unary[bool]:
    """Remove an entry; True if a live one went."""
    req = wire.delete_request(namespace, key, if_version)
    # Unconditional deletes are idempotent; a compare-and-set one is a write like any other.
    return Unary("Delete", req, if_version is None, lambda r: bool(r.deleted), timeout)


def touch(
    namespace: str, keys: Sequence[str], *, timeout: float | None = None
) -> Unary[dict[str, datetime | None]]:
    """Restart the TTL of each entry that has one, without rewriting it; returns the live
    entries' expiry times by key (None: never expires; absent or expired keys are left out)."""
    req = pb.TouchRequest(namespace=namespace, keys=wire.str_list("keys", keys))
    # Safe to retry: a second touch restarts the same TTLs from a moment later.
    return Unary("Touch", req, True, wire.touched, timeout)


def stats(namespace: str, *, timeout: float | None = None) -> Unary[Stats]:
    """Totals over the namespace's live entries."""
    return Unary("Stats", pb.StatsRequest(namespace=namespace), True, wire.stats, timeout)


def clear(namespace: str, *, timeout: float | None = None) -> Unary[int]:
    """Remove every entry of the namespace; returns how many were live."""
    req = pb.ClearRequest(namespace=namespace)
    return Unary("Clear", req, False, lambda r: int(r.deleted), timeout)


def fit(
    namespace: str,
    query: str,
    budget_tokens: int,
    *,
    strategy: StrategyName | None = None,
    preset: str | None = None,
    weights: Mapping[str, float] | None = None,
    recency_decay_rate: float | None = None,
    keep_recent: int | None = None,
    max_entries: int | None = None,
    adaptive: AdaptiveName | None = None,
    form: FormName | None = None,
    compress_threshold: int | None = None,
    fill: FillName | None = None,
    filters: Mapping[str, Iterable[str]] | None = None,
    min_score: float | None = None,
    include_content: bool = False,
    explain: bool = False,
    expand_neighbours: bool | None = None,
    excerpts: bool | None = None,
    timeout: float | None = None,
) -> Unary[FitResult]:
    """The entries that best fill `budget_tokens` (> 0) for `query`, in chronological order.
    The options are FitRequest's fields (docs/fit.md); None leaves one to the server's default.

    strategy: "scored" (default: seven weighted factors), "relevant" or "recent" (whole turns).
    preset: the weights to start from: "default" (None) or "headroom".
    weights: overrides of the preset's by factor, 0 switching one off: recency, semantic_similarity,
        toin_importance, error_indicator, forward_reference, token_density, lexical_relevance.
    recency_decay_rate: per second, in exp(-age * rate), >= 0; default 0.0001.
    keep_recent: the newest N entries (scored) or turns (relevant) go in first; default 2.
    max_entries: most entries returned; default no cap.
    adaptive: "none" (default), "conservative", "moderate", "aggressive": sizer cap (scored).
    form: "compressed" (default), "full" or "auto": the form counted and returned.
    compress_threshold: "auto" gives full forms while the total stays at most this; default budget.
    fill: "skip" (default) passes over an entry that does not fit, "stop" ends there (scored).
    filters: lists by {include,exclude}_{kinds,tags,agent_ids} or threads (kinds as in put).
    min_score: entries scoring below it never go in (scored); default 0.
    include_content: return each chosen entry's text, in its form.
    explain: return every candidate's factors, score and the reason it was left out.
    expand_neighbours: entries next to a strong match in its thread gain (scored); default on.
    excerpts: an entry too large may come back as the lines that answer it; default on.
    timeout: deadline in seconds; None: the client's default.
    """
    # One line per FitRequest field, in the proto's order (tests/test_client_api.py checks that
    # every field but the first three is an option here and reaches the request). A field given
    # None is left unset, which the server reads as its default.
    req = pb.FitRequest(
        namespace=namespace,
        query=query,
        budget_tokens=budget_tokens,
        strategy=wire.fit_enum(pb.Strategy, "STRATEGY", strategy),
        preset=preset or "",
        weights=wire.fit_weights(weights),
        recency_decay_rate=recency_decay_rate,
        keep_recent=keep_recent,
        max_entries=max_entries,
        adaptive=wire.fit_enum(pb.Adaptive, "ADAPTIVE", adaptive),
        form=wire.fit_enum(pb.Form, "FORM", form),
        compress_threshold=compress_threshold,
        fill=wire.fit_enum(pb.Fill, "FILL", fill),
        filters=wire.fit_filters(filters),
        min_score=min_score,
        include_content=include_content,
        explain=explain,
        expand_neighbours=expand_neighbours,
        excerpts=excerpts,
    )
    return Unary("Fit", req, True, wire.fit_result, timeout)


def watch(
    namespace: str, resume_token: str = "", *, include_touches: bool = False
) -> Stream[Change]:
    """Changes of the namespace as they happen; resume after a Change.resume_token. TTL
    restarts (op "touch") only with include_touches. The stream's started() waits until the
    watch has begun (every later change is in it); its resume_token is where to continue
    without missing a change, also when it breaks before the first one."""
    req = pb.WatchRequest(
        namespace=namespace, resume_token=resume_token, include_touches=include_touches
    )
    return Stream("Watch", req, wire.change, lambda change: change.resume_token)


def reembed(namespace: str, *, force: bool = False) -> Stream[ReembedProgress]:
    """Recompute the namespace's embeddings with the server's model, reporting progress."""
    req = pb.ReembedRequest(namespace=namespace, force=force)
    return Stream("Reembed", req, wire.reembed_progress)
