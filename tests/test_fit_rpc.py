"""Fit over gRPC: selection, budgets, options, explain, errors, the namespace cache."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
import redis
from sharedctx import (
    AsyncClient,
    InvalidArgumentError,
    PutItem,
    ResourceExhaustedError,
)
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Limits, Settings
from sharedctx_server.tokens import TokenCounter

from .support.redis_monitor import client_commands
from .support.servers import serving, wait_until

NS = "team-a/fit"
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

DOCS = {
    "weather": "The weather in Paris is sunny and warm today.",
    "password": "To reset your password, open settings and click 'forgot password'.",
    "cat": "My cat likes to sleep on the sofa all afternoon.",
    "deploy": "We deployed version 2.3 of the payment service yesterday evening.",
    "recipe": "Whisk two eggs with flour and milk to make pancake batter.",
}


_EMB = "sc:v1:{team-a/fit}:emb:*"  # NS's vector hashes, one per model


def _drop_vectors(redis_url: str) -> None:
    """Delete every stored vector of NS, straight in Redis."""
    direct = redis.Redis.from_url(redis_url)
    try:
        for key in direct.scan_iter(match=_EMB):
            direct.delete(key)
    finally:
        direct.close()


def _vector_count(redis_url: str) -> dict[str, int]:
    """Stored vectors and embedding references of NS, straight from Redis."""
    direct = redis.Redis.from_url(redis_url)
    try:
        emb = [k for k in direct.scan_iter(match=_EMB)]
        return {
            "vectors": sum(direct.hlen(k) for k in emb),
            "refs": direct.hlen("sc:v1:{team-a/fit}:embref"),
        }
    finally:
        direct.close()


async def put_docs(client: AsyncClient, docs: dict[str, str] = DOCS, **extra: Any) -> None:
    await client.put_many(
        NS,
        [
            PutItem(key=k, content=v, event_time=T0 + timedelta(minutes=i), **extra)
            for i, (k, v) in enumerate(docs.items())
        ],
    )


async def test_fit_picks_the_relevant_entry_within_budget(client: AsyncClient) -> None:
    await put_docs(client)
    result = await client.fit(NS, "how can I change my password?", 20, keep_recent=0)
    assert result.keys[0] == "password"
    assert result.total_tokens <= 20
    assert result.candidates == 5
    assert result.left_out == 5 - len(result.entries)
    assert sum(e.tokens for e in result.entries) == result.total_tokens


async def test_a_question_naming_an_author_finds_what_that_author_wrote(
    client: AsyncClient,
) -> None:
    """'What did the user ask for?': the user's message says "customers get charged twice",
    no word of the question; its role names it, the agents' chatter around it does not."""
    said = [
        ("user", "", "Customers get charged twice when checkout times out; please fix it."),
        ("assistant", "planner", "Plan: reproduce with a slow stub, read the retry code, fix it."),
        ("assistant", "tester", "The flaky refund test fails one run in five; it reads the clock."),
        ("assistant", "ops", "Metrics move to port 9464; 9090 clashes with Prometheus itself."),
    ]
    await client.put_many(
        NS,
        [
            PutItem(
                key=f"msg/{i}",
                content=text,
                kind="message",
                role=role,
                agent_id=agent,
                event_time=T0 + timedelta(minutes=i),
            )
            for i, (role, agent, text) in enumerate(said)
        ],
    )
    for query, key in (("what did the user ask for?", "msg/0"), ("what did ops say?", "msg/3")):
        result = await client.fit(NS, query, 1000, keep_recent=0, explain=True)
        assert max(result.explain, key=lambda c: c.score).key == key, query


async def test_selected_entries_come_back_in_chronological_order_with_ranks(
    client: AsyncClient,
) -> None:
    await put_docs(client)
    result = await client.fit(NS, "pancake batter eggs", 1000, keep_recent=0)
    times = [e.event_time for e in result.entries]
    assert times == sorted(times)  # type: ignore[type-var]
    assert sorted(e.rank for e in result.entries) == list(range(1, len(result.entries) + 1))
    best = min(result.entries, key=lambda e: e.rank)
    assert best.key == "recipe"


async def test_include_content_returns_the_text_of_the_chosen_form(client: AsyncClient) -> None:
    await client.put(NS, "log", "line one\nline two\nline three\n" * 20, compressed="3 lines x20")
    compressed = await client.fit(NS, "lines", 1000, include_content=True)
    assert compressed.entries[0].content == "3 lines x20"
    assert compressed.entries[0].form == "compressed"
    full = await client.fit(NS, "lines", 1000, include_content=True, form="full")
    assert full.entries[0].content.startswith("line one")
    assert full.entries[0].tokens > compressed.entries[0].tokens
    assert (await client.fit(NS, "lines", 1000)).entries[0].content == ""


async def test_a_callers_compressed_form_larger_than_the_content_gives_way_to_it(
    client: AsyncClient,
) -> None:
    await client.put(NS, "terse", "disk full on /var", compressed="a long summary " * 300)
    for strategy in ("scored", "recent"):
        result = await client.fit(NS, "disk full", 50, include_content=True, strategy=strategy)
        assert [(e.form, e.content) for e in result.entries] == [("full", "disk full on /var")]


async def test_budget_is_never_exceeded_and_too_large_is_explained(client: AsyncClient) -> None:
    await put_docs(client)
    await client.put(NS, "huge", "word " * 500)
    result = await client.fit(NS, "word", 100, explain=True)
    assert result.total_tokens <= 100
    reasons = {c.key: c.reason for c in result.explain}
    assert reasons["huge"] == "too_large"
    assert len(result.explain) == result.candidates == 6
    assert set(result.left_out_by_reason) <= {"too_large", "budget"}


async def test_explain_lists_factor_values_and_reasons(client: AsyncClient) -> None:
    await put_docs(client)
    result = await client.fit(NS, "payment service deploy", 15, explain=True, keep_recent=0)
    by_key = {c.key: c for c in result.explain}
    deploy = by_key["deploy"]
    assert deploy.reason == "selected"
    assert set(deploy.factors) == {
        "recency", "semantic_similarity", "toin_importance", "error_indicator",
        "forward_reference", "token_density", "lexical_relevance",
    }  # fmt: skip
    assert deploy.factors["lexical_relevance"] == max(
        c.factors["lexical_relevance"] for c in result.explain
    )
    assert all(0.0 <= v <= 1.0 for c in result.explain for v in c.factors.values())
    assert {c.reason for c in result.explain} <= {"selected", "budget"}
    scores = [c.score for c in result.explain]
    assert scores == sorted(scores, reverse=True)


async def test_keep_recent_absent_means_two_and_zero_means_none(client: AsyncClient) -> None:
    await put_docs(client)
    default = await client.fit(NS, "how do I reset a password", 200, max_entries=2)
    assert default.keys == ["deploy", "recipe"]  # the two newest are forced in first
    none = await client.fit(NS, "how do I reset a password", 200, max_entries=1, keep_recent=0)
    assert none.keys == ["password"]


async def test_filters_and_min_score(client: AsyncClient) -> None:
    await client.put_many(
        NS,
        [
            PutItem(key="a", content="database timeout in worker", kind="log", agent_id="x"),
            PutItem(
                key="b",
                content="database timeout in worker",
                kind="note",
                agent_id="y",
                tags=("keep",),
            ),
        ],
    )
    logs = await client.fit(NS, "database", 100, filters={"include_kinds": ["log"]})
    assert logs.keys == ["a"]
    assert (await client.fit(NS, "database", 100, filters={"exclude_agent_ids": ["x"]})).keys == [
        "b"
    ]
    assert (await client.fit(NS, "database", 100, filters={"include_tags": ["keep"]})).keys == ["b"]
    explained = await client.fit(
        NS, "database", 100, filters={"include_kinds": ["log"]}, explain=True
    )
    assert {c.key: c.reason for c in explained.explain}["b"] == "filtered"
    assert (await client.fit(NS, "database", 100, min_score=10.0, keep_recent=0)).keys == []


async def test_fit_is_deterministic(client: AsyncClient) -> None:
    await put_docs(client)
    first = await client.fit(NS, "sunny weather", 30, explain=True)
    for _ in range(3):
        again = await client.fit(NS, "sunny weather", 30, explain=True)
        assert replace(again, server_ms=0) == replace(first, server_ms=0)


async def test_recent_strategy_is_newest_first(client: AsyncClient) -> None:
    await put_docs(client)
    result = await client.fit(NS, "anything", 30, strategy="recent")
    assert result.keys == ["deploy", "recipe"]


async def test_relevant_strategy_keeps_relevant_turns(client: AsyncClient) -> None:
    turns = []
    for i in range(12):
        turns.append(
            PutItem(
                key=f"t{i:02d}u",
                content=f"user question number {i} about gardening",
                role="user",
                kind="message",
                event_time=T0 + timedelta(minutes=2 * i),
            )
        )
        turns.append(
            PutItem(
                key=f"t{i:02d}a",
                content=f"assistant answer number {i} about plants",
                role="assistant",
                kind="message",
                event_time=T0 + timedelta(minutes=2 * i + 1),
            )
        )
    turns[6] = PutItem(
        key="t03u",
        content="what is the capital of australia",
        role="user",
        kind="message",
        event_time=T0 + timedelta(minutes=6),
    )
    await client.put_many(NS, turns)
    result = await client.fit(NS, "capital of australia", 2000, strategy="relevant")
    assert "t03u" in result.keys and "t03a" in result.keys  # the whole turn
    assert "t11u" in result.keys  # keep_recent turns
    assert "t05u" not in result.keys


@pytest.mark.parametrize("strategy", ["relevant", "recent"])
async def test_a_namespace_without_eligible_turns_gives_an_empty_fit(
    client: AsyncClient, strategy: str
) -> None:
    await client.put(NS, "tool/ls", "README.md setup.py src", kind="tool_output")
    await client.put(NS, "note", "a note")
    result = await client.fit(
        NS, "setup", 1000, strategy=strategy, filters={"include_kinds": ["log"]}
    )
    assert result.keys == []


async def test_preset_and_weight_overrides_change_the_ranking(client: AsyncClient) -> None:
    await client.put(NS, "old-error", "Traceback: ValueError: bad config", event_time=T0)
    await client.put(NS, "fresh-note", "notes about lunch", event_time=datetime.now(UTC))
    only_errors = await client.fit(
        NS, "lunch", 10, keep_recent=0, max_entries=1,
        weights={"error_indicator": 1.0, "semantic_similarity": 0, "lexical_relevance": 0,
                 "recency": 0, "toin_importance": 0, "forward_reference": 0,
                 "token_density": 0},
    )  # fmt: skip
    assert only_errors.keys == ["old-error"]
    assert only_errors.weights["error_indicator"] == pytest.approx(1.0)
    seed = await client.fit(NS, "lunch", 10, preset="headroom", keep_recent=0, max_entries=1)
    assert seed.weights["recency"] == pytest.approx(0.4)


async def test_defaults_put_a_fresh_error_log_above_old_chat_that_shares_its_words(
    client: AsyncClient,
) -> None:
    """Agent-style data (fit.md): within a task, the fresh failure output is what the next
    call needs, not a days-old chat turn that happens to use the query's words; the old turn
    still beats fresh output that has nothing to do with the query."""
    now = datetime.now(UTC)
    old = now - timedelta(days=2)
    await client.put_many(
        NS,
        [
            PutItem(key="chat/old", kind="message", role="user", event_time=old,
                    content="The deploy failed on Monday because the deploy script timed out; "
                            "next time the deploy fails we just run it again."),
            PutItem(key="tool/cat", kind="tool_output", tool_name="cat",
                    event_time=now - timedelta(minutes=8),
                    content="[server]\nhost = 0.0.0.0\nworkers = 4"),
            PutItem(key="tool/deploy", kind="tool_output", tool_name="deploy",
                    event_time=now - timedelta(minutes=3),
                    content="Uploading release 4.2 ...\n"
                            "Traceback (most recent call last):\n"
                            '  File "migrate.py", line 88, in upgrade\n'
                            "psycopg.errors.UndefinedColumn: column users.plan does not exist\n"
                            "exit status 1"),
            PutItem(key="note/next", kind="note", event_time=now - timedelta(minutes=1),
                    content="Ship the release once staging is green."),
        ],
    )  # fmt: skip
    result = await client.fit(NS, "Why did the deploy fail, and how do I fix it?", 60,
                              keep_recent=0, explain=True)  # fmt: skip
    ranking = [c.key for c in result.explain]
    assert ranking[0] == "tool/deploy"
    assert "tool/deploy" in result.keys
    assert ranking.index("chat/old") < ranking.index("tool/cat")


async def test_adaptive_caps_near_duplicate_entries(client: AsyncClient) -> None:
    await client.put_many(
        NS,
        [PutItem(key=f"dup{i:02d}", content="disk usage at 91 percent on node") for i in range(30)],
    )
    capped = await client.fit(NS, "disk usage", 4000, adaptive="aggressive", keep_recent=0)
    uncapped = await client.fit(NS, "disk usage", 4000, keep_recent=0)
    assert len(uncapped.entries) == 30
    assert 3 <= len(capped.entries) < 30


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"budget_tokens": 0}, "budget_tokens"),
        ({"budget_tokens": -5}, "budget_tokens"),
        ({"strategy": 99}, "strategy"),
        ({"form": 42}, "form"),
        ({"preset": "nope"}, "preset"),
        ({"recency_decay_rate": -1.0}, "recency_decay_rate"),
        ({"keep_recent": -1}, "keep_recent"),
        ({"namespace": "bad ns"}, "namespace"),
    ],
)
async def test_bad_fit_requests_are_invalid_argument_naming_the_field(
    server: RunningServer, fields: dict[str, Any], field: str
) -> None:
    req = pb.FitRequest(namespace=NS, query="q", budget_tokens=100)
    for name, value in fields.items():
        setattr(req, name, value)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Fit(req)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (info.value.details() or "").startswith(field)


async def test_all_zero_or_negative_weights_are_invalid(client: AsyncClient) -> None:
    zeros = dict.fromkeys(
        ["recency", "semantic_similarity", "toin_importance", "error_indicator",
         "forward_reference", "token_density", "lexical_relevance"], 0.0,
    )  # fmt: skip
    with pytest.raises(InvalidArgumentError, match="weights"):
        await client.fit(NS, "q", 100, weights=zeros)
    with pytest.raises(InvalidArgumentError, match="weights"):
        await client.fit(NS, "q", 100, weights={"recency": -1.0})


async def test_budget_over_the_limit_is_resource_exhausted(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, limits=Limits(max_budget_tokens=1000)) as (_, c):
        with pytest.raises(ResourceExhaustedError) as info:
            await c.fit(NS, "q", 2**31)
        assert info.value.limit == "max_budget_tokens"


async def test_fit_sees_puts_deletes_and_expiry_at_once(client: AsyncClient) -> None:
    await put_docs(client)
    assert "weather" in (await client.fit(NS, "sunny Paris", 1000)).keys
    await client.delete(NS, "weather")
    assert "weather" not in (await client.fit(NS, "sunny Paris", 1000)).keys
    await client.put(NS, "flash", "sunny Paris flash sale", ttl_seconds=1)
    assert "flash" in (await client.fit(NS, "sunny Paris", 1000)).keys
    deadline = time.monotonic() + 5
    while "flash" in (await client.fit(NS, "sunny Paris", 1000)).keys:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    await client.clear(NS)
    assert (await client.fit(NS, "sunny Paris", 1000)).candidates == 0


@pytest.mark.parametrize("strategy", ["relevant", "recent"])
async def test_turn_strategies_see_puts_deletes_expiry_and_filters_at_once(
    client: AsyncClient, strategy: str
) -> None:
    """Their grouping into turns is kept between Fits: every change must still show."""

    def msg(key: str, text: str, minute: int, role: str, **extra: Any) -> PutItem:
        return PutItem(key=key, content=text, role=role, kind="message",
                       event_time=T0 + timedelta(minutes=minute), **extra)  # fmt: skip

    async def keys(**options: Any) -> list[str]:
        return (await client.fit(NS, "sunny Paris", 1000, strategy=strategy, **options)).keys

    await client.put_many(NS, [msg("q1", "is Paris sunny?", 0, "user"),
                               msg("a1", "Paris is sunny today", 1, "assistant")])  # fmt: skip
    assert await keys() == ["q1", "a1"]
    assert await keys() == ["q1", "a1"]  # the grouping reused
    await client.put_many(NS, [msg("q2", "and Rome?", 2, "user", tags=["rome"]),
                               msg("a2", "Rome is sunny too", 3, "assistant", tags=["rome"],
                                   ttl_seconds=1)])  # fmt: skip
    assert await keys() == ["q1", "a1", "q2", "a2"]
    assert await keys(filters={"exclude_tags": ["rome"]}) == ["q1", "a1"]
    await client.delete(NS, "q1")
    assert "q1" not in await keys()

    async def a2_expired() -> bool:  # expiry changes the turns without any write
        return "a2" not in await keys()

    await wait_until(a2_expired, timeout=5)
    assert await keys() == ["a1", "q2"]


async def test_steady_state_fit_costs_at_most_two_redis_commands(
    server: RunningServer, client: AsyncClient, redis_url: str
) -> None:
    await put_docs(client)
    await client.fit(NS, "sunny weather", 1000, include_content=True)  # load + warm caches
    with client_commands(redis_url, mentioning="{team-a/fit}") as seen:
        await client.fit(NS, "sunny weather", 1000, include_content=True)
    # One change-log read, one read of the chosen texts.
    assert len(seen) <= 2, seen
    with client_commands(redis_url, mentioning="{team-a/fit}", include_scripts=True) as seen:
        await client.fit(NS, "sunny weather", 1000)
    # Counted as Redis's command statistics count (scripts' inner commands included): the
    # change-log read alone. Redis's clock comes from the health loop's TIME samples.
    assert seen == ["xrange"], seen
    assert server.cache is not None and server.cache.stats.loads == 1


async def test_async_embedding_is_eventually_consistent(
    server: RunningServer, client: AsyncClient
) -> None:
    await client.put(NS, "later", "kubernetes pod crashloop backoff", embed="async")
    assert server.embeddings is not None
    await server.embeddings.idle()
    result = await client.fit(NS, "kubernetes", 100, explain=True)
    assert result.explain[0].embedded
    assert "semantic_similarity" in result.explain[0].factors


async def test_unembedded_entry_says_so_in_explain(
    server: RunningServer, client: AsyncClient, redis_url: str
) -> None:
    await client.put(NS, "e", "some text to embed")
    _drop_vectors(redis_url)
    assert server.cache is not None
    server.cache.drop(NS)
    result = await client.fit(NS, "text", 100, explain=True)
    candidate = result.explain[0]
    assert not candidate.embedded
    assert "semantic_similarity" not in candidate.factors
    # ...and it is re-embedded lazily.
    assert server.embeddings is not None
    await server.embeddings.idle()
    assert (await client.fit(NS, "text", 100, explain=True)).explain[0].embedded


async def test_reembed_reports_progress(client: AsyncClient) -> None:
    await put_docs(client)
    steps = [s async for s in client.reembed(NS, force=True)]
    assert steps[0].done == 0 and steps[-1].done == steps[-1].total == 5
    assert steps[-1].computed == 5


async def test_a_vector_computed_for_one_entry_reaches_every_entry_with_its_text(
    server: RunningServer, client: AsyncClient, redis_url: str
) -> None:
    await client.put_many(NS, [PutItem(key=k, content="the same words") for k in ("a", "b")])
    _drop_vectors(redis_url)
    assert server.cache is not None and server.embeddings is not None
    server.cache.drop(NS)
    first = await client.fit(NS, "words", 100, explain=True)
    assert not any(c.embedded for c in first.explain)
    # One vector is computed and logged under one key; the cache gives it to both entries.
    await server.embeddings.idle()
    again = await client.fit(NS, "words", 100, explain=True)
    assert all(c.embedded for c in again.explain), again.explain


async def test_identical_content_is_embedded_once(
    server: RunningServer, client: AsyncClient
) -> None:
    assert server.batcher is not None
    await client.put(NS, "first", "exactly the same text")
    before = server.batcher.stats().texts
    await client.put(NS, "second", "exactly the same text")
    await client.put(NS, "first", "exactly the same text")  # unchanged overwrite
    assert server.batcher.stats().texts == before


async def test_rewriting_the_only_entry_of_a_text_keeps_its_vector(
    server: RunningServer, client: AsyncClient, redis_url: str
) -> None:
    assert server.batcher is not None and server.embeddings is not None
    await client.put(NS, "solo", "a text no other entry holds")
    before = server.batcher.stats().texts
    await client.put(NS, "solo", "a text no other entry holds")  # unchanged overwrite
    direct = redis.Redis.from_url(redis_url)
    try:
        vectors = [k for k in direct.scan_iter(match=_EMB)]
        assert vectors and all(direct.hlen(k) == 1 for k in vectors)
    finally:
        direct.close()
    assert server.batcher.stats().texts == before
    result = await client.fit(NS, "text", 1000, explain=True)
    assert result.explain[0].embedded
    await server.embeddings.idle()
    assert server.batcher.stats().texts == before + 1  # the query; no re-embedding


async def test_cold_namespaces_are_evicted_from_the_cache_and_reload(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, cache_max_entries=6) as (running, c):
        for ns in ("team-a/one", "team-a/two"):
            await c.put_many(ns, [PutItem(key=f"k{i}", content=f"{ns} fact {i}") for i in range(5)])
            assert len((await c.fit(ns, "fact", 1000)).entries) == 5
        assert running.cache is not None
        assert running.cache.stats.evictions == 1
        assert running.cache.cached_entries <= 6
        assert len((await c.fit("team-a/one", "fact", 1000)).entries) == 5
        assert running.cache.stats.loads == 3


async def test_a_model_change_never_mixes_vectors_and_reembeds_lazily(
    settings: Settings, token_counter: TokenCounter, redis_url: str, clean_redis: str
) -> None:
    from sharedctx_server.embedding import Embedder

    from .support.models import shared_embedder

    base = shared_embedder()
    async with serving(settings, token_counter) as (_, c):
        await put_docs(c)
    # The same weights under another id stand for a new model: no stored vector is its own.
    renamed = Embedder(
        base.fastembed_model, model_id="other-model@000000000000", dim=base.dim,
        max_tokens=base.max_tokens,
    )  # fmt: skip
    async with serving(settings, token_counter, embedder=renamed) as (running, c):
        first = await c.fit(NS, "sunny weather in Paris", 1000, explain=True)
        assert not any(x.embedded for x in first.explain)
        assert running.embeddings is not None
        await running.embeddings.idle()
        again = await c.fit(NS, "sunny weather in Paris", 1000, explain=True)
        assert all(x.embedded for x in again.explain)
    direct = redis.Redis.from_url(redis_url)
    try:
        emb_keys = sorted(k.decode() for k in direct.scan_iter(match=_EMB))
    finally:
        direct.close()
    assert len(emb_keys) == 2 and emb_keys[1].endswith("other-model@000000000000")


async def test_a_vector_deleted_between_the_check_and_the_write_is_sent_again(
    server: RunningServer, client: AsyncClient, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Put finds a text's vector stored (or remembers it was) and writes without it; if a
    Delete takes the last entry of that text in between, the write notices atomically and
    sends the vector."""
    await client.put(NS, "old", "a text two entries will share")
    real = server.store.put_many
    writes: list[str] = []

    async def deleted_first(namespace: str, *args: Any, **kwargs: Any) -> Any:
        writes.append(namespace)
        await client.delete(NS, "old")  # the vector goes with its last entry
        return await real(namespace, *args, **kwargs)

    monkeypatch.setattr(server.store, "put_many", deleted_first)
    await client.put(NS, "new", "a text two entries will share")
    monkeypatch.undo()
    assert len(writes) == 2  # refused without the vector, then written with it
    assert _vector_count(redis_url) == {"vectors": 1, "refs": 1}
    assert server.cache is not None
    server.cache.drop(NS)
    assert (await client.fit(NS, "text", 100, explain=True)).explain[0].embedded


async def test_repeated_text_skips_the_vector_check(
    server: RunningServer, client: AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text this server just wrote needs no look-up before the next write of it: the
    write itself verifies the vector is still there."""
    await client.put(NS, "a", "the same words again")
    checks: list[Any] = []
    real = server.store.missing_embeddings

    async def counted(namespace: str, hashes: Any) -> list[bool]:
        checks.append(list(hashes))
        return await real(namespace, hashes)

    monkeypatch.setattr(server.store, "missing_embeddings", counted)
    await client.put(NS, "b", "the same words again")
    await client.put(NS, "c", "words never seen before")
    assert len(checks) == 1 and len(checks[0]) == 1  # only the new text was looked up


async def test_a_batch_rewriting_the_last_holder_of_a_text_it_relies_on_keeps_the_vector(
    server: RunningServer, client: AsyncClient, redis_url: str
) -> None:
    await client.put(NS, "b", "the text that moves")
    # b's rewrite comes first in the batch and drops the text's only reference before a,
    # which relies on the stored vector, takes one.
    await client.put_many(NS, [PutItem(key="b", content="b says something else now"),
                               PutItem(key="a", content="the text that moves")])  # fmt: skip
    assert _vector_count(redis_url) == {"vectors": 2, "refs": 2}
    assert server.cache is not None
    server.cache.drop(NS)
    result = await client.fit(NS, "text", 100, explain=True)
    assert all(c.embedded for c in result.explain)


async def test_evicting_the_last_holder_of_a_text_a_put_relies_on_keeps_the_vector(
    settings: Settings, token_counter: TokenCounter, redis_url: str
) -> None:
    async with serving(
        settings, token_counter, namespace_max_entries=1, quota_policy="evict_oldest"
    ) as (running, c):
        await c.put(NS, "first", "one text, evicted and reused")
        await c.put(NS, "second", "one text, evicted and reused")  # evicts "first"
        assert [k async for k in c.keys(NS)] == ["second"]
        assert _vector_count(redis_url) == {"vectors": 1, "refs": 1}
