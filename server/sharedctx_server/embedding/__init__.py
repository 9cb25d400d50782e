"""Embeddings for sharedctx: the model, the micro-batcher and the query cache.

Built once in `serve()` and injected:

    embedder = Embedder.load(ModelSpec(), settings.cache_dir)              # blocking, ~0.3 s
    batcher = MicroBatcher(embedder, max_batch=32, max_wait_ms=2, max_queued=1024)
    batcher.start()                                                         # inside the loop
    queries = QueryCache(batcher, max_entries=4096)
    ...
    vectors = await batcher.embed(texts)          # Put / PutMany: (n, dim) float32, L2-normalised
    vector = await queries.embed_query(query)     # Fit: (dim,), cached per (model id, text hash)
    ...
    await batcher.aclose()

`embedder.model_id` names the vectors; store it with them and never compare vectors of two ids.
"""

from sharedctx_server.embedding.batcher import BatcherStats, EmbedderClosed, MicroBatcher
from sharedctx_server.embedding.codec import content_hash, from_bytes, to_bytes
from sharedctx_server.embedding.default_model import ModelChecksumError
from sharedctx_server.embedding.embedder import Embedder, Encoder, available_cores
from sharedctx_server.embedding.query_cache import QueryCache, QueryCacheStats
from sharedctx_server.embedding.spec import (
    DEFAULT_MODEL_NAME,
    Compute,
    ModelSpec,
    check_compute,
)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "Compute",
    "BatcherStats",
    "Embedder",
    "EmbedderClosed",
    "Encoder",
    "MicroBatcher",
    "ModelChecksumError",
    "ModelSpec",
    "QueryCache",
    "QueryCacheStats",
    "available_cores",
    "check_compute",
    "content_hash",
    "from_bytes",
    "to_bytes",
]
