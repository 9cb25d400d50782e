"""What excerpts cost: a Put of a 2,000-line log, and Fit with excerpts on and off.

    python -m benchmarks.perf_excerpts [--lines 2000] [--puts 12] [--out FILE.json]

Put: two `sharedctx serve` processes on one Valkey, one with excerpts on (the default: the
log is cut into segments at Put) and one with SHAREDCTX_EXCERPTS=false (no segments, as
before excerpts existed); the same fresh logs (about 40k tokens each, never seen before, so
every Put computes its compressed form and embedding) go to both, alternating, and the
medians are compared. Fit with excerpts on and off at 10k entries is in benchmarks.perf_fit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.tokens import TokenCounter

from ._procs import redis_server, sharedctx_server

_COMPONENTS = ("api.handler", "db.pool", "cache.client", "jobs.scheduler", "auth.session")
_PATHS = ("/v1/orders", "/v1/users/me", "/v1/search", "/healthz", "/v1/invoices")


def synthetic_log(lines: int, seed: int) -> str:
    """An application log of `lines` lines: requests, pool and job records, now and then a
    warning or an error with a traceback. About 20 tokens a line."""
    rng = random.Random(seed)
    t = datetime(2026, 11, 30, 8, 0, 0) + timedelta(seconds=seed)
    out: list[str] = []
    while len(out) < lines:
        t += timedelta(milliseconds=rng.randint(5, 900))
        stamp = f"{t:%H:%M:%S}"
        component = rng.choice(_COMPONENTS)
        roll = rng.random()
        if roll < 0.6:
            out.append(
                f"{stamp} INFO {component} GET {rng.choice(_PATHS)} 200 {rng.randint(2, 400)}ms"
            )
        elif roll < 0.9:
            out.append(
                f"{stamp} DEBUG {component} pool size={rng.randint(1, 32)} "
                f"idle={rng.randint(0, 16)} waited={rng.randint(0, 50)}ms"
            )
        elif roll < 0.98:
            out.append(f"{stamp} WARN {component} slow query took {rng.randint(500, 5000)}ms")
        else:
            out += [
                f"{stamp} ERROR {component} request failed: upstream timeout",
                "Traceback (most recent call last):",
                '  File "/srv/app/handler.py", line 120, in handle',
                "    return await self.upstream.call(request)",
                f"TimeoutError: upstream did not answer within {rng.randint(1, 30)}s",
            ]
    return "\n".join(out[:lines]) + "\n"


async def _put_ms(stub: Any, namespace: str, key: str, content: str) -> float:
    t0 = time.perf_counter()
    await stub.Put(
        pb.PutRequest(namespace=namespace, key=key, content=content, kind=pb.KIND_LOG),
        timeout=300,
    )
    return (time.perf_counter() - t0) * 1000


async def measure_put(lines: int, puts: int) -> dict[str, Any]:
    """Median Put of a fresh `lines`-line log with excerpts on and off, in one run."""
    logs = [synthetic_log(lines, seed) for seed in range(puts + 2)]
    tokens = TokenCounter().count(logs[0])
    times: dict[str, list[float]] = {"on": [], "off": []}
    async with (
        redis_server() as valkey,
        sharedctx_server(valkey.url) as on_port,
        sharedctx_server(valkey.url, env={"SHAREDCTX_EXCERPTS": "false"}) as off_port,
        grpc.aio.insecure_channel(f"127.0.0.1:{on_port}") as on_channel,
        grpc.aio.insecure_channel(f"127.0.0.1:{off_port}") as off_channel,
    ):
        stubs = {
            "on": pb_grpc.SharedContextStub(on_channel),
            "off": pb_grpc.SharedContextStub(off_channel),
        }
        for name, stub in stubs.items():  # warm up: model loaded, scripts cached
            await _put_ms(stub, f"bench/put-{name}", "warm", logs[-1])
        for i, log in enumerate(logs[:puts]):
            # Alternate which goes first, so neither always runs on a warmer machine.
            order = ("on", "off") if i % 2 == 0 else ("off", "on")
            for name in order:
                # A per-server variant of the log: its own text, never embedded before.
                content = log.replace("\n", f" #{name}\n", 1)
                times[name].append(
                    await _put_ms(stubs[name], f"bench/put-{name}", f"log-{i}", content)
                )
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    return {
        "log_lines": lines,
        "log_tokens": tokens,
        "puts": puts,
        "put_p50_ms_excerpts_on": round(on, 1),
        "put_p50_ms_excerpts_off": round(off, 1),
        "ratio": round(on / off, 2),
        "target_ratio_max": 2.0,
        "met": on / off <= 2.0,
    }


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--puts", type=int, default=12)
    parser.add_argument("--out", default="benchmarks/results/perf_excerpts.json")
    args = parser.parse_args()
    report = asyncio.run(measure_put(args.lines, args.puts))
    print(json.dumps(report, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
