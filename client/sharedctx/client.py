"""`Client` (blocking) and `AsyncClient` (asyncio) for the SharedContext service.

Both build the same requests (in `_Requests`) and differ only in how they call. Idempotent calls
(get, get_many, keys, stats, unconditional delete) are retried with backoff on UNAVAILABLE;
writes are not, because a lost reply would turn a retry into a second write.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import grpc

from .errors import from_rpc_error
from .types import Change, Entry, FitResult, PutItem, ReembedProgress, Stats, fit_request
from .v1 import sharedctx_pb2 as pb
from .v1 import sharedctx_pb2_grpc as pb_grpc

T = TypeVar("T")
DEFAULT_TARGET = "127.0.0.1:50051"
_RETRYABLE = (grpc.StatusCode.UNAVAILABLE,)
_MAX_MESSAGE = 64 * 1024 * 1024


def _channel_options(extra: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [
        ("grpc.max_receive_message_length", _MAX_MESSAGE),
        ("grpc.max_send_message_length", _MAX_MESSAGE),
        # Keep long-lived connections alive through idle NATs and load balancers.
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        *extra,
    ]


def _auth_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying the bearer token, if any."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def _backoff(attempt: int) -> float:
    return float(min(2.0, 0.05 * (2**attempt)) * (0.5 + random.random() / 2))


class _Requests:
    """Request builders shared by both clients."""

    @staticmethod
    def put(namespace: str, key: str, content: str, **fields: Any) -> pb.PutRequest:
        return PutItem(key=key, content=content, **fields).to_proto(namespace)

    @staticmethod
    def put_many(namespace: str, items: Iterable[PutItem | dict[str, Any]]) -> pb.PutManyRequest:
        entries = [(i if isinstance(i, PutItem) else PutItem(**i)).to_proto() for i in items]
        return pb.PutManyRequest(namespace=namespace, entries=entries)

    @staticmethod
    def delete(namespace: str, key: str, if_version: int | None) -> pb.DeleteRequest:
        req = pb.DeleteRequest(namespace=namespace, key=key)
        if if_version is not None:
            req.if_version = if_version
        return req


class _Connection:
    """What both clients hold: a channel from `_api` (the `grpc` module, or `grpc.aio`, which
    have the same two channel constructors), its stub, and the per-call defaults."""

    _api: Any

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        opts = _channel_options(options)
        self._channel = (
            self._api.secure_channel(target, credentials, opts)
            if credentials is not None
            else self._api.insecure_channel(target, opts)
        )
        self._stub = pb_grpc.SharedContextStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout, self._retries, self._metadata = timeout, retries, _auth_metadata(token)


class Client(_Connection):
    """Blocking client. Use as a context manager, or call close().

    Client(target="127.0.0.1:50051", *, timeout=10.0, retries=3, token=None,
    credentials=None, options=()): `retries` with backoff on UNAVAILABLE, idempotent calls only.
    """

    _api = grpc

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def _call(
        self, method: Callable[..., T], request: Any, timeout: float | None, idempotent: bool
    ) -> T:
        attempts = self._retries + 1 if idempotent else 1
        for attempt in range(attempts):
            try:
                return method(request, timeout=timeout or self._timeout, metadata=self._metadata)
            except grpc.RpcError as exc:
                if attempt + 1 < attempts and exc.code() in _RETRYABLE:
                    time.sleep(_backoff(attempt))
                    continue
                raise from_rpc_error(exc) from None
        raise AssertionError("unreachable")

    def put(
        self,
        namespace: str,
        key: str,
        content: str,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> Entry:
        """Store one entry; fields as in PutItem (ttl_seconds, compressed, kind, if_version...)."""
        reply = self._call(
            self._stub.Put, _Requests.put(namespace, key, content, **fields), timeout, False
        )
        return Entry.from_proto(reply.entry)

    def put_many(
        self,
        namespace: str,
        items: Iterable[PutItem | dict[str, Any]],
        *,
        timeout: float | None = None,
    ) -> list[Entry]:
        """Store several entries atomically (all or none)."""
        reply = self._call(self._stub.PutMany, _Requests.put_many(namespace, items), timeout, False)
        return [Entry.from_proto(e) for e in reply.entries]

    def get(
        self, namespace: str, key: str, *, full: bool = False, timeout: float | None = None
    ) -> Entry:
        """One entry: the compressed form, or the original with full=True."""
        req = pb.GetRequest(namespace=namespace, key=key, full=full)
        return Entry.from_proto(self._call(self._stub.Get, req, timeout, True).entry)

    def get_many(
        self,
        namespace: str,
        keys: Sequence[str],
        *,
        full: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Entry]:
        """The entries found, by key (absent or expired keys are left out)."""
        req = pb.GetManyRequest(namespace=namespace, keys=list(keys), full=full)
        reply = self._call(self._stub.GetMany, req, timeout, True)
        return {e.key: Entry.from_proto(e) for e in reply.entries}

    def keys(
        self,
        namespace: str,
        prefix: str = "",
        *,
        page_size: int = 0,
        timeout: float | None = None,
    ) -> Iterator[str]:
        """Every live key with `prefix`, fetched page by page."""
        token = ""
        while True:
            req = pb.KeysRequest(
                namespace=namespace, prefix=prefix, page_size=page_size, page_token=token
            )
            reply = self._call(self._stub.Keys, req, timeout, True)
            yield from reply.keys
            token = reply.next_page_token
            if not token:
                return

    def delete(
        self,
        namespace: str,
        key: str,
        *,
        if_version: int | None = None,
        timeout: float | None = None,
    ) -> bool:
        """Remove an entry; True if a live one went."""
        req = _Requests.delete(namespace, key, if_version)
        return bool(self._call(self._stub.Delete, req, timeout, if_version is None).deleted)

    def stats(self, namespace: str, *, timeout: float | None = None) -> Stats:
        """Totals over the namespace's live entries."""
        req = pb.StatsRequest(namespace=namespace)
        return Stats.from_proto(self._call(self._stub.Stats, req, timeout, True))

    def clear(self, namespace: str, *, timeout: float | None = None) -> int:
        """Remove every entry of the namespace; returns how many were live."""
        req = pb.ClearRequest(namespace=namespace)
        return int(self._call(self._stub.Clear, req, timeout, False).deleted)

    def fit(
        self,
        namespace: str,
        query: str,
        budget_tokens: int,
        *,
        timeout: float | None = None,
        **options: Any,
    ) -> FitResult:
        """The entries that best fill `budget_tokens` for `query` (options as in FitRequest)."""
        req = fit_request(namespace, query, budget_tokens, **options)
        return FitResult.from_proto(self._call(self._stub.Fit, req, timeout, True))

    def watch(self, namespace: str, resume_token: str = "") -> Iterator[Change]:
        """Changes of the namespace as they happen; resume after a Change.resume_token."""
        req = pb.WatchRequest(namespace=namespace, resume_token=resume_token)
        try:
            for event in self._stub.Watch(req, metadata=self._metadata):
                yield Change.from_proto(event)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None

    def reembed(self, namespace: str, *, force: bool = False) -> Iterator[ReembedProgress]:
        """Recompute the namespace's embeddings with the server's model, reporting progress."""
        req = pb.ReembedRequest(namespace=namespace, force=force)
        try:
            for step in self._stub.Reembed(req, metadata=self._metadata):
                yield ReembedProgress(step.done, step.total, step.computed)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None


class AsyncClient(_Connection):
    """asyncio client (same arguments as Client). Use as an async context manager, or await
    close()."""

    _api = grpc.aio

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel."""
        await self._channel.close()

    async def _call(
        self, method: Callable[..., Any], request: Any, timeout: float | None, idempotent: bool
    ) -> Any:
        attempts = self._retries + 1 if idempotent else 1
        for attempt in range(attempts):
            try:
                return await method(
                    request, timeout=timeout or self._timeout, metadata=self._metadata
                )
            except grpc.RpcError as exc:
                if attempt + 1 < attempts and exc.code() in _RETRYABLE:
                    await asyncio.sleep(_backoff(attempt))
                    continue
                raise from_rpc_error(exc) from None
        raise AssertionError("unreachable")

    async def put(
        self,
        namespace: str,
        key: str,
        content: str,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> Entry:
        """Store one entry; fields as in PutItem (ttl_seconds, compressed, kind, if_version...)."""
        req = _Requests.put(namespace, key, content, **fields)
        return Entry.from_proto((await self._call(self._stub.Put, req, timeout, False)).entry)

    async def put_many(
        self,
        namespace: str,
        items: Iterable[PutItem | dict[str, Any]],
        *,
        timeout: float | None = None,
    ) -> list[Entry]:
        """Store several entries atomically (all or none)."""
        req = _Requests.put_many(namespace, items)
        reply = await self._call(self._stub.PutMany, req, timeout, False)
        return [Entry.from_proto(e) for e in reply.entries]

    async def get(
        self, namespace: str, key: str, *, full: bool = False, timeout: float | None = None
    ) -> Entry:
        """One entry: the compressed form, or the original with full=True."""
        req = pb.GetRequest(namespace=namespace, key=key, full=full)
        return Entry.from_proto((await self._call(self._stub.Get, req, timeout, True)).entry)

    async def get_many(
        self,
        namespace: str,
        keys: Sequence[str],
        *,
        full: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Entry]:
        """The entries found, by key (absent or expired keys are left out)."""
        req = pb.GetManyRequest(namespace=namespace, keys=list(keys), full=full)
        reply = await self._call(self._stub.GetMany, req, timeout, True)
        return {e.key: Entry.from_proto(e) for e in reply.entries}

    async def keys(
        self,
        namespace: str,
        prefix: str = "",
        *,
        page_size: int = 0,
        timeout: float | None = None,
    ) -> AsyncIterator[str]:
        """Every live key with `prefix`, fetched page by page."""
        token = ""
        while True:
            req = pb.KeysRequest(
                namespace=namespace, prefix=prefix, page_size=page_size, page_token=token
            )
            reply = await self._call(self._stub.Keys, req, timeout, True)
            for key in reply.keys:
                yield key
            token = reply.next_page_token
            if not token:
                return

    async def delete(
        self,
        namespace: str,
        key: str,
        *,
        if_version: int | None = None,
        timeout: float | None = None,
    ) -> bool:
        """Remove an entry; True if a live one went."""
        req = _Requests.delete(namespace, key, if_version)
        return bool((await self._call(self._stub.Delete, req, timeout, if_version is None)).deleted)

    async def stats(self, namespace: str, *, timeout: float | None = None) -> Stats:
        """Totals over the namespace's live entries."""
        req = pb.StatsRequest(namespace=namespace)
        return Stats.from_proto(await self._call(self._stub.Stats, req, timeout, True))

    async def clear(self, namespace: str, *, timeout: float | None = None) -> int:
        """Remove every entry of the namespace; returns how many were live."""
        req = pb.ClearRequest(namespace=namespace)
        return int((await self._call(self._stub.Clear, req, timeout, False)).deleted)

    async def fit(
        self,
        namespace: str,
        query: str,
        budget_tokens: int,
        *,
        timeout: float | None = None,
        **options: Any,
    ) -> FitResult:
        """The entries that best fill `budget_tokens` for `query` (options as in FitRequest)."""
        req = fit_request(namespace, query, budget_tokens, **options)
        return FitResult.from_proto(await self._call(self._stub.Fit, req, timeout, True))

    async def watch(self, namespace: str, resume_token: str = "") -> AsyncIterator[Change]:
        """Changes of the namespace as they happen; resume after a Change.resume_token."""
        req = pb.WatchRequest(namespace=namespace, resume_token=resume_token)
        try:
            async for event in self._stub.Watch(req, metadata=self._metadata):
                yield Change.from_proto(event)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None

    async def reembed(
        self, namespace: str, *, force: bool = False
    ) -> AsyncIterator[ReembedProgress]:
        """Recompute the namespace's embeddings with the server's model, reporting progress."""
        req = pb.ReembedRequest(namespace=namespace, force=force)
        try:
            async for step in self._stub.Reembed(req, metadata=self._metadata):
                yield ReembedProgress(step.done, step.total, step.computed)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None


__all__ = ["AsyncClient", "Client"]
