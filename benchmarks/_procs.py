"""Processes the benchmarks measure: a Redis, a sharedctx server, a bare gRPC echo server.

Servers run in their own processes so the load generator does not share their GIL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import grpc
import redis.asyncio as aioredis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sharedctx_server.state.embedded import EmbeddedRedis, free_port


@contextlib.asynccontextmanager
async def redis_server(appendfsync: str = "everysec") -> AsyncIterator[EmbeddedRedis]:
    """A private Valkey (the embedded default's binary) in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="sharedctx-bench-") as tmp:
        server = EmbeddedRedis(Path(tmp), appendfsync=appendfsync)
        await server.start()
        try:
            yield server
        finally:
            await server.stop()


async def wait_serving(port: int, service: str = "", timeout: float = 120.0) -> None:
    """Wait until the gRPC health service on `port` says SERVING."""
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"server on port {port} did not become SERVING")
            await asyncio.sleep(0.1)


# port -> pid of each server process running now (the perf benchmark reads their CPU time).
SERVER_PIDS: dict[int, int] = {}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process `pid` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds_with_children(pid: int) -> float:
    """cpu_seconds of `pid` and of its live descendants (a `serve --workers N` supervisor)."""
    total = cpu_seconds(pid)
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            with contextlib.suppress(OSError):
                total += cpu_seconds_with_children(int(child))
    return total


@contextlib.asynccontextmanager
async def subprocess_server(
    args: Sequence[str], env: dict[str, str] | None = None, ready_line: str | None = None
) -> AsyncIterator[int]:
    """Run `python -m <args> --listen 127.0.0.1:<port>` and yield the port once it is SERVING
    (and, with `ready_line`, once it has printed a line containing that text)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", *args, "--listen", f"127.0.0.1:{port}"],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE if ready_line else subprocess.DEVNULL,
        text=True,
    )
    SERVER_PIDS[port] = proc.pid
    try:
        if ready_line and proc.stdout is not None:
            # `serve --workers N` says so once every worker serves; one answering is not enough.
            line = await asyncio.to_thread(proc.stdout.readline)
            if ready_line not in line:
                raise RuntimeError(f"server on port {port} did not start: {line!r}")
        await wait_serving(port)
        yield port
    finally:
        SERVER_PIDS.pop(port, None)
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def sharedctx_server(
    redis_url: str, *extra: str, env: dict[str, str] | None = None, workers: int = 1
) -> contextlib.AbstractAsyncContextManager[int]:
    """A `sharedctx serve` process on `redis_url` (`env`: extra environment variables;
    `workers` > 1: a supervisor and that many worker processes on the port)."""
    args = ["sharedctx.cli", "serve", "--redis-url", redis_url, *extra]
    if workers > 1:
        args += ["--workers", str(workers)]
    return subprocess_server(args, env, f"({workers} workers)" if workers > 1 else None)


async def target_or_own_server(stack: contextlib.AsyncExitStack, target: str | None) -> str:
    """`target` when given, else the address of a private Valkey and `sharedctx serve`
    started on `stack` (stopped when it closes)."""
    if target:
        return target
    valkey = await stack.enter_async_context(redis_server())
    port = await stack.enter_async_context(sharedctx_server(valkey.url))
    return f"127.0.0.1:{port}"


def echo_server() -> contextlib.AbstractAsyncContextManager[int]:
    """The bare grpc.aio echo server (benchmarks/echo_server.py)."""
    return subprocess_server(["benchmarks.echo_server"])


def redis_echo_server(redis_url: str) -> contextlib.AbstractAsyncContextManager[int]:
    """The bare grpc.aio server doing one redis-py GET per call (redis_echo_server.py)."""
    return subprocess_server(["benchmarks.redis_echo_server", "--redis-url", redis_url])


class RestartableRedis:
    """A Valkey on a fixed loopback port and data folder that can be SIGKILLed and restarted.

    Unlike the embedded default's supervisor, nothing restarts it behind the caller's back, so
    a fault test decides how long Redis stays down.
    """

    def __init__(self, data_dir: Path, appendfsync: str = "always") -> None:
        self.data_dir = data_dir
        self.appendfsync = appendfsync
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """redis:// URL (the same across restarts)."""
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self, timeout: float = 60.0) -> float:
        """Start on the same port and data; seconds until it answered PING (AOF replay included)."""
        from sharedctx_server.state.embedded import server_binary

        self.data_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        command = [
            str(server_binary()),
            "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.data_dir), "--appendonly", "yes",
            "--appendfsync", self.appendfsync, "--save", "",
            "--daemonize", "no", "--protected-mode", "yes",
            "--logfile", str(self.data_dir / "valkey.log"),
        ]  # fmt: skip
        self._proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = aioredis.Redis.from_url(self.url, socket_connect_timeout=0.2, socket_timeout=1)
        try:
            while True:
                if self._proc.poll() is not None:
                    raise RuntimeError(f"Valkey exited; see {self.data_dir / 'valkey.log'}")
                try:
                    if await client.ping():  # -LOADING (AOF replay) raises, so keep polling
                        return time.monotonic() - started
                except (aioredis.RedisError, OSError):
                    pass
                if time.monotonic() - started > timeout:
                    raise RuntimeError(f"Valkey did not answer within {timeout:.0f}s")
                await asyncio.sleep(0.02)
        finally:
            await client.aclose()

    def kill(self) -> None:
        """SIGKILL: no chance to flush anything; only what was fsynced survives."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(20)
            self._proc = None

    def stop(self) -> None:
        """SIGTERM and wait."""
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(20)
            self._proc = None
