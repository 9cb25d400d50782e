"""Query cache: repeated queries skip the model; bounded LRU; model id in the key."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from sharedctx_server.embedding import Embedder, MicroBatcher, QueryCache

QUERY = "which deploy step failed on the staging cluster yesterday"


async def test_a_repeated_query_is_served_without_a_model_call(
    embedder: Embedder, counting: Any
) -> None:
    async with MicroBatcher(counting) as batcher:
        cache = QueryCache(batcher, max_entries=8)
        first = await cache.embed_query(QUERY)
        again = await cache.embed_query(QUERY)
    assert counting.calls == [1]
    assert again is first
    assert cache.stats().hits == 1 and cache.stats().misses == 1
    assert first.shape == (384,)
    np.testing.assert_allclose(first, embedder.embed([QUERY])[0], atol=1e-5)


async def test_cached_vectors_are_read_only(counting: Any) -> None:
    async with MicroBatcher(counting) as batcher:
        vec = await QueryCache(batcher).embed_query(QUERY)
    with pytest.raises(ValueError):
        vec[0] = 1.0


async def test_the_cache_is_bounded_and_evicts_the_least_recent(counting: Any) -> None:
    async with MicroBatcher(counting) as batcher:
        cache = QueryCache(batcher, max_entries=2)
        await cache.embed_query("a")
        await cache.embed_query("b")
        await cache.embed_query("a")  # hit: "b" is now the least recent
        await cache.embed_query("c")  # evicts "b"
        assert len(cache) == 2
        await cache.embed_query("a")  # still cached
        await cache.embed_query("b")  # embedded again
    assert counting.calls == [1, 1, 1, 1]
    assert cache.stats().hits == 2 and cache.stats().misses == 4


async def test_identical_concurrent_queries_share_one_embedding(counting: Any) -> None:
    async with MicroBatcher(counting) as batcher:
        cache = QueryCache(batcher)
        vectors = await asyncio.gather(*(cache.embed_query(QUERY) for _ in range(10)))
    assert counting.calls == [1]
    assert all(v is vectors[0] for v in vectors)


async def test_a_new_model_id_never_reuses_old_vectors(counting: Any) -> None:
    async with MicroBatcher(counting) as batcher:
        cache = QueryCache(batcher)
        await cache.embed_query(QUERY)
        counting.model_id_override = "another-model@000000000000"
        await cache.embed_query(QUERY)
    assert counting.calls == [1, 1]


async def test_errors_are_not_cached(counting: Any) -> None:
    async with MicroBatcher(counting) as batcher:
        cache = QueryCache(batcher)
        counting.fail_with = RuntimeError("model down")
        with pytest.raises(RuntimeError, match="model down"):
            await cache.embed_query(QUERY)
        counting.fail_with = None
        assert (await cache.embed_query(QUERY)).shape == (384,)
    assert len(cache) == 1
