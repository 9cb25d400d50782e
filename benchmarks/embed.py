"""Embedding throughput and query latency: raw fastembed vs the MicroBatcher and real Puts.

    python -m benchmarks.embed [--n 192] [--callers 32] [--queries 200] [--out PATH]

Throughput: the same N generated texts (tool outputs, logs and chat lines of 30-150 words),
embedded by fastembed directly (`TextEmbedding.embed` at its default batch size of 256, at the
batcher's max batch, and at 1, which is the fastest on a small CPU), by `Embedder.embed`,
through the MicroBatcher by `--callers` concurrent callers sending one text each, and stored
as new entries through a real `sharedctx serve` process on a private Valkey: `--callers`
concurrent Put calls, and PutMany in batches of `--max-batch`. The ratios that count are Put
(and PutMany) against the best raw configuration. Every round appends its number to the texts,
so no round finds its embeddings cached. The configurations are interleaved round by round and
the median is kept, because the machine is shared and its load moves during a run.

Query latency: distinct 30-word queries (so every one misses the cache) through QueryCache ->
MicroBatcher by a single caller, the same queries straight into the model, for the overhead,
and queries through the batcher while 32 callers keep it busy with Put texts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from sharedctx import AsyncClient, PutItem
from sharedctx_server.embedding import (
    Embedder,
    MicroBatcher,
    ModelSpec,
    QueryCache,
    available_cores,
)
from sharedctx_server.settings import default_cache_dir

from ._procs import redis_server, sharedctx_server

TARGET_THROUGHPUT_RATIO = 0.8
TARGET_QUERY_P50_MS = 5.0

_SERVICES = ["payments-api", "auth-service", "search-indexer", "web-frontend", "billing-worker"]
_FILES = ["src/app/handlers.py", "cmd/server/main.go", "lib/cache.ts", "tests/test_fit.py"]
_PHRASES = [
    "the request to {svc} timed out after 30 seconds while waiting for the database",
    "pod {svc}-7f9c8 restarted 3 times in the last hour with exit code 137 (OOMKilled)",
    "ran pytest on {file}: 42 passed, 2 failed, 1 skipped in 8.31s",
    "the user asked whether we can roll back the last deploy of {svc} before the release",
    "grep found 17 matches for 'retry_after' in {file} and two of them ignore the header",
    "latency p99 rose from 180 ms to 2.4 s right after the config change to {svc}",
    "I think the cache key is missing the tenant id, so two namespaces could collide",
    "error: connection refused (os error 111) when dialing redis at 10.0.3.7:6379",
    "the migration added a nullable column and backfilled 1.2 million rows in batches",
    "agent note: {svc} depends on the feature flag new-checkout being enabled in staging",
    "warning: deprecated call to parse_config() in {file} line 218, use load_settings()",
    "summary of the thread: we agreed to ship behind a flag and measure error rates first",
    "curl returned HTTP 503 with body upstream connect error or disconnect/reset",
    "the compressed form keeps the first and last lines of the stack trace and drops the rest",
    "can you check why the nightly build of {svc} failed on the integration tests again",
    "disk usage on node-4 is at 91 percent, mostly container logs older than two weeks",
]
_QUERY_WORDS = (
    "why did the deploy fail after the config change and which service restarted first when "
    "the cache key missed the tenant so that latency rose while tests passed on staging but "
    "not in production last night according to the logs and the agent notes"
).split()


def realistic_texts(n: int, rng: random.Random) -> list[str]:
    """Return n texts of 30-150 words made of tool-output, log and chat phrases."""
    texts = []
    for _ in range(n):
        goal = rng.randint(30, 150)
        words: list[str] = []
        while len(words) < goal:
            phrase = rng.choice(_PHRASES).format(svc=rng.choice(_SERVICES), file=rng.choice(_FILES))
            words.extend(phrase.split())
        texts.append(" ".join(words[:goal]))
    return texts


def distinct_queries(n: int, rng: random.Random) -> list[str]:
    """Return n distinct 30-word queries."""
    return [f"{i} " + " ".join(rng.choice(_QUERY_WORDS) for _ in range(29)) for i in range(n)]


def timed(fn: Callable[[], object]) -> float:
    """Return the wall time of fn() in seconds."""
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


async def through_batcher(batcher: MicroBatcher, texts: Sequence[str], callers: int) -> float:
    """Embed texts one per call from `callers` concurrent callers; return the wall time."""
    pending = iter(texts)

    async def caller() -> None:
        for text in pending:
            await batcher.embed([text])

    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return time.perf_counter() - started


async def through_put(
    client: AsyncClient, namespace: str, texts: Sequence[str], callers: int
) -> float:
    """Store texts as new entries, one Put per text from `callers` concurrent callers."""
    pending = iter(enumerate(texts))

    async def caller() -> None:
        for i, text in pending:
            await client.put(namespace, f"t{i}", text)

    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return time.perf_counter() - started


async def through_put_many(
    client: AsyncClient, namespace: str, texts: Sequence[str], batch: int
) -> float:
    """Store texts as new entries, PutMany by PutMany of `batch` entries."""
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        await client.put_many(
            namespace, [PutItem(key=f"t{start + j}", content=t) for j, t in enumerate(chunk)]
        )
    return time.perf_counter() - started


async def query_latencies(cache: QueryCache, queries: Sequence[str]) -> list[float]:
    """Return the latency in ms of each (uncached) query, one caller at a time."""
    latencies = []
    for query in queries:
        started = time.perf_counter()
        await cache.embed_query(query)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def queries_under_put_load(
    batcher: MicroBatcher, queries: Sequence[str], texts: Sequence[str], callers: int
) -> list[float]:
    """Latency in ms of queries (urgent, one every 50 ms) while `callers` concurrent callers
    keep the batcher busy embedding Put texts: what a Fit pays during a burst of writes."""
    stop = asyncio.Event()

    async def putter(offset: int) -> None:
        i = offset
        while not stop.is_set():
            await batcher.embed([texts[i % len(texts)]])
            i += callers

    putters = [asyncio.create_task(putter(c)) for c in range(callers)]
    await asyncio.sleep(1.0)  # let the queue fill
    latencies = []
    for query in queries:
        started = time.perf_counter()
        await batcher.embed([query], urgent=True)
        latencies.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.gather(*putters)
    return latencies


@dataclass
class Result:
    name: str
    texts_per_s: float
    runs: list[float]


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    texts = realistic_texts(args.n, rng)
    queries = distinct_queries(args.queries, rng)
    warmup = distinct_queries(20, random.Random(args.seed + 1))
    embedder = Embedder.load(ModelSpec(), args.cache_dir, threads=args.threads)
    model = embedder.fastembed_model
    tokens = [min(embedder.max_tokens or 512, model.token_count(t)) for t in texts]

    embedder.embed(texts[:16])  # warm-up: first runs allocate onnxruntime's arenas
    configs: dict[str, list[float]] = {
        "fastembed raw, batch_size=256 (default)": [],
        f"fastembed raw, batch_size={args.max_batch}": [],
        "fastembed raw, batch_size=1": [],
        "Embedder.embed (length-sorted runs)": [],
        f"MicroBatcher, {args.callers} callers x 1 text": [],
        f"sharedctx Put over gRPC, {args.callers} callers": [],
        f"sharedctx PutMany over gRPC, batches of {args.max_batch}": [],
    }
    names = list(configs)
    load_before = os.getloadavg()
    server_env = {"SHAREDCTX_CACHE_DIR": str(args.cache_dir)}
    if args.threads:
        server_env["SHAREDCTX_EMBEDDING_THREADS"] = str(args.threads)
    async with AsyncExitStack() as stack:
        batcher = await stack.enter_async_context(
            MicroBatcher(
                embedder,
                max_batch=args.max_batch,
                max_wait_ms=args.max_wait_ms,
                max_queued=max(1024, args.callers * 4),
            )
        )
        valkey = await stack.enter_async_context(redis_server())
        port = await stack.enter_async_context(sharedctx_server(valkey.url, env=server_env))
        client = await stack.enter_async_context(AsyncClient(f"127.0.0.1:{port}", timeout=600))
        for r in range(args.rounds):
            batch = [f"{t} (round {r})" for t in texts]
            for name, size in ((names[0], 256), (names[1], args.max_batch), (names[2], 1)):
                configs[name].append(
                    timed(lambda b=batch, n=size: list(model.embed(b, batch_size=n)))
                )
            configs[names[3]].append(timed(lambda b=batch: embedder.embed(b)))
            configs[names[4]].append(await through_batcher(batcher, batch, args.callers))
            configs[names[5]].append(
                await through_put(client, f"bench/put-{r}", batch, args.callers)
            )
            # Other texts than the Put round's (those are cached now): the round's own prefix.
            fresh = [f"(many {r}) {t}" for t in texts]
            configs[names[6]].append(
                await through_put_many(client, f"bench/putmany-{r}", fresh, args.max_batch)
            )
        sizes = batcher.stats().last_batch_sizes

    async with MicroBatcher(
        embedder, max_batch=args.max_batch, max_wait_ms=args.max_wait_ms
    ) as batcher:
        cache = QueryCache(batcher, max_entries=len(queries) + len(warmup))
        await query_latencies(cache, warmup)
        batched_ms = await query_latencies(cache, queries)
        assert cache.stats().hits == 0
        loaded_ms = await queries_under_put_load(
            batcher, distinct_queries(40, random.Random(args.seed + 2)), texts, args.callers
        )
    direct_ms = []
    for query in queries[::-1]:  # reversed: distinct order from the batched pass
        started = time.perf_counter()
        embedder.embed([query])
        direct_ms.append((time.perf_counter() - started) * 1000)
    load_after = os.getloadavg()
    query_tokens = statistics.median(model.token_count(q) for q in queries)

    results = [
        Result(name, args.n / statistics.median(runs), [args.n / r for r in runs])
        for name, runs in configs.items()
    ]
    raw_default, batched, put, put_many = results[0], results[4], results[5], results[6]
    best_raw = max(r.texts_per_s for r in results[:3])
    return {
        "machine": {
            "cores": available_cores(),
            "onnx_threads": args.threads or available_cores(),
            "loadavg_before": load_before,
            "loadavg_after": load_after,
            "cpu": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "onnxruntime": version("onnxruntime"),
            "fastembed": version("fastembed"),
        },
        "model_id": embedder.model_id,
        "throughput": {
            "n_texts": args.n,
            "rounds": args.rounds,
            "tokens_mean": statistics.mean(tokens),
            "tokens_max": max(tokens),
            "results": [
                {"name": r.name, "texts_per_s": r.texts_per_s, "runs": r.runs} for r in results
            ],
            "batcher_vs_raw_default": batched.texts_per_s / raw_default.texts_per_s,
            "batcher_vs_best_raw": batched.texts_per_s / best_raw,
            "put_vs_best_raw": put.texts_per_s / best_raw,
            "put_many_vs_best_raw": put_many.texts_per_s / best_raw,
            "target_ratio": TARGET_THROUGHPUT_RATIO,
            "batcher_last_batch_sizes": list(sizes),
            "max_batch": args.max_batch,
            "max_wait_ms": args.max_wait_ms,
        },
        "query": {
            "n_queries": len(queries),
            "tokens_median": query_tokens,
            "through_batcher_ms": {
                "p50": percentile(batched_ms, 50),
                "p90": percentile(batched_ms, 90),
                "p99": percentile(batched_ms, 99),
            },
            "model_only_ms": {
                "p50": percentile(direct_ms, 50),
                "p90": percentile(direct_ms, 90),
                "p99": percentile(direct_ms, 99),
            },
            "under_put_load_ms": {
                "p50": percentile(loaded_ms, 50),
                "p90": percentile(loaded_ms, 90),
                "p99": percentile(loaded_ms, 99),
            },
            "target_p50_ms": TARGET_QUERY_P50_MS,
        },
    }


def print_report(report: dict[str, Any]) -> None:
    m, t, q = report["machine"], report["throughput"], report["query"]
    print(
        f"model {report['model_id']}  onnx threads {m['onnx_threads']}/{m['cores']} cores  "
        f"load {m['loadavg_before'][0]:.2f} -> {m['loadavg_after'][0]:.2f}"
    )
    print(
        f"\nthroughput: {t['n_texts']} texts, {t['tokens_mean']:.0f} tokens mean "
        f"({t['tokens_max']} max), median of {t['rounds']} interleaved rounds"
    )
    print(f"  {'configuration':<44} {'texts/s':>9}  {'x raw default':>13}")
    base = t["results"][0]["texts_per_s"]
    for r in t["results"]:
        print(f"  {r['name']:<44} {r['texts_per_s']:>9.1f}  {r['texts_per_s'] / base:>12.2f}x")
    print(
        f"  batcher / raw: {t['batcher_vs_raw_default']:.2f}x vs default, "
        f"{t['batcher_vs_best_raw']:.2f}x vs best raw"
    )
    for label, key in (("Put", "put_vs_best_raw"), ("PutMany", "put_many_vs_best_raw")):
        verdict = "met" if t[key] >= t["target_ratio"] else "NOT met"
        print(
            f"  {label} (new content) / best raw: {t[key]:.2f}x "
            f"(target >= {t['target_ratio']}: {verdict})"
        )
    sizes = t["batcher_last_batch_sizes"]
    print(
        f"  batcher batch sizes (last {len(sizes)}): median {statistics.median(sizes):.0f}, "
        f"max {max(sizes)}"
    )
    b, d = q["through_batcher_ms"], q["model_only_ms"]
    verdict = "met" if b["p50"] <= q["target_p50_ms"] else "NOT met"
    print(
        f"\nquery: {q['n_queries']} distinct 30-word queries ({q['tokens_median']:.0f} tokens), "
        "one caller, uncached"
    )
    print(f"  {'path':<44} {'p50 ms':>9} {'p90 ms':>9} {'p99 ms':>9}")
    print(
        f"  {'QueryCache -> MicroBatcher -> model':<44} "
        f"{b['p50']:>9.2f} {b['p90']:>9.2f} {b['p99']:>9.2f}"
    )
    print(
        f"  {'model only (Embedder.embed)':<44} {d['p50']:>9.2f} {d['p90']:>9.2f} {d['p99']:>9.2f}"
    )
    u = q["under_put_load_ms"]
    label = "through the batcher, 32 Put callers busy"
    print(f"  {label:<44} {u['p50']:>9.2f} {u['p90']:>9.2f} {u['p99']:>9.2f}")
    print(f"  target p50 <= {q['target_p50_ms']} ms: {verdict}")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark, print the table and write the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=192, help="texts for the throughput runs")
    parser.add_argument("--callers", type=int, default=32)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-batch", type=int, default=32)
    parser.add_argument("--max-wait-ms", type=float, default=2.0)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/embed.json"))
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    print_report(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
