"""One Redis connection shared by every concurrent read: commands are written as they come and
replies matched to them in order (Redis answers one connection's commands in the order it
received them). Used for the hot read path, where a pooled redis-py call (check a connection
out, run it through retry and observability hooks, read under a timer, check it back in) cost
more server CPU than the rest of a Get; written together, concurrent reads also cost Redis
fewer reads and writes. See docs/performance.md.

Failure behaves as the pooled client's: a lost connection fails every command in flight with
redis.exceptions.ConnectionError (the store turns it into UNAVAILABLE) and the next command
connects again; when a command stays unanswered for `timeout` seconds, every command in flight
fails with TimeoutError and the connection is dropped, since Redis is then hung or the replies
out of step. A caller that goes away (its RPC cancelled) leaves its reply to be read and
discarded, so the order holds.

Only single Redis servers (redis:// and rediss:// URLs, with user, password and db); a Redis
Cluster routes by slot, which redis-py's cluster client does.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from functools import partial
from typing import Any
from urllib.parse import unquote, urlsplit

import hiredis
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    ClusterDownError,
    MasterDownError,
    NoScriptError,
    ReadOnlyError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError


class _Protocol(asyncio.Protocol):
    """The connection: writes commands, parses replies and hands each to its waiter in order.

    Commands sent in one turn of the event loop go out in one write (one system call rather
    than one per caller), and one timer watches the oldest unanswered command rather than
    one timer per command: replies come in order, so if the oldest is answered in time, the
    connection is alive.
    """

    def __init__(self, timeout: float) -> None:
        self._reader = hiredis.Reader(replyError=ResponseError)
        # Each command in flight: its waiter and when it was sent (the event loop's clock).
        self._waiting: collections.deque[tuple[asyncio.Future[Any], float]] = collections.deque()
        self._unsent: list[bytes] = []
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()
        self._timeout = timeout
        self._watchdog: asyncio.TimerHandle | None = None
        self.lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def send(self, packed: bytes) -> asyncio.Future[Any]:
        """Queue one packed command for this turn's write; the future gets its reply."""
        if self.lost is not None or self._transport is None:
            raise RedisConnectionError("Redis connection lost")
        waiter = self._loop.create_future()
        self._waiting.append((waiter, self._loop.time()))
        if not self._unsent:
            self._loop.call_soon(self._flush)
        self._unsent.append(packed)
        if self._watchdog is None:
            self._watchdog = self._loop.call_later(self._timeout, self._check)
        return waiter

    def _flush(self) -> None:
        if self._transport is not None and self.lost is None:
            self._transport.write(b"".join(self._unsent))
        self._unsent.clear()

    def _check(self) -> None:
        """The watchdog: fail the connection if its oldest command is overdue."""
        self._watchdog = None
        if not self._waiting:
            return
        due = self._waiting[0][1] + self._timeout
        if self._loop.time() >= due:
            self.close(RedisTimeoutError(f"Redis did not answer within {self._timeout} s"))
        else:
            self._watchdog = self._loop.call_at(due, self._check)

    def data_received(self, data: bytes) -> None:
        self._reader.feed(data)
        try:
            while (reply := self._reader.gets()) is not False:
                waiter = self._waiting.popleft()[0]
                if waiter.done():
                    continue  # its caller went away; the reply is read and dropped
                if isinstance(reply, ResponseError):
                    waiter.set_exception(_typed(reply))
                else:
                    waiter.set_result(reply)
        except (hiredis.ProtocolError, IndexError) as exc:
            # Garbage or a reply nobody asked for: nothing after it can be trusted.
            self.close(RedisConnectionError(f"Redis protocol error: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"Redis connection lost: {exc or 'closed by server'}"))

    def close(self, reason: Exception) -> None:
        """Drop the connection, failing every command in flight with `reason`."""
        self._fail(reason)
        if self._transport is not None:
            self._transport.abort()

    def _fail(self, reason: Exception) -> None:
        if self.lost is None:
            self.lost = reason
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        while self._waiting:
            waiter = self._waiting.popleft()[0]
            if not waiter.done():
                waiter.set_exception(reason)


def _pack(args: tuple[Any, ...]) -> bytes:
    """A command in Redis's wire format."""
    packed: bytes = hiredis.pack_command(args)
    return packed


# Error replies the store tells apart, as redis-py's own parser types them: a script Redis
# lost, and the passing states of a Redis that is starting (LOADING: replaying its append-only
# file after a restart), failing over or resharding. Untyped, a LOADING reply during a
# restart failed calls with INTERNAL instead of UNAVAILABLE.
_TYPED: dict[str, type[Exception]] = {
    "NOSCRIPT": NoScriptError,
    "LOADING": BusyLoadingError,
    "READONLY": ReadOnlyError,
    "MASTERDOWN": MasterDownError,
    "CLUSTERDOWN": ClusterDownError,
    "TRYAGAIN": TryAgainError,
}


def _typed(error: ResponseError) -> Exception:
    """redis-py's class for an error reply the store tells apart (see _TYPED)."""
    typed = _TYPED.get(str(error).split(" ", 1)[0])
    return typed(str(error)) if typed is not None else error


class MultiplexedRedis:
    """Commands over one shared connection, made on first use and again after a failure."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        username: str | None = None,
        password: str | None = None,
        db: int = 0,
        tls: ssl.SSLContext | None = None,
        timeout: float = 5.0,
        connect_timeout: float = 2.0,
    ) -> None:
        self._address = (host, port)
        self._username = username
        self._password = password
        self._db = db
        self._tls = tls
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._protocol: _Protocol | None = None
        self._connecting: asyncio.Lock | None = None

    @classmethod
    def from_url(cls, url: str, timeout: float, connect_timeout: float) -> MultiplexedRedis | None:
        """A client for a single server's URL, or None for a URL it does not handle (a unix
        socket, a cluster): the caller keeps its pooled client for those."""
        parts = urlsplit(url)
        if parts.scheme not in ("redis", "rediss") or not parts.hostname or parts.query:
            return None  # options in the query (TLS files, timeouts) are redis-py's to apply
        db = parts.path.lstrip("/")
        if db and not db.isdigit():
            return None
        return cls(
            parts.hostname,
            parts.port or 6379,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            db=int(db or 0),
            tls=ssl.create_default_context() if parts.scheme == "rediss" else None,
            timeout=timeout,
            connect_timeout=connect_timeout,
        )

    async def execute(self, *args: Any) -> Any:
        """Run one command; its reply as hiredis parses it (bytes, ints, lists, None)."""
        protocol = self._protocol
        if protocol is None or protocol.lost is not None:
            protocol = await self._connect()
        return await protocol.send(_pack(args))

    # The calls of redis-py's client that the store's reads make, with the same signatures.

    async def hmget(self, name: str, *fields: str) -> list[Any]:
        """HMGET: the fields' values (None where absent)."""
        return await self.execute("HMGET", name, *fields)  # type: ignore[no-any-return]

    async def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:
        """EVALSHA (NoScriptError when Redis does not know the script)."""
        return await self.execute("EVALSHA", sha, numkeys, *keys_and_args)

    async def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any:
        """EVAL."""
        return await self.execute("EVAL", script, numkeys, *keys_and_args)

    async def _connect(self) -> _Protocol:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:  # one connection, however many callers find none
            if self._protocol is not None and self._protocol.lost is None:
                return self._protocol
            loop = asyncio.get_running_loop()
            host, port = self._address
            protocol = None
            try:
                async with asyncio.timeout(self._connect_timeout):
                    _, protocol = await loop.create_connection(
                        partial(_Protocol, self._timeout), host, port, ssl=self._tls
                    )
                    await self._hello(protocol)
            except (OSError, TimeoutError, RedisConnectionError) as exc:
                if protocol is not None:
                    protocol.close(RedisConnectionError("connection attempt failed"))
                raise RedisConnectionError(
                    f"Error connecting to {host}:{port}: {exc or 'timed out'}"
                ) from exc
            except ResponseError as exc:  # AUTH or SELECT refused
                assert protocol is not None
                protocol.close(RedisConnectionError("connection attempt failed"))
                raise AuthenticationError(f"Redis at {host}:{port} refused: {exc}") from exc
            self._protocol = protocol
            return protocol

    async def _hello(self, protocol: _Protocol) -> None:
        """Authenticate and select the database, as the URL says."""
        if self._password is not None:
            auth = (self._username, self._password) if self._username else (self._password,)
            await protocol.send(_pack(("AUTH", *auth)))
        if self._db:
            await protocol.send(_pack(("SELECT", self._db)))

    async def aclose(self) -> None:
        """Close the connection (commands in flight fail)."""
        if self._protocol is not None:
            self._protocol.close(RedisConnectionError("Redis client closed"))
            self._protocol = None
