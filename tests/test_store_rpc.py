"""Every store RPC through a real in-process gRPC server on a real Redis."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime

import pytest
import redis
from sharedctx import (
    AlreadyExistsError,
    AsyncClient,
    NotFoundError,
    PutItem,
    VersionConflictError,
)
from sharedctx_server.settings import Settings
from sharedctx_server.state import keys as K
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving, wait_until

NS = "team-a/session-42"


async def test_put_then_get_returns_content_and_all_metadata(client: AsyncClient) -> None:
    when = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    written = await client.put(
        NS,
        "tool/grep#7",
        "src/app.py:12: TODO fix",
        kind="tool_output",
        role="tool",
        agent_id="agent-a",
        tool_name="grep",
        tags=("search", "todo", "search"),  # a tag given twice is one tag
        importance=0.7,
        event_time=when,
        thread="task-1",
    )
    assert written.version == 1
    assert written.content == ""
    got = await client.get(NS, "tool/grep#7")
    assert got.content == "src/app.py:12: TODO fix"
    assert (got.kind, got.role, got.agent_id, got.tool_name) == (
        "tool_output",
        "tool",
        "agent-a",
        "grep",
    )
    assert got.tags == ("search", "todo")
    assert got.importance == pytest.approx(0.7)
    assert got.thread == "task-1"
    assert got.event_time == when
    assert got.created_at is not None and got.created_at == got.updated_at
    assert got.expires_at is None
    assert got.original_tokens > 0 and got.compressed_tokens == got.original_tokens
    assert got.original_bytes == len(b"src/app.py:12: TODO fix")
    # -0.0 is stored and echoed as 0 (Put said -0, Get 0.0).
    zero = await client.put(NS, "k0", "x", importance=-0.0)
    assert math.copysign(1.0, zero.importance) == 1.0


async def test_get_returns_compressed_form_unless_full_is_set(client: AsyncClient) -> None:
    await client.put(NS, "log", "line one\nline two\nline three", compressed="3 lines")
    short = await client.get(NS, "log")
    assert short.content == "3 lines" and not short.full
    assert short.compressor == "caller"
    assert short.compressed_tokens < short.original_tokens
    full = await client.get(NS, "log", full=True)
    assert full.content == "line one\nline two\nline three" and full.full


async def test_without_a_compressed_form_get_returns_the_original(client: AsyncClient) -> None:
    await client.put(NS, "note", "plain note")
    assert (await client.get(NS, "note")).content == "plain note"


async def test_each_text_is_stored_once_and_read_in_either_form(
    client: AsyncClient, clean_redis: str
) -> None:
    await client.put(NS, "two", "line one\nline two\nline three", compressed="3 lines")
    await client.put(NS, "one", "plain note")
    direct = redis.Redis.from_url(clean_redis)
    assert {b"f", b"z"} <= set(direct.hkeys(K.entry(NS, "two"))) and not direct.hexists(
        K.entry(NS, "two"), "o"
    )
    assert set(direct.hkeys(K.entry(NS, "one"))) & {b"f", b"z", b"o"} == {b"o"}
    # An entry as earlier versions wrote it: its one text under f.
    direct.hset(K.entry(NS, "old"), mapping=direct.hgetall(K.entry(NS, "one")))
    direct.hset(K.entry(NS, "old"), "f", direct.hget(K.entry(NS, "old"), "o"))
    direct.hdel(K.entry(NS, "old"), "o")
    direct.close()
    for key, compressed in (("two", "3 lines"), ("one", "plain note"), ("old", "plain note")):
        got = await client.get(NS, key)
        assert (got.content, got.full) == (compressed, key != "two")
        assert (await client.get(NS, key, full=True)).full
        many = (await client.get_many(NS, [key]))[key]
        assert (many.content, many.full) == (got.content, got.full)
    assert (await client.get(NS, "old", full=True)).content == "plain note"


async def test_get_of_an_absent_key_is_not_found(client: AsyncClient) -> None:
    with pytest.raises(NotFoundError, match="absent or expired"):
        await client.get(NS, "nope")


async def test_event_time_defaults_to_the_write_time(client: AsyncClient) -> None:
    written = await client.put(NS, "k", "v")
    assert written.event_time == written.created_at


async def test_put_many_writes_all_and_get_many_reports_missing(client: AsyncClient) -> None:
    items = [PutItem(key=f"D1:{i}", content=f"turn {i}") for i in range(5)]
    written = await client.put_many(NS, items)
    assert [e.key for e in written] == [f"D1:{i}" for i in range(5)]
    found = await client.get_many(NS, ["D1:0", "D1:4", "ghost"])
    assert sorted(found) == ["D1:0", "D1:4"]
    assert found["D1:4"].content == "turn 4"


async def test_put_many_with_one_version_conflict_writes_nothing(client: AsyncClient) -> None:
    await client.put(NS, "exists", "old")
    with pytest.raises(AlreadyExistsError) as info:
        await client.put_many(
            NS,
            [PutItem(key="new", content="x"), PutItem(key="exists", content="y", if_version=0)],
        )
    assert info.value.key == "exists" and info.value.current_version == 1
    assert [k async for k in client.keys(NS)] == ["exists"]
    assert (await client.get(NS, "exists")).content == "old"


async def test_overwrite_keeps_created_bumps_version_and_resets_ttl(client: AsyncClient) -> None:
    first = await client.put(NS, "k", "v1", ttl_seconds=100)
    await asyncio.sleep(0.01)
    second = await client.put(NS, "k", "v2")
    assert second.version == 2
    assert second.created_at == first.created_at
    assert second.updated_at is not None and first.updated_at is not None
    assert second.updated_at > first.updated_at
    assert first.expires_at is not None and second.expires_at is None
    assert (await client.get(NS, "k")).content == "v2"


async def test_expired_entry_is_invisible_to_every_rpc(client: AsyncClient) -> None:
    await client.put(NS, "short", "gone soon", ttl_seconds=1)
    await client.put(NS, "long", "stays")
    assert (await client.stats(NS)).entries == 2

    async def gone() -> bool:
        try:
            await client.get(NS, "short")
        except NotFoundError:
            return True
        return False

    await wait_until(gone, timeout=5)
    assert [k async for k in client.keys(NS)] == ["long"]
    assert sorted(await client.get_many(NS, ["short", "long"])) == ["long"]
    stats = await client.stats(NS)
    assert stats.entries == 1
    assert stats.original_tokens == (await client.get(NS, "long")).original_tokens
    assert await client.delete(NS, "short") is False


async def test_keys_pages_through_a_prefix_in_byte_order(client: AsyncClient) -> None:
    names = [f"tool/{i:03d}" for i in range(23)] + ["other/1", "tool"]
    await client.put_many(NS, [PutItem(key=k, content="x") for k in names])
    listed = [k async for k in client.keys(NS, "tool/", page_size=5)]
    assert listed == sorted(k for k in names if k.startswith("tool/"))
    assert [k async for k in client.keys(NS)] == sorted(names)


async def test_keys_skips_expired_members_across_pages(client: AsyncClient) -> None:
    await client.put_many(
        NS,
        [PutItem(key=f"a{i:02d}", content="x", ttl_seconds=1 if i % 2 else 0) for i in range(20)],
    )

    async def only_even() -> bool:
        return [k async for k in client.keys(NS, page_size=3)] == [
            f"a{i:02d}" for i in range(0, 20, 2)
        ]

    await wait_until(only_even, timeout=5)


async def test_delete_removes_and_reports(client: AsyncClient) -> None:
    await client.put(NS, "k", "v")
    assert await client.delete(NS, "k") is True
    assert await client.delete(NS, "k") is False
    with pytest.raises(NotFoundError):
        await client.get(NS, "k")


async def test_conditional_delete_checks_the_version(client: AsyncClient) -> None:
    await client.put(NS, "k", "v")
    await client.put(NS, "k", "v2")
    with pytest.raises(VersionConflictError) as info:
        await client.delete(NS, "k", if_version=1)
    assert info.value.current_version == 2
    assert await client.delete(NS, "k", if_version=2) is True


async def test_if_version_zero_creates_only(client: AsyncClient) -> None:
    await client.put(NS, "k", "v", if_version=0)
    with pytest.raises(AlreadyExistsError):
        await client.put(NS, "k", "again", if_version=0)
    assert (await client.get(NS, "k")).content == "v"


async def test_version_mismatch_returns_current_version(client: AsyncClient) -> None:
    await client.put(NS, "k", "v")
    with pytest.raises(VersionConflictError) as info:
        await client.put(NS, "k", "w", if_version=7)
    assert not isinstance(info.value, AlreadyExistsError)
    assert (info.value.expected_version, info.value.current_version) == (7, 1)


async def test_compare_and_set_loses_no_update_under_concurrent_writers(
    client: AsyncClient,
) -> None:
    await client.put(NS, "counter", "0")
    writers, increments = 8, 5

    async def writer() -> None:
        for _ in range(increments):
            while True:
                cur = await client.get(NS, "counter")
                try:
                    await client.put(
                        NS, "counter", str(int(cur.content) + 1), if_version=cur.version
                    )
                    break
                except VersionConflictError:
                    continue

    await asyncio.gather(*(writer() for _ in range(writers)))
    final = await client.get(NS, "counter")
    assert int(final.content) == writers * increments
    assert final.version == writers * increments + 1


async def test_stats_totals_and_savings(client: AsyncClient) -> None:
    await client.put(NS, "a", "word " * 100, compressed="word x100")
    await client.put(NS, "b", "hello there")
    a = await client.get(NS, "a")
    b = await client.get(NS, "b")
    stats = await client.stats(NS)
    assert stats.entries == 2
    assert stats.original_tokens == a.original_tokens + b.original_tokens
    assert stats.compressed_tokens == a.compressed_tokens + b.compressed_tokens
    assert stats.tokens_saved == stats.original_tokens - stats.compressed_tokens
    assert stats.savings_percent == pytest.approx(100 * stats.tokens_saved / stats.original_tokens)
    assert stats.bytes_stored == len("word " * 100) + len("word x100") + len("hello there")
    await client.put(NS, "a", "short now")
    assert (await client.stats(NS)).entries == 2


async def test_clear_removes_only_that_namespace(client: AsyncClient) -> None:
    for start in (0, 600):
        await client.put_many(
            NS, [PutItem(key=f"k{i}", content="x") for i in range(start, start + 600)]
        )
    await client.put("other", "keep", "me")
    assert await client.clear(NS) == 1200
    assert [k async for k in client.keys(NS)] == []
    assert (await client.stats(NS)).entries == 0
    assert (await client.get("other", "keep")).content == "me"


async def test_namespaces_are_isolated(client: AsyncClient) -> None:
    await client.put("team-a/x", "k", "a")
    await client.put("team-b/x", "k", "b")
    assert (await client.get("team-a/x", "k")).content == "a"
    assert (await client.get("team-b/x", "k")).content == "b"


async def test_unicode_keys_and_content_round_trip(client: AsyncClient) -> None:
    await client.put(NS, "ключ/日本語#1", "emoji 🚀 and ünïcode")
    assert (await client.get(NS, "ключ/日本語#1")).content == "emoji 🚀 and ünïcode"
    assert [k async for k in client.keys(NS, "ключ/")] == ["ключ/日本語#1"]


async def test_server_default_ttl_applies_when_put_gives_none(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, default_ttl_seconds=3600) as (_, c):
        defaulted = await c.put(NS, "k", "v")
        explicit = await c.put(NS, "j", "v", ttl_seconds=10)
    assert defaulted.expires_at is not None and defaulted.created_at is not None
    assert (defaulted.expires_at - defaulted.created_at).total_seconds() == pytest.approx(3600)
    assert explicit.expires_at is not None and explicit.created_at is not None
    assert (explicit.expires_at - explicit.created_at).total_seconds() == pytest.approx(10)
