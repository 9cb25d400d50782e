"""Health, Redis outages, the embedded default's persistence, reflection and graceful stop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from sharedctx import AsyncClient, CancelledError, SharedCtxError, UnavailableError
from sharedctx_server.server import SERVICE_NAME
from sharedctx_server.settings import Settings
from sharedctx_server.state.embedded import free_port
from sharedctx_server.tokens import TokenCounter

from .support.redis_servers import LocalRedis
from .support.servers import serving, wait_up

NS = "team-a/session-42"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def health_of(port: int, service: str) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
        return int(reply.status)


async def wait_for_health(port: int, service: str, want: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if await health_of(port, service) == want:
                return
        except grpc.aio.AioRpcError:
            pass  # a slow answer on a busy machine: ask again until the deadline
        if time.monotonic() > deadline:
            raise AssertionError(f"health of {service!r} never became {want}")
        await asyncio.sleep(0.05)


async def test_health_is_serving_for_both_names_while_redis_answers(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (running, _):
        for name in ("", SERVICE_NAME):
            await wait_for_health(running.port, name, SERVING)
        # Liveness answers SERVING whatever Redis does, so Kubernetes does not restart pods
        # during a Redis outage.
        assert await health_of(running.port, "liveness") == SERVING


async def test_redis_outage_gives_unavailable_then_recovers_by_itself(
    settings: Settings, token_counter: TokenCounter, tmp_path: Path
) -> None:
    # Every write on disk before its reply: under load, `everysec` may postpone the AOF write
    # past the reply, and the hard stop below would then lose "k" (seen on a busy machine).
    redis = LocalRedis(data_dir=tmp_path / "redis", appendfsync="always").start()
    try:
        async with serving(
            settings, token_counter, redis_url=redis.url, redis_timeout_seconds=1.0
        ) as (running, client):
            await client.put(NS, "k", "before")
            # Concurrent calls leave several connections in the server's pool; the ones idle
            # through the outage are dead after it.
            await asyncio.gather(*(client.get(NS, "k") for _ in range(16)))
            redis.stop(hard=True)
            started = time.monotonic()
            with pytest.raises(UnavailableError, match="Redis is unavailable"):
                await client.put(NS, "k2", "during", timeout=8)
            assert time.monotonic() - started < 8
            await wait_for_health(running.port, SERVICE_NAME, NOT_SERVING)
            await wait_for_health(running.port, "", NOT_SERVING)
            assert await health_of(running.port, "liveness") == SERVING

            redis.start()
            # The very first calls after the restart succeed: dead pooled connections are
            # replaced, not surfaced (the client here does no retries of its own).
            first = await asyncio.gather(*(client.get(NS, "k") for _ in range(16)))
            assert [e.content for e in first] == ["before"] * 16
            await client.put(NS, "k3", "after")
            await wait_for_health(running.port, SERVICE_NAME, SERVING)
    finally:
        redis.stop()


async def test_embedded_default_keeps_data_across_restarts(
    settings: Settings, token_counter: TokenCounter, tmp_path: Path
) -> None:
    data_dir = tmp_path / "embedded"
    async with serving(settings, token_counter, redis_url=None, data_dir=data_dir) as (_, c):
        await c.put(NS, "survivor", "still here", kind="note")
        await c.put(NS, "ephemeral", "gone", ttl_seconds=3600)
    assert (data_dir / "appendonlydir").is_dir()
    async with serving(settings, token_counter, redis_url=None, data_dir=data_dir) as (_, c):
        assert (await c.get(NS, "survivor")).content == "still here"
        assert sorted([k async for k in c.keys(NS)]) == ["ephemeral", "survivor"]


async def test_reflection_lists_the_services(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (running, _):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            call = stub.ServerReflectionInfo(timeout=5)
            await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
            await call.done_writing()
            reply = await call.read()
            names = {s.name for s in reply.list_services_response.service}
    assert {"sharedctx.v1.SharedContext", "grpc.health.v1.Health"} <= names


async def test_graceful_stop_finishes_in_flight_calls(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter) as (running, client):
        await client.put(NS, "warm-up", "connects the channel")
        calls = [asyncio.create_task(client.put(NS, f"k{i}", "word " * 50_000)) for i in range(20)]
        await asyncio.sleep(0.05)
        await running.stop(5)
        done = await asyncio.gather(*calls, return_exceptions=True)
        # Every call either completed or was refused cleanly; none hung.
        # Calls the server had taken in finished; calls arriving after the stop began were
        # refused cleanly (CANCELLED / UNAVAILABLE), never left hanging.
        failures = [r for r in done if isinstance(r, BaseException)]
        assert all(isinstance(r, (CancelledError, UnavailableError)) for r in failures), failures
        assert len(failures) < len(done)


async def test_sigterm_under_load_drains_and_exits_within_the_grace_period(
    settings: Settings, token_counter: TokenCounter, redis_url: str, clean_redis: str
) -> None:
    grace = 5.0
    port = free_port()
    env = {**os.environ, "SHAREDCTX_REDIS_URL": redis_url, "SHAREDCTX_EMBEDDING_THREADS": "1",
           "SHAREDCTX_GRACE_SECONDS": str(grace)}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "sharedctx.cli", "serve", "--listen", f"127.0.0.1:{port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    acked: list[str] = []
    try:
        async with AsyncClient(f"127.0.0.1:{port}", timeout=60, retries=0) as client:
            await wait_up(client)

            async def writer(w: int) -> BaseException:
                for i in range(10_000):
                    key = f"w{w}-{i}"
                    try:
                        await client.put(NS, key, f"agent {w} step {i} " + "output " * 2000)
                    except SharedCtxError as exc:
                        return exc
                    acked.append(key)
                raise AssertionError("the server never stopped")

            writers = [asyncio.create_task(writer(w)) for w in range(8)]
            while len(acked) < 20:
                await asyncio.sleep(0.05)
            signalled = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            returncode = await asyncio.to_thread(proc.wait, grace + 30)
            took = time.monotonic() - signalled
            endings = await asyncio.gather(*writers)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert returncode == 0, stderr
    assert "Traceback" not in stderr
    # Drained, not cut off: the exit comes within the grace period (plus process teardown).
    assert took < grace + 10, took
    # Calls after the drain began were refused cleanly, never UNKNOWN or INTERNAL...
    assert all(isinstance(e, (UnavailableError, CancelledError)) for e in endings), endings
    # ...and every acknowledged write is there.
    async with serving(settings, token_counter) as (_, reader):
        found = 0
        for start in range(0, len(acked), 500):
            found += len(await reader.get_many(NS, acked[start : start + 500]))
    assert found == len(acked)


async def test_a_taken_port_is_a_clear_start_error(
    settings: Settings, token_counter: TokenCounter
) -> None:
    import socket
    from dataclasses import replace

    from sharedctx_server.errors import ConfigError
    from sharedctx_server.server import start

    from .support.models import shared_embedder

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        tasks_before = asyncio.all_tasks()
        with pytest.raises(
            ConfigError, match=f"cannot listen on 127.0.0.1:{port}: the port is in use"
        ):
            await start(
                replace(settings, listen=f"127.0.0.1:{port}"),
                tokens=token_counter,
                embedder=shared_embedder(),
            )
    # What the failed start opened is closed again: no embedding batcher or other task left.
    assert asyncio.all_tasks() <= tasks_before


async def test_a_data_dir_in_use_is_refused_and_the_running_server_keeps_its_valkey(
    settings: Settings, token_counter: TokenCounter, tmp_path: Path
) -> None:
    from sharedctx_server.errors import ConfigError
    from sharedctx_server.state.embedded import EmbeddedRedis

    data_dir = tmp_path / "embedded"
    async with serving(settings, token_counter, redis_url=None, data_dir=data_dir) as (_, c):
        await c.put(NS, "first", "kept")
        valkey_pid = int((data_dir / "valkey.pid").read_text())
        with pytest.raises(
            ConfigError, match=r"is in use by another `sharedctx serve` \(pid \d+\)"
        ):
            await EmbeddedRedis(data_dir).start()
        # Refused before it touched anything: the same Valkey still serves the first server.
        assert int((data_dir / "valkey.pid").read_text()) == valkey_pid
        assert (await c.get(NS, "first")).content == "kept"
    # Released when the owner stops: the folder can be served again.
    async with serving(settings, token_counter, redis_url=None, data_dir=data_dir) as (_, c):
        assert (await c.get(NS, "first")).content == "kept"


async def test_the_embedded_valkey_answers_only_with_its_password(tmp_path: Path) -> None:
    # A loopback port is open to every local user: without the password, nothing is served.
    from urllib.parse import urlsplit

    import redis.asyncio as aioredis
    import redis.exceptions
    from sharedctx_server.state.embedded import EmbeddedRedis

    embedded = EmbeddedRedis(tmp_path / "embedded")
    await embedded.start()
    try:
        password = urlsplit(embedded.url).password
        assert password and len(password) >= 32
        stranger = aioredis.Redis(port=embedded.port)
        with pytest.raises(redis.exceptions.AuthenticationError):
            await stranger.dbsize()
        await stranger.aclose()
        owner = aioredis.from_url(embedded.url)
        assert await owner.ping()
        await owner.aclose()
        # Nor is the password on Valkey's command line, which `ps` shows every local user.
        pid = int((tmp_path / "embedded" / "valkey.pid").read_text())
        assert password.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        # And the folder it made for the data is this user's alone.
        assert (tmp_path / "embedded").stat().st_mode & 0o777 == 0o700
    finally:
        await embedded.stop()


async def test_a_data_dir_that_cannot_be_a_folder_is_a_clear_start_error(tmp_path: Path) -> None:
    from sharedctx_server.errors import ConfigError
    from sharedctx_server.state.embedded import EmbeddedRedis

    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    with pytest.raises(ConfigError, match=f"--data-dir {not_a_folder}: cannot use it as a folder"):
        await EmbeddedRedis(not_a_folder).start()


async def test_a_redis_that_does_not_answer_at_start_is_logged(
    settings: Settings, token_counter: TokenCounter, caplog: pytest.LogCaptureFixture
) -> None:
    from dataclasses import replace

    from sharedctx_server.server import start

    from .support.models import shared_embedder

    nobody = free_port()
    with caplog.at_level("WARNING", logger="sharedctx_server.server"):
        running = await start(
            replace(settings, redis_url=f"redis://:hunter2@127.0.0.1:{nobody}/0"),
            tokens=token_counter,
            embedder=shared_embedder(),
        )
        try:
            deadline = time.monotonic() + 15
            while "does not answer" not in caplog.text and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        finally:
            await running.stop(0)
    assert f"Redis at 127.0.0.1:{nobody} does not answer" in caplog.text
    assert "hunter2" not in caplog.text


async def test_a_hung_redis_fails_calls_at_once_and_they_work_again_when_it_answers(
    settings: Settings, token_counter: TokenCounter, tmp_path: Path
) -> None:
    redis = LocalRedis(data_dir=tmp_path / "redis").start()
    pid = redis._proc.pid if redis._proc is not None else 0
    try:
        async with serving(
            settings, token_counter, redis_url=redis.url, redis_timeout_seconds=1.0
        ) as (running, client):
            await client.put(NS, "k", "before")
            # Stopped, not killed: connections stay open and nothing answers (a network
            # partition, a Redis stuck on disk), so each call would wait for the timeout.
            os.kill(pid, signal.SIGSTOP)
            await wait_for_health(running.port, SERVICE_NAME, NOT_SERVING)
            with pytest.raises(UnavailableError, match="calls fail at once until it does"):
                await client.put(NS, "k2", "during", timeout=30)
            os.kill(pid, signal.SIGCONT)
            # The first call after Redis answers again goes through: it checks first.
            await client.put(NS, "k3", "after", timeout=30)
            assert (await client.get(NS, "k3")).content == "after"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
        redis.stop()
