"""Prometheus metrics scraped over HTTP from a running server."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from sharedctx import NotFoundError, PutItem, SharedCtxError
from sharedctx_server.edge.metrics import parse_listen
from sharedctx_server.errors import ConfigError
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.redis_servers import LocalRedis
from .support.servers import serving

NS = "team-a/metrics"
SERVICE = "sharedctx.v1.SharedContext"


async def scrape(running: RunningServer) -> list[Sample]:
    """Every sample the server's /metrics endpoint exposes now."""
    assert running.metrics_server is not None
    url = f"http://127.0.0.1:{running.metrics_server.port}/metrics"

    def get() -> str:
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert reply.status == 200
            return str(reply.read().decode())

    text = await asyncio.to_thread(get)
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(samples: list[Sample], name: str, **labels: str) -> float | None:
    """The value of the one sample named `name` whose labels include `labels`, else None."""
    found = [s for s in samples if s.name == name and labels.items() <= s.labels.items()]
    assert len(found) <= 1, found
    return found[0].value if found else None


def rpc(method: str, code: str = "OK") -> dict[str, str]:
    return {"grpc_service": SERVICE, "grpc_method": method, "grpc_code": code}


async def test_scrape_shows_rpc_fit_embedding_and_cache_series(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, metrics_listen="127.0.0.1:0") as (running, c):
        docs = {f"d{i}": f"note {i} about the moon and its craters" for i in range(4)}
        await c.put_many(NS, [PutItem(key=k, content=v) for k, v in docs.items()])
        await c.put(NS, "weather", "sunny and warm in Paris")
        assert (await c.get(NS, "weather")).content
        with pytest.raises(NotFoundError):
            await c.get(NS, "absent")
        for _ in range(2):  # the second Fit hits both caches
            fitted = await c.fit(NS, "craters on the moon", 1000)
        samples = await scrape(running)

    assert value(samples, "grpc_server_started_total", grpc_method="Put") == 1
    assert value(samples, "grpc_server_handled_total", **rpc("Put")) == 1
    assert value(samples, "grpc_server_handled_total", **rpc("PutMany")) == 1
    assert value(samples, "grpc_server_handled_total", **rpc("Get")) == 1
    assert value(samples, "grpc_server_handled_total", **rpc("Get", "NOT_FOUND")) == 1
    assert value(samples, "grpc_server_handled_total", **rpc("Fit")) == 2
    assert value(samples, "grpc_server_handling_seconds_count", **rpc("Fit")) == 2
    fit_seconds = value(samples, "grpc_server_handling_seconds_sum", **rpc("Fit"))
    assert fit_seconds is not None and fit_seconds > 0
    assert value(samples, "sharedctx_rpcs_in_flight", grpc_method="Fit") == 0

    assert value(samples, "sharedctx_fit_candidates_count") == 2
    assert value(samples, "sharedctx_fit_candidates_sum") == 2 * 5
    assert value(samples, "sharedctx_fit_selected_entries_sum") == 2 * len(fitted.entries)
    assert value(samples, "sharedctx_fit_tokens_sum") == 2 * fitted.total_tokens

    # Five distinct texts and one query went through the model, in one or more batches.
    assert value(samples, "sharedctx_embed_batch_texts_sum") == 6
    assert value(samples, "sharedctx_embed_texts_total") == 6
    batches = value(samples, "sharedctx_embed_batch_seconds_count")
    assert batches is not None and 1 <= batches <= 6
    assert value(samples, "sharedctx_embed_queued_texts") == 0

    assert value(samples, "sharedctx_namespace_cache_loads_total") == 1
    assert value(samples, "sharedctx_namespace_cache_hits_total") == 1
    assert value(samples, "sharedctx_namespace_cache_entries") == 5
    assert value(samples, "sharedctx_query_cache_misses_total") == 1
    assert value(samples, "sharedctx_query_cache_hits_total") == 1
    assert value(samples, "sharedctx_redis_errors_total") is None  # no failures, no series
    assert value(samples, "process_resident_memory_bytes") is not None


async def test_turn_strategy_fits_are_counted_by_how_they_got_their_turns(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, metrics_listen="127.0.0.1:0") as (running, c):
        turns = [
            PutItem(key="q1", content="is it sunny?", kind="message", role="user"),
            PutItem(key="a1", content="yes, sunny", kind="message", role="assistant"),
        ]
        await c.put_many(NS, turns)
        await c.fit(NS, "sunny", 100, strategy="recent")  # built
        await c.fit(NS, "sunny", 100, strategy="relevant")  # reused: nothing changed
        await c.put(NS, "q2", "and tomorrow?", kind="message", role="user")
        await c.fit(NS, "sunny", 100, strategy="recent")  # updated from the new entry on
        samples = await scrape(running)
    for outcome in ("rebuilt", "reused", "updated"):
        assert value(samples, "sharedctx_fit_turn_index_total", outcome=outcome) == 1


async def test_redis_failures_are_counted_by_store_operation(
    settings: Settings, token_counter: TokenCounter
) -> None:
    own = LocalRedis().start()  # stopped below, so not the session's Redis
    try:
        async with serving(
            settings, token_counter, redis_url=own.url, metrics_listen="127.0.0.1:0"
        ) as (running, c):
            await c.put(NS, "k", "v")
            own.stop()
            with pytest.raises(SharedCtxError) as info:
                await c.get(NS, "k")
            assert info.value.code is not None and info.value.code.name == "UNAVAILABLE"
            samples = await scrape(running)
    finally:
        own.stop()
    failed = value(samples, "sharedctx_redis_errors_total", operation="get")
    assert failed == 1
    assert value(samples, "grpc_server_handled_total", **rpc("Get", "UNAVAILABLE")) == 1


async def test_metrics_endpoint_is_off_by_default_and_stops_with_the_server(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (running, _):
        assert running.metrics_server is None and running.metrics is None
    async with serving(settings, token_counter, metrics_listen="127.0.0.1:0") as (running, _):
        assert running.metrics_server is not None
        port = running.metrics_server.port
    with pytest.raises(urllib.error.URLError):
        await asyncio.to_thread(urllib.request.urlopen, f"http://127.0.0.1:{port}/metrics", None, 2)


async def test_an_unusable_metrics_address_is_a_config_error(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, metrics_listen="127.0.0.1:0") as (running, _):
        assert running.metrics_server is not None
        taken = f"127.0.0.1:{running.metrics_server.port}"
        with pytest.raises(ConfigError, match="cannot serve metrics on"):
            async with serving(settings, token_counter, metrics_listen=taken):
                pass
    # A malformed one is refused with the settings, before the server starts.
    with pytest.raises(ConfigError, match="--metrics-listen / SHAREDCTX_METRICS_LISTEN must be"):
        async with serving(settings, token_counter, metrics_listen="no-port"):
            pass


def test_metrics_listen_takes_host_and_port() -> None:
    assert parse_listen("0.0.0.0:9090") == ("0.0.0.0", 9090)
    assert parse_listen("[::1]:9090") == ("::1", 9090)
    for bad in ("9090", ":9090", "host:", "host:http"):
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_listen(bad)
