"""Put/Get throughput and latency beside a bare gRPC echo and direct redis-py, in one run.

    python -m benchmarks.perf [--requests 4000] [--rounds 3] [--out FILE.json]

Everything runs on this machine on loopback: one Valkey, a `sharedctx serve` process, the
echo server process and, for Get, a bare gRPC server doing one redis-py GET per call (the floor
under any Python gRPC service that reads Redis per request); this process generates the load
(the same generator for every target, so its own cost cancels out of the ratios).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import grpc
import redis.asyncio as aioredis
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc

from . import perf_excerpts, perf_fit
from ._procs import (
    SERVER_PIDS,
    cpu_seconds,
    cpu_seconds_with_children,
    echo_server,
    redis_echo_server,
    redis_server,
    sharedctx_server,
)
from .echo_server import ECHO_METHOD, request_for
from .redis_echo_server import GET_METHOD

NS = "bench/perf"


@dataclass
class Result:
    """One target at one concurrency."""

    target: str
    op: str
    concurrency: int
    requests: int
    throughput: float
    p50_ms: float
    p99_ms: float
    # CPU microseconds per call spent by the server process, by Redis and by this load
    # generator. The machine's cores are all busy at 32 callers, so throughput there is about
    # cores / (sum of the three): the figures say where a gap to the echo comes from.
    server_cpu_us: float
    redis_cpu_us: float
    client_cpu_us: float


class CpuMeter:
    """CPU time used by a set of processes (server, Redis) and by this one, across a run."""

    def __init__(self, server_pid: int | None, redis_pid: int) -> None:
        self._pids = (server_pid, redis_pid)

    def sample(self) -> tuple[float, float, float]:
        """(server, redis, this process) CPU seconds so far."""
        server, redis_pid = self._pids
        own = resource.getrusage(resource.RUSAGE_SELF)
        return (
            cpu_seconds_with_children(server) if server is not None else 0.0,
            cpu_seconds(redis_pid),
            own.ru_utime + own.ru_stime,
        )


async def run_load(
    call: Callable[[int], Awaitable[object]], concurrency: int, requests: int, cpu: CpuMeter
) -> tuple[float, ...]:
    """Run `requests` calls from `concurrency` workers and measure them: Result's figures
    from throughput on, in its order."""
    latencies: list[float] = []
    per_worker = max(1, requests // concurrency)

    async def worker(w: int) -> None:
        for i in range(per_worker):
            t0 = time.perf_counter()
            await call(w * per_worker + i)
            latencies.append(time.perf_counter() - t0)

    # Warm-up: connections, script cache, code paths.
    for i in range(min(50, requests)):
        await call(i)
    before = cpu.sample()
    started = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    elapsed = time.perf_counter() - started
    used = [(b - a) * 1e6 / len(latencies) for a, b in zip(before, cpu.sample(), strict=True)]
    q = statistics.quantiles(latencies, n=100)
    return (len(latencies) / elapsed, q[49] * 1000, q[98] * 1000, *used)


async def bench(requests: int, payload_bytes: int, keys: int, rounds: int = 3) -> list[Result]:
    """Measure every target at 1 and 32 concurrent callers (medians of `rounds` rounds)."""
    payload = ("lorem ipsum dolor sit amet " * (payload_bytes // 27 + 1))[:payload_bytes]
    results: list[Result] = []
    async with redis_server() as valkey:
        async with (
            sharedctx_server(valkey.url) as sc_port,
            sharedctx_server(valkey.url, workers=2) as w2_port,
            echo_server() as echo_port,
            redis_echo_server(valkey.url) as floor_port,
        ):
            sc_channel = grpc.aio.insecure_channel(f"127.0.0.1:{sc_port}")
            echo_channel = grpc.aio.insecure_channel(f"127.0.0.1:{echo_port}")
            floor_channel = grpc.aio.insecure_channel(f"127.0.0.1:{floor_port}")
            floor_get = floor_channel.unary_unary(GET_METHOD)
            # Two workers share the port by connection, and one channel is one connection: the
            # load goes over 16 channels of their own (gRPC would otherwise share one), as many
            # agents' connections would, and the kernel spreads them over the workers.
            w2_channels = [
                grpc.aio.insecure_channel(
                    f"127.0.0.1:{w2_port}", options=[("grpc.use_local_subchannel_pool", 1)]
                )
                for _ in range(16)
            ]
            w2 = [pb_grpc.SharedContextStub(channel) for channel in w2_channels]
            direct = aioredis.Redis.from_url(valkey.url)
            redis_pid = int((await direct.info("server"))["process_id"])
            meters = {
                name: CpuMeter(SERVER_PIDS.get(port) if port else None, redis_pid)
                for name, port in (
                    ("sharedctx", sc_port),
                    ("sharedctx_w2", w2_port),
                    ("grpc_echo", echo_port),
                    ("grpc_redis", floor_port),
                    ("redis_py", None),
                )
            }
            stub = pb_grpc.SharedContextStub(sc_channel)
            echo = echo_channel.unary_unary(ECHO_METHOD)
            get_size = len(pb.GetRequest(namespace=NS, key="k00000").SerializeToString())
            put_reply = 180  # about a PutResponse's size
            put_size = len(
                pb.PutRequest(namespace=NS, key="k00000", content=payload).SerializeToString()
            )
            await stub.PutMany(
                pb.PutManyRequest(
                    namespace=NS,
                    entries=[pb.PutRequest(key=f"k{i:05d}", content=payload) for i in range(keys)],
                )
            )
            await direct.mset({f"direct:{i:05d}": payload for i in range(keys)})

            targets: dict[str, dict[str, Callable[[int], Awaitable[object]]]] = {
                "get": {
                    "sharedctx": lambda i: stub.Get(
                        pb.GetRequest(namespace=NS, key=f"k{i % keys:05d}")
                    ),
                    "sharedctx_w2": lambda i: w2[i % 16].Get(
                        pb.GetRequest(namespace=NS, key=f"k{i % keys:05d}")
                    ),
                    "grpc_echo": lambda i: echo(request_for(payload_bytes, get_size)),
                    "grpc_redis": lambda i: floor_get(f"direct:{i % keys:05d}".encode()),
                    "redis_py": lambda i: direct.get(f"direct:{i % keys:05d}"),
                },
                "put": {
                    "sharedctx": lambda i: stub.Put(
                        pb.PutRequest(namespace=NS, key=f"k{i % keys:05d}", content=payload)
                    ),
                    "sharedctx_w2": lambda i: w2[i % 16].Put(
                        pb.PutRequest(namespace=NS, key=f"k{i % keys:05d}", content=payload)
                    ),
                    "grpc_echo": lambda i: echo(request_for(put_reply, put_size)),
                    "redis_py": lambda i: direct.set(f"direct:{i % keys:05d}", payload),
                },
            }
            for op, by_target in targets.items():
                for concurrency in (1, 32):
                    n = requests if concurrency > 1 else max(200, requests // 4)
                    # Targets interleaved round by round, medians kept: the machine is shared
                    # and its speed drifts, which a single pass per target would turn into
                    # ratios.
                    runs: dict[str, list[tuple[float, ...]]] = {t: [] for t in by_target}
                    for _ in range(rounds):
                        for name, call in by_target.items():
                            runs[name].append(await run_load(call, concurrency, n, meters[name]))
                    for name, measured in runs.items():
                        medians = (
                            statistics.median(column) for column in zip(*measured, strict=True)
                        )
                        results.append(Result(name, op, concurrency, n, *medians))
            for channel in w2_channels:
                await channel.close()
            await sc_channel.close()
            await echo_channel.close()
            await floor_channel.close()
            await direct.aclose()
    return results


def ratios(results: list[Result]) -> dict[str, float]:
    """sharedctx throughput over each reference, per op and concurrency."""
    by = {(r.target, r.op, r.concurrency): r for r in results}
    out = {}
    for (target, op, conc), r in by.items():
        if not target.startswith("sharedctx"):
            continue
        prefix = "" if target == "sharedctx" else target.removeprefix("sharedctx_") + "_"
        refs = ("grpc_echo", "grpc_redis", "redis_py") + (("sharedctx",) if prefix else ())
        for ref in refs:
            if (ref, op, conc) in by:
                out[f"{prefix}{op}_c{conc}_vs_{ref}"] = round(
                    r.throughput / by[(ref, op, conc)].throughput, 3
                )
    for conc in (1, 32):
        if ("grpc_redis", "get", conc) in by:
            floor = (
                by[("grpc_redis", "get", conc)].throughput
                / by[("grpc_echo", "get", conc)].throughput
            )
            out[f"get_c{conc}_grpc_redis_floor_vs_grpc_echo"] = round(floor, 3)
    return out


def cpu_explanation(results: list[Result]) -> str:
    """What the Get@32 target asks of the server's CPU, from the CPU figures of this run.

    At 32 callers every core is busy, so each target's throughput is about
    cores / (server + Redis + load generator CPU per call). Reaching 0.8x the floor (a bare
    gRPC server doing one redis-py GET) therefore needs sharedctx's total per call <= the
    floor's total / 0.8.
    """
    by = {(r.target, r.op, r.concurrency): r for r in results}
    floor, ours = by.get(("grpc_redis", "get", 32)), by.get(("sharedctx", "get", 32))
    if floor is None or ours is None:
        return ""

    def total(r: Result) -> float:
        return r.server_cpu_us + r.redis_cpu_us + r.client_cpu_us

    allowed = total(floor) / 0.8 - ours.client_cpu_us
    return "\n".join(
        [
            f"CPU per Get@32: floor {total(floor):.0f} us in all (server "
            f"{floor.server_cpu_us:.0f} + Redis {floor.redis_cpu_us:.0f} + load generator "
            f"{floor.client_cpu_us:.0f}), sharedctx {total(ours):.0f} us (server "
            f"{ours.server_cpu_us:.0f} + Redis {ours.redis_cpu_us:.0f} + load generator "
            f"{ours.client_cpu_us:.0f});",
            f"0.8x the floor leaves sharedctx's server + Redis {allowed:.0f} us per Get",
        ]
    )


def main() -> None:
    """Run, print a table, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--payload-bytes", type=int, default=1024)
    parser.add_argument("--keys", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per target")
    parser.add_argument("--out", default="benchmarks/results/perf.json")
    parser.add_argument(
        "--fit-sizes",
        default="1000,10000,100000",
        help="namespace sizes for the Fit section ('' to skip it)",
    )
    args = parser.parse_args()
    results = asyncio.run(bench(args.requests, args.payload_bytes, args.keys, args.rounds))
    print(
        f"{'op':4} {'target':12} {'conc':>4} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}"
        f" {'CPU us/call: server':>20} {'redis':>6} {'loadgen':>8}"
    )
    for r in results:
        print(
            f"{r.op:4} {r.target:12} {r.concurrency:>4} {r.throughput:>9.0f} "
            f"{r.p50_ms:>8.2f} {r.p99_ms:>8.2f} {r.server_cpu_us:>20.0f} "
            f"{r.redis_cpu_us:>6.0f} {r.client_cpu_us:>8.0f}"
        )
    summary = ratios(results)
    for name, value in summary.items():
        print(f"{name}: {value:.2f}x")
    print(cpu_explanation(results))
    if "get_c32_grpc_redis_floor_vs_grpc_echo" in summary:
        print(
            "for scale: a bare gRPC server doing one redis-py GET per call reaches "
            f"{summary['get_c32_grpc_redis_floor_vs_grpc_echo']:.2f}x the echo at 32 callers; "
            f"sharedctx Get is {summary['get_c32_vs_grpc_redis']:.2f}x of that floor"
        )
        floor = summary["get_c32_vs_grpc_redis"]
        print(
            f"target Get@32 >= 0.8x that floor with one worker: {floor:.2f}x "
            f"{'MET' if floor >= 0.8 else 'NOT MET'}; with 2 workers "
            f"{summary['w2_get_c32_vs_grpc_redis']:.2f}x the floor "
            f"({summary['w2_get_c32_vs_sharedctx']:.2f}x one worker)"
        )
    fit: dict[str, object] = {}
    if args.fit_sizes:
        sizes = [int(s) for s in args.fit_sizes.split(",")]
        fit = perf_fit.report(
            asyncio.run(perf_fit.measure(sizes)), perf_fit.query_embedding_p50_ms()
        )
        print(json.dumps(fit, indent=2))
    put_log = asyncio.run(perf_excerpts.measure_put(2000, 12))
    print(json.dumps({"put_2000_line_log": put_log}, indent=2))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "payload_bytes": args.payload_bytes,
                "results": [asdict(r) for r in results],
                "ratios": summary,
                "fit": fit,
                "put_2000_line_log": put_log,
            },
            indent=2,
        )
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
