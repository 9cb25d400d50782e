"""MicroBatcher with the real model: sharing runs, backpressure, cancellation, shutdown."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np
import pytest
from sharedctx_server.embedding import Embedder, EmbedderClosed, MicroBatcher
from sharedctx_server.errors import LimitExceeded


def sentence(i: int) -> str:
    topics = ["disk usage", "login failure", "build log", "user message", "deploy note"]
    return f"{topics[i % len(topics)]} number {i}: the agent reported item {i * 7} as done"


async def wait_until_running(counting: Any) -> None:
    """Wait (off the loop) until the worker thread is inside the model call."""
    assert await asyncio.to_thread(counting.entered.wait, 30)


async def test_concurrent_callers_share_model_calls(embedder: Embedder, counting: Any) -> None:
    texts = [sentence(i) for i in range(64)]
    async with MicroBatcher(counting, max_batch=32, max_wait_ms=5) as batcher:
        results = await asyncio.gather(*(batcher.embed([t]) for t in texts))
        stats = batcher.stats()
    assert len(counting.calls) < len(texts)
    assert sum(counting.calls) == len(texts)
    assert max(counting.calls) > 1
    assert stats.batches == len(counting.calls)
    assert stats.texts == len(texts) and stats.requests == len(texts)
    assert stats.last_batch_sizes == tuple(counting.calls)
    one_by_one = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(np.vstack(results), one_by_one, atol=1e-5)


async def test_multi_text_requests_get_their_own_rows_in_order(embedder: Embedder) -> None:
    requests = [[sentence(i), sentence(i + 100), ""] for i in range(5)] + [[sentence(9)]]
    async with MicroBatcher(embedder, max_batch=4) as batcher:
        results = await asyncio.gather(*(batcher.embed(r) for r in requests))
    for request, rows in zip(requests, results, strict=True):
        assert rows.shape == (len(request), 384)
        np.testing.assert_allclose(rows, embedder.embed(request), atol=1e-5)


async def test_a_request_larger_than_a_run_is_split_across_runs_in_order(
    embedder: Embedder, counting: Any
) -> None:
    texts = [sentence(i) for i in range(5)]
    async with MicroBatcher(counting, max_batch=2, max_queued=16) as batcher:
        rows = await batcher.embed(texts)
    assert rows.shape == (5, 384)
    assert counting.calls == [2, 2, 1]
    np.testing.assert_allclose(rows, embedder.embed(texts), atol=1e-5)


async def test_a_query_waits_for_one_run_not_for_a_whole_put_many(counting: Any) -> None:
    counting.gate = threading.Event()
    async with MicroBatcher(counting, max_batch=2, max_queued=64) as batcher:
        put_many = asyncio.create_task(batcher.embed([f"put {i}" for i in range(10)]))
        await wait_until_running(counting)
        query = asyncio.create_task(batcher.embed(["query"], urgent=True))
        await asyncio.sleep(0)
        counting.gate.set()
        await asyncio.gather(put_many, query)
    assert counting.seen[:2] == [["put 0", "put 1"], ["query"]]


# One text per run is what a loaded machine gets: runs are cut to max_run_ms of measured work.
@pytest.mark.parametrize("max_batch", [4, 1])
async def test_a_steady_stream_of_queries_does_not_starve_puts(
    counting: Any, max_batch: int
) -> None:
    async with MicroBatcher(counting, max_batch=max_batch, max_wait_ms=1) as batcher:
        stop = asyncio.Event()

        async def agent(name: str) -> None:
            i = 0
            while not stop.is_set():
                await batcher.embed([f"{name} query {i}"], urgent=True)
                i += 1

        agents = [asyncio.create_task(agent(n)) for n in ("a", "b")]
        await asyncio.sleep(0.05)
        put = asyncio.create_task(batcher.embed(["the put"]))
        await asyncio.sleep(0)  # the put is queued in its first step
        # Counted once the put is queued: under load the worker thread may start runs
        # between a count taken earlier and the put's first step.
        runs_before = len(counting.seen)
        await asyncio.wait_for(put, timeout=30)
        stop.set()
        await asyncio.gather(*agents)
    put_run = next(i for i, run in enumerate(counting.seen) if "the put" in run)
    # At most the run in progress and one queries-only run go first.
    assert put_run - runs_before <= 2, counting.seen[runs_before - 1 : put_run + 1]


async def test_a_cancelled_caller_gives_back_all_its_queued_pieces(counting: Any) -> None:
    counting.gate = threading.Event()
    async with MicroBatcher(counting, max_batch=2, max_queued=64) as batcher:
        running = asyncio.create_task(batcher.embed(["running"]))
        await wait_until_running(counting)
        big = asyncio.create_task(batcher.embed([f"t{i}" for i in range(9)]))
        await asyncio.sleep(0)
        assert batcher.stats().queued_texts == 9
        big.cancel()
        with pytest.raises(asyncio.CancelledError):
            await big
        assert batcher.stats().queued_texts == 0
        counting.gate.set()
        await running
    assert counting.seen == [["running"]]


async def test_empty_request_needs_no_model_call(counting: Any) -> None:
    async with MicroBatcher(counting) as batcher:
        assert (await batcher.embed([])).shape == (0, 384)
    assert counting.calls == []


async def test_a_lone_caller_is_not_held_for_the_batch_window(counting: Any) -> None:
    # A ten-minute window: a lone caller that waited for it would hit the guard below.
    async with MicroBatcher(counting, max_batch=32, max_wait_ms=600_000) as batcher:
        for i in range(3):
            await asyncio.wait_for(batcher.embed([sentence(i)]), timeout=60)
    assert counting.calls == [1, 1, 1]


async def test_full_queue_raises_limit_exceeded_with_a_retry_hint(counting: Any) -> None:
    counting.gate = threading.Event()
    async with MicroBatcher(counting, max_batch=1, max_queued=3) as batcher:
        running = asyncio.create_task(batcher.embed(["occupies the model"]))
        await wait_until_running(counting)
        queued = asyncio.create_task(batcher.embed(["one", "two", "three"]))
        await asyncio.sleep(0)
        with pytest.raises(LimitExceeded) as excinfo:
            await batcher.embed(["no room"])
        assert excinfo.value.limit == "embed_queue"
        assert excinfo.value.retry_after_s is not None and excinfo.value.retry_after_s > 0
        assert batcher.stats().rejected == 1
        counting.gate.set()
        assert (await running).shape == (1, 384)
        assert (await queued).shape == (3, 384)
        # Room again once the queue has drained.
        assert (await batcher.embed(["room now"])).shape == (1, 384)


@pytest.mark.parametrize(
    ("max_batch", "expected"),
    [
        (1, [["running"], ["query"], ["put 0"], ["put 1"]]),
        # Room for all: still, filling the query's run with the queued Put texts would make the
        # query wait for them too.
        (32, [["running"], ["query"], ["put 0", "put 1"]]),
    ],
)
async def test_queries_overtake_queued_texts_in_runs_of_their_own(
    counting: Any, max_batch: int, expected: list[list[str]]
) -> None:
    counting.gate = threading.Event()
    async with MicroBatcher(counting, max_batch=max_batch, max_run_ms=1e9) as batcher:
        running = asyncio.create_task(batcher.embed(["running"]))
        await wait_until_running(counting)
        puts = [asyncio.create_task(batcher.embed([f"put {i}"])) for i in range(2)]
        await asyncio.sleep(0)
        query = asyncio.create_task(batcher.embed(["query"], urgent=True))
        await asyncio.sleep(0)
        counting.gate.set()
        await asyncio.gather(running, query, *puts)
    assert counting.seen == expected


async def test_runs_are_cut_to_max_run_ms_of_measured_work(counting: Any) -> None:
    texts = [sentence(i) for i in range(12)]
    # However fast the model, one text takes more than a microsecond: one text per run.
    async with MicroBatcher(counting, max_batch=32, max_wait_ms=5, max_run_ms=1e-3) as batcher:
        await asyncio.gather(*(batcher.embed([t]) for t in texts))
    assert counting.calls == [1] * len(texts)
    counting.calls.clear()
    # With room for minutes of work, concurrent callers share runs up to max_batch.
    async with MicroBatcher(counting, max_batch=32, max_wait_ms=5, max_run_ms=1e9) as batcher:
        await asyncio.gather(*(batcher.embed([t]) for t in texts))
    assert max(counting.calls) > 1


async def test_a_request_bigger_than_the_queue_is_refused(counting: Any) -> None:
    async with MicroBatcher(counting, max_queued=2) as batcher:
        with pytest.raises(LimitExceeded, match="at most 2") as excinfo:
            await batcher.embed(["a", "b", "c"])
    assert excinfo.value.retry_after_s is None
    assert counting.calls == []


async def test_a_cancelled_queued_caller_leaves_the_others_alone(counting: Any) -> None:
    counting.gate = threading.Event()
    async with MicroBatcher(counting, max_batch=8, max_queued=8) as batcher:
        running = asyncio.create_task(batcher.embed(["first"]))
        await wait_until_running(counting)
        leaving = asyncio.create_task(batcher.embed(["leaves", "early"]))
        staying = asyncio.create_task(batcher.embed(["stays"]))
        await asyncio.sleep(0)
        assert batcher.stats().queued_texts == 3
        leaving.cancel()
        await asyncio.sleep(0)
        assert batcher.stats().queued_texts == 1
        counting.gate.set()
        assert (await running).shape == (1, 384)
        assert (await staying).shape == (1, 384)
        assert leaving.cancelled()
    assert counting.calls == [1, 1]


async def test_a_caller_cancelled_mid_batch_does_not_break_the_batch(counting: Any) -> None:
    counting.gate = threading.Event()
    async with MicroBatcher(counting, max_batch=8, max_wait_ms=0, max_run_ms=1e9) as batcher:
        callers = [asyncio.create_task(batcher.embed([sentence(i)])) for i in range(4)]
        await wait_until_running(counting)
        callers[1].cancel()
        counting.gate.set()
        done = await asyncio.gather(*callers, return_exceptions=True)
    assert isinstance(done[1], asyncio.CancelledError)
    assert all(
        isinstance(r, np.ndarray) and r.shape == (1, 384) for i, r in enumerate(done) if i != 1
    )
    assert counting.calls == [4]


async def test_a_model_error_reaches_its_callers_and_the_batcher_carries_on(
    counting: Any,
) -> None:
    counting.fail_with = RuntimeError("onnxruntime fell over")
    async with MicroBatcher(counting) as batcher:
        results = await asyncio.gather(
            batcher.embed(["a"]), batcher.embed(["b"]), return_exceptions=True
        )
        assert all(isinstance(r, RuntimeError) for r in results)
        assert batcher.stats().failed_batches == 1
        counting.fail_with = None
        assert (await batcher.embed(["c"])).shape == (1, 384)


async def test_close_fails_queued_callers_and_finishes_the_running_batch(counting: Any) -> None:
    counting.gate = threading.Event()
    batcher = MicroBatcher(counting, max_batch=1)
    batcher.start()
    running = asyncio.create_task(batcher.embed(["in the model"]))
    await wait_until_running(counting)
    queued = asyncio.create_task(batcher.embed(["still queued"]))
    await asyncio.sleep(0)
    closing = asyncio.create_task(batcher.aclose())
    await asyncio.sleep(0)
    with pytest.raises(EmbedderClosed):
        await queued
    counting.gate.set()
    await closing
    assert (await running).shape == (1, 384)
    with pytest.raises(EmbedderClosed):
        await batcher.embed(["after close"])
    await batcher.aclose()  # idempotent


async def test_embed_before_start_is_refused(embedder: Embedder) -> None:
    with pytest.raises(EmbedderClosed):
        await MicroBatcher(embedder).embed(["x"])


async def test_a_bare_string_is_refused_rather_than_split_into_characters(
    embedder: Embedder,
) -> None:
    async with MicroBatcher(embedder) as batcher:
        with pytest.raises(TypeError):
            await batcher.embed("not a list")
    with pytest.raises(TypeError):
        embedder.embed("not a list")
