"""The multiplexed read connection on a real Redis: replies reach their callers in order under
concurrency, errors and cancellation; a lost, hung or refusing server fails cleanly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest
import redis
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    MasterDownError,
    NoScriptError,
    ReadOnlyError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sharedctx_server.errors import StoreUnavailable
from sharedctx_server.state.embedded import free_port
from sharedctx_server.state.multiplex import MultiplexedRedis
from sharedctx_server.state.redis_conn import RedisErrors


@pytest.fixture
async def mux(clean_redis: str) -> AsyncIterator[MultiplexedRedis]:
    client = MultiplexedRedis.from_url(clean_redis, timeout=5.0, connect_timeout=2.0)
    assert client is not None
    yield client
    await client.aclose()


async def test_concurrent_commands_each_get_their_own_reply(mux: MultiplexedRedis) -> None:
    await asyncio.gather(*(mux.execute("SET", f"k{i}", f"v{i}" * (i % 50 + 1)) for i in range(300)))
    replies = await asyncio.gather(*(mux.execute("GET", f"k{i}") for i in range(300)))
    assert replies == [f"v{i}".encode() * (i % 50 + 1) for i in range(300)]


async def test_an_error_reply_fails_its_caller_only(mux: MultiplexedRedis) -> None:
    await mux.execute("SET", "text", "x")
    results = await asyncio.gather(
        mux.hmget("text", "a"), mux.execute("GET", "text"), return_exceptions=True
    )
    assert isinstance(results[0], ResponseError) and "WRONGTYPE" in str(results[0])
    assert results[1] == b"x"
    with pytest.raises(NoScriptError):
        await mux.evalsha("0" * 40, 0)
    assert await mux.eval("return ARGV[1]", 0, "still in step") == b"still in step"


async def test_a_cancelled_caller_leaves_the_replies_in_step(mux: MultiplexedRedis) -> None:
    await mux.execute("SET", "after", "mine")
    # Redis answers this connection in order: the GET's reply comes after BLPOP's, which
    # nobody waits for any more once its caller is cancelled.
    blocked = asyncio.create_task(mux.execute("BLPOP", "empty-list", "0.3"))
    await asyncio.sleep(0.05)
    blocked.cancel()
    assert await mux.execute("GET", "after") == b"mine"
    with pytest.raises(asyncio.CancelledError):
        await blocked


async def test_a_killed_connection_fails_what_is_in_flight_and_reconnects(
    mux: MultiplexedRedis, clean_redis: str
) -> None:
    own_id = await mux.execute("CLIENT", "ID")
    waiting = asyncio.create_task(mux.execute("BLPOP", "empty-list", "5"))
    await asyncio.sleep(0.05)
    admin = redis.Redis.from_url(clean_redis)
    admin.client_kill_filter(_id=own_id)
    admin.close()
    with pytest.raises(RedisConnectionError):
        await asyncio.wait_for(waiting, 2)
    assert await mux.execute("CLIENT", "ID") != own_id  # a new connection


async def test_no_server_is_a_connection_error_naming_the_address() -> None:
    port = free_port()  # nothing listens there
    client = MultiplexedRedis("127.0.0.1", port, timeout=1.0, connect_timeout=1.0)
    with pytest.raises(RedisConnectionError, match=f"127.0.0.1:{port}"):
        await client.execute("PING")


async def test_a_hung_server_times_out_and_the_next_command_connects_again() -> None:
    accepted: list[asyncio.StreamWriter] = []

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = MultiplexedRedis("127.0.0.1", port, timeout=0.2, connect_timeout=1.0)
    try:
        with pytest.raises(RedisTimeoutError, match="did not answer within 0.2 s"):
            await client.execute("PING")
        with pytest.raises(RedisTimeoutError):
            await client.execute("PING")
        assert len(accepted) == 2  # the timed-out connection was dropped, not reused
    finally:
        await client.aclose()
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_user_password_and_database_come_from_the_url(clean_redis: str) -> None:
    admin = redis.Redis.from_url(clean_redis)
    admin.acl_setuser(
        "mux-reader", enabled=True, passwords=["+s3cret"], keys=["*"], commands=["+@all"]
    )
    host_port = urlsplit(clean_redis).netloc.rpartition("@")[2]
    try:
        client = MultiplexedRedis.from_url(
            f"redis://mux-reader:s3cret@{host_port}/3", timeout=5.0, connect_timeout=2.0
        )
        assert client is not None
        await client.execute("SET", "in-db-3", "yes")
        await client.aclose()
        assert redis.Redis.from_url(clean_redis.rsplit("/", 1)[0] + "/3").get("in-db-3") == b"yes"
        wrong = MultiplexedRedis.from_url(
            f"redis://mux-reader:wrong@{host_port}/0", timeout=5.0, connect_timeout=2.0
        )
        assert wrong is not None
        with pytest.raises(AuthenticationError, match="refused"):
            await wrong.execute("PING")
    finally:
        admin.acl_deluser("mux-reader")
        redis.Redis.from_url(clean_redis.rsplit("/", 1)[0] + "/3").flushdb()
        admin.close()


def test_urls_it_leaves_to_the_pooled_client() -> None:
    for url in (
        "unix:///run/redis.sock",
        "redis://host:6379/0?ssl_cert_reqs=none",
        "redis+cluster://host:7000",
        "redis://host/not-a-db",
    ):
        assert MultiplexedRedis.from_url(url, 1.0, 1.0) is None, url
    assert MultiplexedRedis.from_url("rediss://u:p%40ss@host", 1.0, 1.0) is not None


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("LOADING Valkey is loading the dataset in memory", BusyLoadingError),
        ("READONLY You can't write against a read only replica.", ReadOnlyError),
        ("MASTERDOWN Link with MASTER is down", MasterDownError),
    ],
)
async def test_a_redis_in_a_passing_state_answers_with_a_typed_error_the_store_calls_unavailable(
    reply: str, kind: type[Exception]
) -> None:
    # Such replies come while a restarted Redis replays its append-only file, or a failover
    # is under way: a server here answers every command as such a Redis does.
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(4096):
            writer.write(f"-{reply}\r\n".encode())
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    client = MultiplexedRedis("127.0.0.1", server.sockets[0].getsockname()[1], timeout=2.0)
    try:
        with pytest.raises(kind):
            await client.execute("GET", "k")
        with pytest.raises(StoreUnavailable, match="Redis is unavailable"):
            async with RedisErrors("get"):
                await client.execute("GET", "k")
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
