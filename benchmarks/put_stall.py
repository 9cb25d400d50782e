"""How long other callers wait while a server derives large Puts or indexes them for Fit.

    python -m benchmarks.put_stall [--puts 5] [--out FILE.json]

One `sharedctx serve` process on a private Valkey. A caller Gets a small entry every 10 ms
throughout; another Puts, one after another, fresh content of three shapes: a 60 KiB Python
source file, a 600-line application log, and 32,000 one-character lines (the most lines a
64 KiB Put can hold); then Fits a namespace that was just given those and a 200,000-line
output, which its first Fit reads and indexes (terms of every segment). Both are pure
Python: where they run on the event loop, every other RPC of that process waits. Printed side
by side: the Gets' p50 and worst latency while idle, during each shape's Puts (with the Puts'
own median) and during that Fit (with its time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import grpc
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc

from ._procs import redis_server, sharedctx_server
from .perf_excerpts import synthetic_log

_NS = "bench/put-stall"
_FIT_NS = "bench/put-stall-fit"
_GET_EVERY_S = 0.01


def _source(seed: int) -> str:
    """About 60 KiB of this interpreter's own standard library, made fresh by `seed`."""
    text = Path(argparse.__file__).read_text(encoding="utf-8")[: 60 * 1024]
    return f"# copy {seed}\n{text}"


def _shapes(seed: int) -> dict[str, str]:
    return {
        "source_60k": _source(seed),
        "log_600_lines": synthetic_log(600, seed),
        "one_char_lines_32k": f"{seed}\n" + "b\n" * 32_000,
    }


async def _poll(stub: Any, stop: asyncio.Event, out: list[float]) -> None:
    """Get the small entry every _GET_EVERY_S until `stop`, recording each latency (ms)."""
    while not stop.is_set():
        t0 = time.perf_counter()
        await stub.Get(pb.GetRequest(namespace=_NS, key="small"), timeout=60)
        out.append((time.perf_counter() - t0) * 1000)
        await asyncio.sleep(_GET_EVERY_S)


async def _gets_during(stub: Any, work: Any) -> tuple[list[float], float]:
    """The Gets' latencies while `work()` runs, and how long it took (ms)."""
    latencies: list[float] = []
    stop = asyncio.Event()
    poller = asyncio.create_task(_poll(stub, stop, latencies))
    await asyncio.sleep(0.2)
    latencies.clear()  # only those that overlap the work
    t0 = time.perf_counter()
    await work()
    took = (time.perf_counter() - t0) * 1000
    stop.set()
    await poller
    return latencies, took


def _summary(latencies: list[float]) -> dict[str, float]:
    return {
        "get_p50_ms": round(statistics.median(latencies), 1),
        "get_max_ms": round(max(latencies), 1),
    }


async def measure(puts: int) -> dict[str, Any]:
    """Get latency idle and during each shape's Puts, in one run on one server."""
    report: dict[str, Any] = {"puts_per_shape": puts}
    async with (
        redis_server() as valkey,
        sharedctx_server(valkey.url) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as put_channel,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as get_channel,
    ):
        putter = pb_grpc.SharedContextStub(put_channel)
        getter = pb_grpc.SharedContextStub(get_channel)
        await putter.Put(pb.PutRequest(namespace=_NS, key="small", content="hello"), timeout=60)
        for name, text in _shapes(-1).items():  # warm up: model loaded, scripts cached
            await putter.Put(pb.PutRequest(namespace=_NS, key=f"warm-{name}", content=text))
        idle, _ = await _gets_during(getter, lambda: asyncio.sleep(2.0))
        report["idle"] = _summary(idle)
        for name in _shapes(0):
            latencies: list[float] = []
            took: list[float] = []
            for i in range(puts):
                content = _shapes(i)[name]

                async def put(key: str = f"{name}-{i}", content: str = content) -> None:
                    request = pb.PutRequest(
                        namespace=_NS, key=key, content=content, kind=pb.KIND_TOOL_OUTPUT
                    )
                    await putter.Put(request, timeout=300)

                during, ms = await _gets_during(getter, put)
                latencies += during
                took.append(ms)
            report[name] = {
                **_summary(latencies),
                "put_p50_ms": round(statistics.median(took), 1),
                "get_max_vs_idle": round(max(latencies) / report["idle"]["get_max_ms"], 1),
            }
        fresh = {**_shapes(puts), "lines_200k": f"{puts}\n" + "b\n" * 200_000}
        for name, text in fresh.items():
            request = pb.PutRequest(
                namespace=_FIT_NS, key=name, content=text, kind=pb.KIND_TOOL_OUTPUT
            )
            await putter.Put(request, timeout=300)

        async def fit() -> None:
            request = pb.FitRequest(
                namespace=_FIT_NS, query="a conflicting option", budget_tokens=800
            )
            await putter.Fit(request, timeout=300)

        during, ms = await _gets_during(getter, fit)
        report["first_fit"] = {**_summary(during), "fit_ms": round(ms, 1)}
    return report


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--puts", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/put_stall.json")
    args = parser.parse_args()
    report = asyncio.run(measure(args.puts))
    print(f"{'while':22s} {'Get p50 ms':>11s} {'Get max ms':>11s} {'its own ms':>11s}")
    for name, row in report.items():
        if isinstance(row, dict):
            own = row.get("put_p50_ms", row.get("fit_ms"))
            own_text = f"{own:11.1f}" if own is not None else f"{'-':>11s}"
            print(f"{name:22s} {row['get_p50_ms']:11.1f} {row['get_max_ms']:11.1f} {own_text}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
