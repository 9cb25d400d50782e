"""Every call of the SharedContext service, defined once for both clients: the request it
sends, whether a retry is safe, and how its reply becomes a typed value.

client.py makes each definition a method of `Client` (blocking) and `AsyncClient` (asyncio),
which differ only in how they carry a call (deadline, metadata, retries, typed errors). A
definition's signature, defaults and docstring are the method's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message

from . import wire
from .types import Change, Entry, FitResult, NamespaceInfo, PutItem, ReembedProgress, Stats
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
    timeout: float | None = None  # None: the client's default


@dataclass(frozen=True)
class Stream(Generic[R]):
    """One request with a stream of replies (never retried: the caller resumes with a token)."""

    rpc: str
    request: Message
    reply: Callable[[Any], R]


def put(
    namespace: str, key: str, content: str, *, timeout: float | None = None, **fields: Any
) -> Unary[Entry]:
    """Store one entry; fields as in PutItem (ttl_seconds, compressed, kind, if_version...)."""
    req = wire.put_request(PutItem(key=key, content=content, **fields), namespace)
    return Unary("Put", req, False, lambda r: wire.entry(r.entry), timeout)


def put_many(
    namespace: str, items: Iterable[PutItem | dict[str, Any]], *, timeout: float | None = None
) -> Unary[list[Entry]]:
    """Store several entries atomically (all or none)."""
    req = wire.put_many_request(namespace, items)
    return Unary("PutMany", req, False, lambda r: [wire.entry(e) for e in r.entries], timeout)


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
    req = pb.GetManyRequest(namespace=namespace, keys=list(keys), full=full)
    return Unary("GetMany", req, True, lambda r: {e.key: wire.entry(e) for e in r.entries}, timeout)


def keys_page(
    namespace: str, prefix: str, page_size: int, page_token: str, timeout: float | None
) -> Unary[tuple[list[str], str]]:
    """One page of the keys with `prefix`, and the token of the next ("" after the last)."""
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
    req = pb.TouchRequest(namespace=namespace, keys=list(keys))
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
    timeout: float | None = None,
    **options: Any,
) -> Unary[FitResult]:
    """The entries that best fill `budget_tokens` for `query` (options as in FitRequest)."""
    req = wire.fit_request(namespace, query, budget_tokens, **options)
    return Unary("Fit", req, True, wire.fit_result, timeout)


def watch(
    namespace: str, resume_token: str = "", *, include_touches: bool = False
) -> Stream[Change]:
    """Changes of the namespace as they happen; resume after a Change.resume_token. TTL
    restarts (op "touch") only with include_touches."""
    req = pb.WatchRequest(
        namespace=namespace, resume_token=resume_token, include_touches=include_touches
    )
    return Stream("Watch", req, wire.change)


def reembed(namespace: str, *, force: bool = False) -> Stream[ReembedProgress]:
    """Recompute the namespace's embeddings with the server's model, reporting progress."""
    req = pb.ReembedRequest(namespace=namespace, force=force)
    return Stream("Reembed", req, wire.reembed_progress)
