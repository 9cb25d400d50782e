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
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sharedctx_server.embedded import EmbeddedRedis, free_port


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


@contextlib.asynccontextmanager
async def subprocess_server(
    args: Sequence[str], env: dict[str, str] | None = None
) -> AsyncIterator[int]:
    """Run `python -m <args> --listen 127.0.0.1:<port>` and yield the port once it is SERVING."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", *args, "--listen", f"127.0.0.1:{port}"],
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
    )
    try:
        await wait_serving(port)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def sharedctx_server(redis_url: str, *extra: str) -> contextlib.AbstractAsyncContextManager[int]:
    """A `sharedctx serve` process on `redis_url`."""
    return subprocess_server(["sharedctx.cli", "serve", "--redis-url", redis_url, *extra])


def echo_server() -> contextlib.AbstractAsyncContextManager[int]:
    """The bare grpc.aio echo server (benchmarks/echo_server.py)."""
    return subprocess_server(["benchmarks.echo_server"])
