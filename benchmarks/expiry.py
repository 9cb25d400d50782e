"""What acting on expiries when they fall due costs, and how late they are reported.

    python -m benchmarks.expiry [--entries 100000] [--namespaces 100] [--spread 60]
        [--delay 120] [--out benchmarks/results/expiry.json]

A private Valkey and one `sharedctx serve` process. First the idle cost: server and Redis CPU
and Redis commands per second for a few seconds with no entries at all. Then `--entries`
entries go into `--namespaces` namespaces with TTLs of `--delay` seconds plus a share of
`--spread` seconds, spread evenly (the delay lets the load finish first), and the same
figures are taken from when the first entry falls due until every entry has expired, while a
watcher of one namespace measures how late each `expire` event arrives after the entry's
expiry time (the event carries that time). Entries share their text within a namespace, so
loading costs one embedding per namespace.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from sharedctx import AsyncClient, PutItem

from ._procs import SERVER_PIDS, cpu_seconds, redis_server, sharedctx_server


async def _commands(direct: Any) -> int:
    stats = await direct.info("commandstats")
    return sum(int(v["calls"]) for v in stats.values())


class Meter:
    """CPU seconds of the server and of Redis, and Redis commands, between two readings."""

    def __init__(self, direct: Any, server_pid: int, redis_pid: int) -> None:
        self._direct, self._pids = direct, (server_pid, redis_pid)

    async def read(self) -> tuple[float, float, float, int]:
        """(wall time, server CPU, Redis CPU, Redis commands) now."""
        server, redis_pid = self._pids
        return (
            time.monotonic(),
            cpu_seconds(server),
            cpu_seconds(redis_pid),
            await _commands(self._direct),
        )

    @staticmethod
    def rates(
        a: tuple[float, float, float, int], b: tuple[float, float, float, int]
    ) -> dict[str, float]:
        """Per-second figures between readings `a` and `b`."""
        wall = b[0] - a[0]
        return {
            "seconds": round(wall, 1),
            "server_cpu_percent": round(100 * (b[1] - a[1]) / wall, 1),
            "redis_cpu_percent": round(100 * (b[2] - a[2]) / wall, 1),
            "redis_commands_per_second": round((b[3] - a[3]) / wall, 1),
        }


async def _lateness(client: AsyncClient, namespace: str, expected: int, out: list[float]) -> None:
    async for change in client.watch(namespace):
        if change.op == "expire" and change.time is not None:
            out.append(datetime.now(UTC).timestamp() - change.time.timestamp())
            if len(out) == expected:
                return


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """The idle and the expiry figures."""
    per_ns = args.entries // args.namespaces
    async with redis_server() as valkey, sharedctx_server(valkey.url) as port:
        direct = aioredis.Redis.from_url(valkey.url)
        redis_pid = int((await direct.info("server"))["process_id"])
        meter = Meter(direct, SERVER_PIDS[port], redis_pid)
        async with AsyncClient(f"127.0.0.1:{port}", timeout=300) as client:
            await client.put("bench/warm", "k", "x")
            before = await meter.read()
            await asyncio.sleep(args.idle)
            idle = Meter.rates(before, await meter.read())
            late: list[float] = []
            watcher = asyncio.create_task(_lateness(client, "bench/exp-0000", per_ns, late))
            await asyncio.sleep(0.5)  # the watch starts from now
            start = await meter.read()
            first_due = start[0] + args.delay
            for n in range(args.namespaces):
                ns = f"bench/exp-{n:04d}"
                items = [
                    PutItem(
                        key=f"k{i}",
                        content=f"an entry of namespace {n}",
                        ttl_seconds=args.delay + (i * args.spread) // per_ns,
                    )
                    for i in range(per_ns)
                ]
                for chunk in range(0, per_ns, 1000):
                    await client.put_many(ns, items[chunk : chunk + 1000])
            loaded = time.monotonic() - start[0]
            if loaded > args.delay:
                raise SystemExit(f"loading took {loaded:.0f}s: give a --delay longer than that")
            await asyncio.sleep(first_due - time.monotonic())
            start = await meter.read()
            while [n async for n in client.namespaces("bench/exp-")]:
                await asyncio.sleep(0.5)
            end = await meter.read()
            await asyncio.wait_for(watcher, 30)
        await direct.aclose()
    return {
        "entries": per_ns * args.namespaces,
        "namespaces": args.namespaces,
        "ttl_spread_seconds": args.spread,
        "load_seconds": round(loaded, 1),
        "idle": idle,
        "while_expiring": Meter.rates(start, end),
        "expire_event_lateness_seconds": {
            "events": len(late),
            "p50": round(statistics.median(late), 3),
            "p99": round(statistics.quantiles(late, n=100)[98], 3),
            "max": round(max(late), 3),
        },
    }


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--spread", type=int, default=60, help="seconds the TTLs spread over")
    parser.add_argument("--delay", type=int, default=120, help="seconds before the first expires")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of idle measurement")
    parser.add_argument("--out", default="benchmarks/results/expiry.json")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    print(json.dumps(report, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
