"""Fit latency at 1k / 10k / 100k entries beside Get, and Redis commands per Fit (SCORED;
RELEVANT and RECENT p50 beside it; SCORED with excerpts off beside excerpts on).

Run through `python -m benchmarks.perf --fit-sizes 1000,10000,100000` (or on its own:
`python -m benchmarks.perf_fit`). Entries are generated texts; their embedding vectors are
written into the store before the entries (random unit vectors under the server's model id
and each text's content hash), so loading 100k entries does not take 100k model runs: Put
finds the vectors cached, exactly as it does for repeated content. Queries are real texts
embedded by the server's model (cached after the first round, as agents repeat queries).
One entry in LOG_EVERY is a 200-line log (cut into segments at Put, so Fit's excerpts have
work to do); the Fits alternate excerpts on and off, and the report compares their medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import redis.asyncio as aioredis
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.compress import compress
from sharedctx_server.embedding import content_hash, to_bytes
from sharedctx_server.server import load_embedder
from sharedctx_server.settings import Settings
from sharedctx_server.state import keys as K
from sharedctx_server.tokens import TokenCounter

from ._procs import redis_server, sharedctx_server
from .perf_excerpts import synthetic_log

# One entry in this many is a 200-line log.
LOG_EVERY = 100

_WORDS = (
    "deploy build test error config cache redis token budget agent query latency service "
    "request database timeout retry queue worker memory disk network cluster node pod log "
    "metric trace span user session payment order invoice email report schedule backup"
).split()


@dataclass
class FitResult:
    """Fit at one namespace size."""

    entries: int
    fit_p50_ms: float
    fit_p99_ms: float
    server_p50_ms: float
    server_p99_ms: float
    get_p50_ms: float
    redis_commands_per_fit: float
    # The turn strategies at the same size (end to end; no targets, for comparison).
    relevant_p50_ms: float = 0.0
    recent_p50_ms: float = 0.0
    # SCORED with `excerpts: false`, alternating with the default Fits above.
    fit_no_excerpts_p50_ms: float = 0.0


def _text(rng: random.Random, i: int) -> str:
    if i % LOG_EVERY == LOG_EVERY - 1:
        return synthetic_log(200, seed=i)
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(15, 40)))
    return f"entry {i}: {words}"


def _embedded_text(text: str, tokens: TokenCounter) -> str:
    """The text the server embeds for an entry of `text`: its compressed form (see
    model.NewEntry.embedded_text), so the vector written ahead is the one Put looks up."""
    if len(text) < 2000:
        return text  # the short entries are never compressed
    return compress(text, count_tokens=tokens.count).text


async def _fill(
    stub: Any, direct: Any, namespace: str, model_id: str, dim: int, count: int
) -> None:
    rng = random.Random(count)
    vectors = np.random.default_rng(count).standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [_text(rng, i) for i in range(count)]
    tokens = TokenCounter()
    emb_key = K.namespace(namespace, model_id).emb
    for start in range(0, count, 1000):
        chunk = texts[start : start + 1000]
        await direct.hset(
            emb_key,
            mapping={
                content_hash(_embedded_text(t, tokens)): to_bytes(v)
                for t, v in zip(chunk, vectors[start : start + 1000], strict=True)
            },
        )
        await stub.PutMany(
            pb.PutManyRequest(
                namespace=namespace,
                entries=[
                    pb.PutRequest(
                        key=f"e{start + j:06d}",
                        content=t,
                        kind=pb.KIND_LOG if "\n" in t else pb.KIND_NOTE,
                    )
                    for j, t in enumerate(chunk)
                ],
            ),
            timeout=600,
        )


async def _commandstats(direct: Any) -> dict[str, int]:
    stats = await direct.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


async def measure(sizes: list[int], rounds: int = 60) -> list[FitResult]:
    """Fit and Get latency per namespace size, on a private Valkey and server process."""
    embedder = load_embedder(Settings())
    results = []
    queries = [
        "why did the deploy fail with a timeout",
        "redis cluster node memory report",
        "payment service latency during the backup schedule",
        "which worker retried the queue request",
    ]
    async with redis_server() as valkey, sharedctx_server(valkey.url) as port:
        direct = aioredis.Redis.from_url(valkey.url)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.SharedContextStub(channel)
            for size in sizes:
                ns = f"bench/fit-{size}"
                await _fill(stub, direct, ns, embedder.model_id, embedder.dim, size)
                for q in queries:  # load the namespace cache, embed the queries
                    await stub.Fit(pb.FitRequest(namespace=ns, query=q, budget_tokens=4000))
                fit_ms, server_ms, get_ms, whole_ms = [], [], [], []
                before = await _commandstats(direct)
                for r in range(rounds):
                    t0 = time.perf_counter()
                    reply = await stub.Fit(
                        pb.FitRequest(namespace=ns, query=queries[r % 4], budget_tokens=4000)
                    )
                    fit_ms.append((time.perf_counter() - t0) * 1000)
                    server_ms.append(reply.server_ms)
                    t0 = time.perf_counter()
                    await stub.Fit(
                        pb.FitRequest(
                            namespace=ns, query=queries[r % 4], budget_tokens=4000, excerpts=False
                        )
                    )
                    whole_ms.append((time.perf_counter() - t0) * 1000)
                after = await _commandstats(direct)
                turn_ms: dict[int, list[float]] = {}
                for strategy in (pb.STRATEGY_RELEVANT, pb.STRATEGY_RECENT):
                    req = pb.FitRequest(namespace=ns, query=queries[0], budget_tokens=4000,
                                        strategy=strategy)  # fmt: skip
                    await stub.Fit(req)  # the first builds the namespace's turns
                    for _ in range(max(5, rounds // 4)):
                        t0 = time.perf_counter()
                        await stub.Fit(req)
                        turn_ms.setdefault(strategy, []).append((time.perf_counter() - t0) * 1000)
                for r in range(rounds):
                    t0 = time.perf_counter()
                    await stub.Get(pb.GetRequest(namespace=ns, key=f"e{r % size:06d}"))
                    get_ms.append((time.perf_counter() - t0) * 1000)
                # Every command the Fits caused, scripts' inner commands included, minus the
                # INFO that took the reading and the health checker's PING/TIME (about one a
                # second, however many Fits run).
                total = sum(after.values()) - sum(before.values())
                total -= sum(after.get(c, 0) - before.get(c, 0) for c in ("info", "ping", "time"))
                total /= 2  # two Fits a round
                results.append(
                    FitResult(
                        entries=size,
                        fit_p50_ms=round(statistics.median(fit_ms), 2),
                        fit_p99_ms=round(_pct(fit_ms, 99), 2),
                        server_p50_ms=round(statistics.median(server_ms), 2),
                        server_p99_ms=round(_pct(server_ms, 99), 2),
                        get_p50_ms=round(statistics.median(get_ms), 2),
                        redis_commands_per_fit=round(total / rounds, 2),
                        relevant_p50_ms=round(statistics.median(turn_ms[pb.STRATEGY_RELEVANT]), 2),
                        recent_p50_ms=round(statistics.median(turn_ms[pb.STRATEGY_RECENT]), 2),
                        fit_no_excerpts_p50_ms=round(statistics.median(whole_ms), 2),
                    )
                )
                print(json.dumps(asdict(results[-1])), flush=True)
        await direct.aclose()
    return results


def query_embedding_p50_ms(repeats: int = 30) -> float:
    """Median time to embed one new 30-word query with the default model."""
    embedder = load_embedder(Settings())
    rng = random.Random(7)
    times = []
    for _ in range(repeats):
        query = " ".join(rng.choice(_WORDS) for _ in range(30))
        t0 = time.perf_counter()
        embedder.embed([query])
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 2)


def report(results: list[FitResult], embed_p50: float) -> dict[str, Any]:
    """The figures and the issue's targets."""
    by_size = {r.entries: r for r in results}
    out: dict[str, Any] = {"fit": [asdict(r) for r in results], "query_embed_p50_ms": embed_p50}
    if 10_000 in by_size:
        r = by_size[10_000]
        limit = 5 * r.get_p50_ms + embed_p50
        out["target_10k"] = {"fit_p50_ms": r.fit_p50_ms, "limit_ms": round(limit, 2),
                             "met": r.fit_p50_ms <= limit}  # fmt: skip
    if 10_000 in by_size and 100_000 in by_size:
        ratio = by_size[100_000].fit_p50_ms / by_size[10_000].fit_p50_ms
        out["target_100k_vs_10k"] = {"ratio": round(ratio, 2), "met": ratio <= 10}
    out["target_excerpts_vs_off"] = {
        str(r.entries): round(r.fit_p50_ms / r.fit_no_excerpts_p50_ms, 2) for r in results
    }
    if 10_000 in by_size:
        r = by_size[10_000]
        ratio = r.fit_p50_ms / r.fit_no_excerpts_p50_ms
        out["target_excerpts_10k"] = {"ratio": round(ratio, 2), "met": ratio <= 1.5}
    out["target_redis_commands"] = {
        "max_commands_per_fit": max(r.redis_commands_per_fit for r in results),
        "met": all(r.redis_commands_per_fit <= 2 for r in results),
    }
    return out


def main() -> None:
    """Standalone entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fit-sizes", default="1000,10000,100000")
    parser.add_argument("--out", default="benchmarks/results/perf_fit.json")
    args = parser.parse_args()
    results = asyncio.run(measure([int(s) for s in args.fit_sizes.split(",")]))
    summary = report(results, query_embedding_p50_ms())
    print(json.dumps(summary, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
