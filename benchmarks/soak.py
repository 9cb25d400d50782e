"""Load and soak: N agents with a realistic mix, then the same with Redis SIGKILLed mid-run.

    python -m benchmarks.soak [--agents 16] [--seconds 30] [--out benchmarks/results/soak.json]

Everything runs on loopback: a Valkey (append-only, `--appendfsync always` by default) on a
fixed port, a `sharedctx serve` process, and this process as N concurrent agents, each on its
own channel. Both phases are bounded in time (`--seconds`, at most 600) and in count
(`--max-ops`). Reported per phase and RPC: throughput, p50/p99 latency, errors by status.

The fault phase SIGKILLs Redis at 30% of the phase, restarts it `--down-seconds` later on the
same port and data folder, and measures how long until the server's health says SERVING again.
At the end every acknowledged put (each agent records key and content of every OK reply) is
read back: a missing or different entry is a lost acknowledged write (target 0). A process
kill loses nothing Redis had already written to the kernel, even with `everysec`; `always`
matters for a power or kernel failure (up to a second lost with `everysec`), which a benchmark
on one machine cannot simulate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc

from ._procs import RestartableRedis, subprocess_server

NAMESPACES = ("soak/team-a", "soak/team-b", "soak/team-c", "soak/team-d")
# The mix of operations an agent draws from (an agent's turn: a Fit for its prompt, some
# reads, a few writes). Another RPC: write an `op_x(agent)` below, add it to OPS and here.
MIX: dict[str, float] = {"get": 0.4, "put": 0.35, "fit": 0.15, "keys": 0.1}
FIT_BUDGET_TOKENS = 2000
EMBED_MODES = {"sync": pb.EMBED_SYNC, "async": pb.EMBED_ASYNC}
DEADLINE_S = 5.0
ERROR_BACKOFF_S = 0.05
MAX_SECONDS = 600.0
LOREM = (
    "The build failed in step 3 because the cache key changed; retrying with a clean cache "
    "fixed it. Tool output follows with the relevant lines and a short summary for the team. "
)


@dataclass
class Stats:
    """Latencies of successful calls and errors by status, per RPC, for one phase."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    # (monotonic time the call began, rpc, status) of every error: tells calls that began during
    # the outage from calls that began after Redis was back.
    error_log: list[tuple[float, str, str]] = field(default_factory=list)

    def summary(self, seconds: float) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for op in sorted(set(self.latencies) | set(self.errors)):
            lat = sorted(self.latencies.get(op, []))
            out[op] = {
                "ok": len(lat),
                "throughput": len(lat) / seconds if seconds else 0.0,
                "p50_ms": _quantile(lat, 0.50) * 1000,
                "p99_ms": _quantile(lat, 0.99) * 1000,
                "errors": dict(self.errors.get(op, {})),
            }
        return out


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


@dataclass
class Shared:
    """What all agents see: the stop signal, the op budget and the acknowledged writes."""

    stop_at: float
    max_ops: int
    stats: Stats
    mix: dict[str, float]
    think_s: float
    acked: dict[tuple[str, str], str] = field(default_factory=dict)
    keys_by_ns: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    ops_started: int = 0

    def more(self) -> bool:
        return time.monotonic() < self.stop_at and self.ops_started < self.max_ops


@dataclass
class Agent:
    """One simulated agent: its own channel, namespace and key sequence."""

    name: str
    namespace: str
    stub: pb_grpc.SharedContextStub
    shared: Shared
    payload_bytes: int
    rng: random.Random
    phase: str
    embed: int
    seq: int = 0


async def op_put(agent: Agent) -> None:
    """A tool output or note under a fresh key, recorded once acknowledged."""
    agent.seq += 1
    # The phase is part of the key so that no put overwrites an earlier phase's entry.
    key = f"{agent.name}/{agent.phase}{agent.seq:07d}"
    head = f"{agent.name} step {agent.seq} at {time.time():.3f}: "
    content = (head + LOREM * (agent.payload_bytes // len(LOREM) + 1))[: agent.payload_bytes]
    req = pb.PutRequest(
        namespace=agent.namespace,
        key=key,
        content=content,
        kind=pb.KIND_TOOL_OUTPUT,
        agent_id=agent.name,
        tool_name="build",
        embed=agent.embed,
    )
    await agent.stub.Put(req, timeout=DEADLINE_S)
    agent.shared.acked[(agent.namespace, key)] = content
    agent.shared.keys_by_ns[agent.namespace].append(key)


async def op_get(agent: Agent) -> None:
    """Read back a recent entry of the namespace (or a miss, before anything is written)."""
    known = agent.shared.keys_by_ns[agent.namespace]
    key = known[-1 - agent.rng.randrange(min(len(known), 200))] if known else ""
    try:
        req = pb.GetRequest(namespace=agent.namespace, key=key or "absent")
        await agent.stub.Get(req, timeout=DEADLINE_S)
    except grpc.aio.AioRpcError as exc:
        # Only a miss on a key whose put was acknowledged is an error.
        if exc.code() != grpc.StatusCode.NOT_FOUND or key:
            raise


async def op_keys(agent: Agent) -> None:
    """One page of another agent's keys."""
    prefix = f"agent-{agent.rng.randrange(64):02d}/"
    req = pb.KeysRequest(namespace=agent.namespace, prefix=prefix, page_size=100)
    await agent.stub.Keys(req, timeout=DEADLINE_S)


async def op_fit(agent: Agent) -> None:
    """The context for the agent's next turn: the best entries for a query within a budget."""
    other = agent.rng.randrange(64)
    req = pb.FitRequest(
        namespace=agent.namespace,
        query=f"what did agent-{other:02d} find about the failing build step?",
        budget_tokens=FIT_BUDGET_TOKENS,
    )
    await agent.stub.Fit(req, timeout=DEADLINE_S)


OPS: dict[str, Callable[[Agent], Awaitable[None]]] = {
    "get": op_get,
    "put": op_put,
    "fit": op_fit,
    "keys": op_keys,
}


async def run_agent(agent: Agent) -> None:
    """Closed loop: draw an op, time it, record; back off briefly after an error."""
    shared = agent.shared
    names, weights = list(shared.mix), list(shared.mix.values())
    while shared.more():
        shared.ops_started += 1
        op = agent.rng.choices(names, weights)[0]
        began, started = time.monotonic(), time.perf_counter()
        try:
            await OPS[op](agent)
        except grpc.aio.AioRpcError as exc:
            shared.stats.errors[op][exc.code().name] += 1
            shared.stats.error_log.append((began, op, exc.code().name))
            await asyncio.sleep(ERROR_BACKOFF_S)
            continue
        shared.stats.latencies[op].append(time.perf_counter() - started)
        if shared.think_s:
            # An agent's own work between calls (its LLM turn); 0 = closed loop, a stress test.
            await asyncio.sleep(agent.rng.expovariate(1 / shared.think_s))


async def run_phase(
    port: int,
    agents: int,
    seconds: float,
    max_ops: int,
    payload: int,
    acked: dict[Any, str],
    phase: str,
    mix: dict[str, float],
    embed: int,
    think_s: float,
) -> tuple[Stats, float]:
    """All agents for `seconds`; returns the stats and the elapsed time."""
    stats = Stats()
    shared = Shared(time.monotonic() + seconds, max_ops, stats, mix, think_s, acked)
    for ns, key in acked:
        shared.keys_by_ns[ns].append(key)
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(agents)]
    try:
        crew = [
            Agent(f"agent-{i:02d}", NAMESPACES[i % len(NAMESPACES)],
                  pb_grpc.SharedContextStub(ch), shared, payload, random.Random(f"{phase}{i}"),
                  phase, embed)
            for i, ch in enumerate(channels)
        ]  # fmt: skip
        started = time.monotonic()
        await asyncio.gather(*(run_agent(a) for a in crew))
        return stats, time.monotonic() - started
    finally:
        for ch in channels:
            await ch.close()


@dataclass
class HealthLog:
    """Health transitions seen by a poller, as (seconds since phase start, status)."""

    started: float
    changes: list[tuple[float, str]] = field(default_factory=list)

    def first(self, status: str, after: float = 0.0) -> float | None:
        return next((t for t, s in self.changes if s == status and t >= after), None)


async def poll_health(port: int, log: HealthLog, stop: asyncio.Event, every: float) -> None:
    """Record every change of the readiness health status until `stop`."""
    last = None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while not stop.is_set():
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.aio.AioRpcError as exc:
                status = f"rpc:{exc.code().name}"
            if status != last:
                log.changes.append((time.monotonic() - log.started, status))
                last = status
            await asyncio.sleep(every)


async def inject_fault(
    redis: RestartableRedis,
    kill_after: float,
    down: float,
    events: dict[str, float],
    started: float,
) -> None:
    """SIGKILL Redis after `kill_after` s, restart it `down` s later on the same port and data."""
    await asyncio.sleep(kill_after)
    redis.kill()
    events["killed_at_s"] = time.monotonic() - started
    await asyncio.sleep(down)
    events["restart_at_s"] = time.monotonic() - started
    events["redis_start_s"] = await redis.start()
    events["redis_ready_at_s"] = time.monotonic() - started


async def verify(port: int, acked: dict[tuple[str, str], str]) -> dict[str, Any]:
    """Read every acknowledged put back (full form); count missing and changed entries."""
    missing = changed = 0
    by_ns: dict[str, list[str]] = defaultdict(list)
    for ns, key in acked:
        by_ns[ns].append(key)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.SharedContextStub(channel)
        for ns, keys in by_ns.items():
            for i in range(0, len(keys), 500):
                batch = keys[i : i + 500]
                req = pb.GetManyRequest(namespace=ns, keys=batch, full=True)
                reply = await stub.GetMany(req, timeout=30, wait_for_ready=True)
                found = {e.key: e.content for e in reply.entries}
                for key in batch:
                    if key not in found:
                        missing += 1
                    elif found[key] != acked[(ns, key)]:
                        changed += 1
    return {"acknowledged": len(acked), "missing": missing, "changed": changed,
            "lost": missing + changed}  # fmt: skip


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    """Both phases against one Redis and one server; the report as a dict."""
    seconds = min(args.seconds, MAX_SECONDS)
    acked: dict[tuple[str, str], str] = {}
    report: dict[str, Any] = {
        "config": {
            "agents": args.agents, "seconds": seconds, "max_ops": args.max_ops,
            "payload_bytes": args.payload_bytes, "appendfsync": args.appendfsync,
            "down_seconds": args.down_seconds, "mix": args.mix, "embed": args.embed,
            "think_ms": args.think_ms,
            "server_health_interval_s": args.health_interval,
        },
        "phases": {},
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="sharedctx-soak-") as tmp:
        redis = RestartableRedis(Path(tmp) / "redis", args.appendfsync)
        await redis.start()
        env = {
            "SHAREDCTX_HEALTH_INTERVAL_SECONDS": str(args.health_interval),
            "SHAREDCTX_REDIS_TIMEOUT_SECONDS": "2",
        }
        try:
            server = subprocess_server(["sharedctx.cli", "serve", "--redis-url", redis.url], env)
            async with server as port:
                stats, elapsed = await run_phase(
                    port,
                    args.agents,
                    seconds,
                    args.max_ops,
                    args.payload_bytes,
                    acked,
                    "s",
                    args.mix,
                    EMBED_MODES[args.embed],
                    args.think_ms / 1000,
                )
                report["phases"]["steady"] = {"elapsed_s": elapsed, "ops": stats.summary(elapsed)}

                events: dict[str, float] = {}
                started = time.monotonic()
                health = HealthLog(started)
                stop = asyncio.Event()
                poller = asyncio.create_task(poll_health(port, health, stop, 0.02))
                fault = asyncio.create_task(
                    inject_fault(redis, seconds * 0.3, args.down_seconds, events, started)
                )
                stats, elapsed = await run_phase(
                    port,
                    args.agents,
                    seconds,
                    args.max_ops,
                    args.payload_bytes,
                    acked,
                    "f",
                    args.mix,
                    EMBED_MODES[args.embed],
                    args.think_ms / 1000,
                )
                await fault
                stop.set()
                await poller
                report["phases"]["redis_restart"] = {
                    "elapsed_s": elapsed, "ops": stats.summary(elapsed)
                }  # fmt: skip
                report["restart"] = restart_report(events, health, stats, started)
                report["durability"] = await verify(port, acked)
        finally:
            redis.stop()
    return report


def restart_report(
    events: dict[str, float], health: HealthLog, stats: Stats, started: float
) -> dict[str, Any]:
    """When Redis went and came back, when the server's health followed, and which calls failed
    after Redis answered again (broken pooled connections should be replaced, not surfaced)."""
    killed = events.get("killed_at_s", 0.0)
    ready = events.get("redis_ready_at_s")
    not_serving = health.first("NOT_SERVING", killed)
    # SERVING for good: the last change, if it is to SERVING (a flap after the restart counts).
    last_time, last_status = health.changes[-1] if health.changes else (None, None)
    serving = last_time if last_status == "SERVING" and ready is not None else None
    after = Counter(
        f"{op} {code}" for t, op, code in stats.error_log
        if ready is not None and t - started >= ready
    )  # fmt: skip
    return {
        **events,
        "health_not_serving_at_s": not_serving,
        "health_serving_again_at_s": serving,
        "recovery_after_redis_back_s": None
        if serving is None or ready is None
        else serving - ready,
        "outage_s": None if serving is None else serving - killed,
        "health_changes": health.changes,
        "errors_after_redis_back": dict(after),
    }


def print_report(report: dict[str, Any]) -> None:
    """A table per phase, then the restart and durability lines."""
    print(f"{'phase':14} {'rpc':5} {'ok':>8} {'ok/s':>8} {'p50 ms':>8} {'p99 ms':>8}  errors")
    for phase, data in report["phases"].items():
        for op, s in data["ops"].items():
            errors = ", ".join(f"{k} {v}" for k, v in s["errors"].items()) or "0"
            print(
                f"{phase:14} {op:5} {s['ok']:>8} {s['throughput']:>8.0f} "
                f"{s['p50_ms']:>8.2f} {s['p99_ms']:>8.2f}  {errors}"
            )
    r = report["restart"]

    def fmt(value: float | None) -> str:
        return "never" if value is None else f"{value:.2f}s"

    print(
        f"Redis SIGKILLed at {fmt(r.get('killed_at_s'))}, restarted at {fmt(r.get('restart_at_s'))}"
        f" (answering after {fmt(r.get('redis_start_s'))}); health NOT_SERVING at "
        f"{fmt(r['health_not_serving_at_s'])}, SERVING again at "
        f"{fmt(r['health_serving_again_at_s'])}: {fmt(r['recovery_after_redis_back_s'])} after "
        f"Redis was back, outage {fmt(r['outage_s'])}; health: "
        + " -> ".join(f"{status}@{t:.2f}s" for t, status in r["health_changes"])
    )
    late = ", ".join(f"{k} {v}" for k, v in r["errors_after_redis_back"].items()) or "none"
    print(f"errors of calls begun after Redis answered again: {late}")
    d = report["durability"]
    print(
        f"acknowledged writes: {d['acknowledged']}, lost: {d['lost']} "
        f"(missing {d['missing']}, changed {d['changed']}); appendfsync "
        f"{report['config']['appendfsync']}"
    )


def parse_mix(text: str) -> dict[str, float]:
    """`get=0.5,put=0.4,keys=0.1` as a dict; only known ops, positive weights."""
    mix = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name.strip() not in OPS or float(weight) <= 0:
            raise argparse.ArgumentTypeError(f"{part!r}: use op=weight with op in {list(OPS)}")
        mix[name.strip()] = float(weight)
    return mix


def main() -> None:
    """Run both phases, print a table, write JSON."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0, help="per phase (max 600)")
    parser.add_argument("--max-ops", type=int, default=2_000_000, help="per phase, all agents")
    parser.add_argument("--payload-bytes", type=int, default=1024)
    parser.add_argument("--down-seconds", type=float, default=2.0, help="Redis downtime")
    parser.add_argument("--appendfsync", choices=["always", "everysec"], default="always")
    parser.add_argument(
        "--health-interval", type=float, default=0.2, help="server's Redis health check period"
    )
    parser.add_argument(
        "--mix",
        type=parse_mix,
        default=MIX,
        help="op=weight,... of " + ", ".join(OPS) + " (default: %(default)s)",
    )
    parser.add_argument(
        "--embed",
        choices=["sync", "async"],
        default="sync",
        help="when puts embed their content: before replying (default) or after",
    )
    parser.add_argument(
        "--think-ms", type=float, default=0.0, help="mean pause between an agent's calls"
    )
    parser.add_argument("--out", default="benchmarks/results/soak.json")
    args = parser.parse_args()
    report = asyncio.run(soak(args))
    print_report(report)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
