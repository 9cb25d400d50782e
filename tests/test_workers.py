"""`serve --workers N`: N processes on one port, one supervisor, merged metrics, clean stops."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sharedctx import AsyncClient
from sharedctx_server.cores import cpu_limit, worker_count
from sharedctx_server.errors import ConfigError
from sharedctx_server.settings import Settings
from sharedctx_server.state.embedded import free_port
from sharedctx_server.workers import merge_expositions

from .support.servers import wait_up

NS = "team-a/session-42"


def test_worker_count_takes_a_number_or_auto() -> None:
    assert worker_count("3") == 3
    assert worker_count("auto") == worker_count(" AUTO ") == cpu_limit()
    assert 1 <= cpu_limit() <= (os.cpu_count() or 1)
    # Settings refuses anything else before worker_count sees it.
    for bad in ("0", "-2", "two", ""):
        with pytest.raises(
            ConfigError, match="SHAREDCTX_WORKERS must be a positive integer or auto"
        ):
            Settings(workers=bad)


def test_merged_metrics_have_each_family_once_and_every_sample_labelled() -> None:
    def exposition(calls: int) -> str:
        return (
            "# HELP calls_total Calls.\n"
            "# TYPE calls_total counter\n"
            f'calls_total{{method="Get"}} {calls}.0\n'
            f"calls_total{{}} {calls}.0\n"
            "# HELP up Up.\n# TYPE up gauge\n"
            "up 1.0\n"
        )

    merged = merge_expositions([("0", exposition(3)), ("1", exposition(5)), ("2", "")])
    assert merged.splitlines() == [
        "# HELP calls_total Calls.",
        "# TYPE calls_total counter",
        'calls_total{worker="0",method="Get"} 3.0',
        'calls_total{worker="0"} 3.0',
        'calls_total{worker="1",method="Get"} 5.0',
        'calls_total{worker="1"} 5.0',
        "# HELP up Up.",
        "# TYPE up gauge",
        'up{worker="0"} 1.0',
        'up{worker="1"} 1.0',
    ]


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _workers(pid: int) -> list[int]:
    """The supervisor's worker processes (not the embedded Redis or the resource tracker)."""
    found = []
    for child in _children(pid):
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"spawn_main" in cmdline:  # not the resource tracker
            found.append(child)
    return found


@contextmanager
def supervisor(redis_url: str, *flags: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    env = {**os.environ, "SHAREDCTX_REDIS_URL": redis_url, "SHAREDCTX_GRACE_SECONDS": "5"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sharedctx.cli", "serve", "--listen", f"127.0.0.1:{port}", *flags],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)


def _metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return str(reply.read().decode())


async def test_two_workers_share_one_port_restart_when_killed_and_stop_together(
    redis_url: str, clean_redis: str
) -> None:
    metrics_port = free_port()
    flags = ("--workers", "2", "--embedding-threads", "1",
             "--metrics-listen", f"127.0.0.1:{metrics_port}")  # fmt: skip
    with supervisor(redis_url, *flags) as (proc, port):
        first = proc.stdout.readline() if proc.stdout else ""
        assert first.strip() == f"sharedctx listening on 127.0.0.1:{port} (2 workers)"
        workers = _workers(proc.pid)
        assert len(workers) == 2
        # Named where `ps -o comm` and `top` look.
        names = {Path(f"/proc/{pid}/comm").read_text().strip() for pid in workers}
        assert names == {"sharedctx-w0", "sharedctx-w1"}

        # Every connection lands on one worker or the other; each reads what any wrote.
        for i in range(12):
            async with AsyncClient(f"127.0.0.1:{port}", timeout=30, retries=0) as client:
                await client.put(NS, f"note-{i}", f"written on connection {i}")
                assert (await client.get(NS, f"note-{i - 1 if i else 0}")) is not None
        async with AsyncClient(f"127.0.0.1:{port}", timeout=30, retries=0) as client:
            assert len([key async for key in client.keys(NS)]) == 12
        metrics = _metrics(metrics_port)
        puts = [
            line
            for line in metrics.splitlines()
            if line.startswith("grpc_server_started_total{") and 'grpc_method="Put"' in line
        ]
        assert {line.split('"')[1] for line in puts} == {"0", "1"}, puts
        assert sum(float(line.rsplit(" ", 1)[1]) for line in puts) == 12

        # A worker that dies is started again; the port keeps answering meanwhile: a new
        # connection goes to a live worker. (gRPC shares connections between the channels of
        # one process, so this client asks for its own: the process's earlier connection to
        # the dead worker sits in gRPC's reconnect backoff for about a second.)
        os.kill(workers[0], signal.SIGKILL)
        # Reaped by the supervisor: every thread gone, so its listening socket is closed (a
        # zombie leader may still have threads holding it).
        while Path(f"/proc/{workers[0]}").exists():
            await asyncio.sleep(0.05)
        own = (("grpc.use_local_subchannel_pool", 1),)
        async with AsyncClient(f"127.0.0.1:{port}", timeout=30, options=own) as client:
            assert (await client.get(NS, "note-3")) is not None
        deadline = time.monotonic() + 90
        while len(set(_workers(proc.pid)) - {workers[0]}) < 2:
            assert time.monotonic() < deadline, "the killed worker was not started again"
            await asyncio.sleep(0.2)

        workers = _workers(proc.pid)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 60)
        stderr = proc.stderr.read() if proc.stderr else ""
    assert code == 0, stderr
    assert "worker 0 exited with code -9; starting it again" in stderr
    assert "Traceback" not in stderr
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)  # none left behind


async def test_a_port_taken_by_another_servers_workers_is_refused_before_anything_starts(
    redis_url: str,
) -> None:
    import socket

    # Another `serve --workers N` listens with SO_REUSEPORT, which the workers would share.
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        env = {**os.environ, "SHAREDCTX_REDIS_URL": redis_url}
        done = subprocess.run(
            [sys.executable, "-m", "sharedctx.cli", "serve", "--workers", "2",
             "--listen", f"127.0.0.1:{port}"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in done.stderr
    assert "worker" not in done.stderr  # refused by the supervisor, before any worker


def test_workers_need_a_tcp_port_with_or_without_a_host() -> None:
    from sharedctx_server.workers import _check_port_free

    _check_port_free(f":{free_port()}")  # every interface: an empty host, as Settings allows
    done = subprocess.run(
        [sys.executable, "-m", "sharedctx.cli", "serve", "--workers", "2",
         "--listen", "unix:/tmp/sharedctx-workers-test.sock"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "workers share one TCP port (SO_REUSEPORT), which a unix socket cannot be" in (
        done.stderr
    )


def test_the_address_served_is_said_with_its_port_or_as_the_socket_path() -> None:
    from sharedctx_server.server import listening_on

    assert listening_on("127.0.0.1:0", 50123) == "127.0.0.1:50123"
    assert listening_on("[::1]:0", 50123) == "[::1]:50123"
    assert listening_on(":50051", 50051) == ":50051"
    assert listening_on("unix:/run/sharedctx.sock", 1) == "unix:/run/sharedctx.sock"  # not :1


def test_far_more_workers_than_cpus_is_warned_about_and_more_than_the_limit_refused() -> None:
    many = 2 * cpu_limit() + 1
    env = {**os.environ, "SHAREDCTX_MAX_WORKERS": str(many)}
    done = subprocess.run(
        [sys.executable, "-m", "sharedctx.cli", "serve", "--workers", str(many),
         "--listen", "0.0.0.0:1"],  # refused right after: no auth on a network address
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 2
    assert f"warning: {many} workers for {cpu_limit()} CPUs" in done.stderr
    # Past SHAREDCTX_MAX_WORKERS nothing starts: 999 servers would take the machine's memory.
    done = subprocess.run(
        [sys.executable, "-m", "sharedctx.cli", "serve", "--workers", "999"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--workers 999 is over the limit of 32 (SHAREDCTX_MAX_WORKERS)" in done.stderr
    assert "listening" not in done.stdout


async def test_a_stopped_worker_is_killed_and_started_again(
    redis_url: str, clean_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHAREDCTX_WORKER_STALL_SECONDS", "3")
    flags = ("--workers", "2", "--embedding-threads", "1")
    with supervisor(redis_url, *flags) as (proc, _):
        assert proc.stdout is not None and "(2 workers)" in proc.stdout.readline()
        stopped = _workers(proc.pid)[0]
        # Stopped (hung, deadlocked): alive to the kernel, which goes on handing it connections.
        os.kill(stopped, signal.SIGSTOP)
        deadline = time.monotonic() + 120
        while stopped in _workers(proc.pid) or len(_workers(proc.pid)) < 2:
            assert time.monotonic() < deadline, "the stopped worker was not replaced"
            await asyncio.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 60)
        stderr = proc.stderr.read() if proc.stderr else ""
    assert code == 0, stderr
    assert "has not run for" in stderr and "(stopped or hung); killing it" in stderr


async def test_a_worker_that_cannot_start_stops_the_serve_with_its_reason(
    redis_url: str, clean_redis: str, tmp_path: Path
) -> None:
    # Only a worker reads the TLS files.
    absent = str(tmp_path / "absent.pem")
    flags = ("--workers", "2", "--tls-cert", absent, "--tls-key", absent)
    with supervisor(redis_url, *flags) as (proc, _):
        code = await asyncio.to_thread(proc.wait, 120)
        stderr = proc.stderr.read() if proc.stderr else ""
    assert code == 2
    assert "cannot read the TLS private key" in stderr
    assert "could not start (exit code 2); its reason is above" in stderr
    assert "Traceback" not in stderr


async def test_a_bad_quotas_file_stops_the_supervisor_before_any_worker(
    redis_url: str, tmp_path: Path
) -> None:
    quotas = tmp_path / "quotas.json"
    quotas.write_text("{not json")
    with supervisor(redis_url, "--workers", "2", "--quotas", str(quotas)) as (proc, _):
        code = await asyncio.to_thread(proc.wait, 120)
        stderr = proc.stderr.read() if proc.stderr else ""
    assert code == 2
    assert (
        stderr.startswith("sharedctx serve: error: the quotas file") and "not valid JSON" in stderr
    )
    assert "worker" not in stderr and "Traceback" not in stderr


async def test_one_worker_is_the_plain_server(redis_url: str, clean_redis: str) -> None:
    with supervisor(redis_url, "--workers", "1", "--embedding-threads", "1") as (proc, port):
        async with AsyncClient(f"127.0.0.1:{port}", timeout=30, retries=0) as client:
            await wait_up(client)
        assert _workers(proc.pid) == []  # no supervisor, no spawned processes
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 60) == 0


class _Exited:
    """A worker process that has exited (what the supervisor asks of one)."""

    exitcode = -9

    def is_alive(self) -> bool:
        return False


@pytest.mark.parametrize(("ran", "pause"), [(5.0, 8.0), (600.0, 1.0)])
def test_a_worker_that_ran_healthy_for_a_while_restarts_after_the_first_pause(
    ran: float, pause: float
) -> None:
    from sharedctx_server.workers import Supervisor, _Worker

    supervisor = Supervisor(Settings(listen="127.0.0.1:0"), 1, None)
    # It died three times in a row before (the pause doubled to 8 s), then ran `ran` seconds.
    worker = _Worker(_Exited(), time.monotonic() - ran, None, ready=True, pause=8.0)  # type: ignore[arg-type]
    supervisor._workers[0] = worker
    supervisor._restart_dead()
    assert worker.restart_at is not None
    assert worker.restart_at - time.monotonic() == pytest.approx(pause, abs=0.5)


def test_a_worker_whose_supervisor_is_gone_leaves_at_once_and_one_whose_is_there_is_named() -> None:
    # A spawned worker takes seconds to import; a supervisor killed meanwhile sends no
    # SIGTERM (it was not asked for yet), so the worker checks who its parent is.
    script = (
        "import os, sys\n"
        "from sharedctx_server.workers import _as_worker\n"
        "_as_worker(3, int(sys.argv[1]) or os.getppid())\n"
        "print(open('/proc/self/comm').read().strip())\n"
    )
    gone = subprocess.run([sys.executable, "-c", script, "1"], capture_output=True, text=True)
    assert (gone.returncode, gone.stdout) == (0, "")
    here = subprocess.run([sys.executable, "-c", script, "0"], capture_output=True, text=True)
    assert (here.returncode, here.stdout) == (0, "sharedctx-w3\n")
