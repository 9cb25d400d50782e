"""`serve --workers N`: N server processes on one port, under one supervisor.

A Python gRPC server runs its handlers on one core. With N > 1 the supervisor starts the
embedded Redis (when no --redis-url is given) once, then N worker processes that each run the
whole server on the same address: gRPC binds with SO_REUSEPORT, so the kernel spreads
connections over them. Workers share nothing but Redis, exactly like replicas on separate
machines (a client's read-your-writes across them comes from Redis, which every read consults).
The supervisor restarts a worker that dies, and on SIGTERM/SIGINT stops every worker gracefully
(each drains its calls within --grace-seconds) before the embedded Redis.

Metrics: each worker serves its own registry on a loopback port; the supervisor serves
--metrics-listen with all of them merged, every sample labelled `worker="<i>"` (sum by the
other labels for totals), which is how Prometheus expects several processes' series.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import os
import queue
import signal
import socket
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.context import SpawnProcess
from typing import Any

from .cores import cpu_limit
from .edge.metrics import parse_listen
from .errors import ConfigError, listen_error
from .security.auth import check_listen_is_safe, jwt_verifier
from .settings import Settings, is_unix_socket
from .state.embedded import EmbeddedRedis, free_port
from .state.quotas import QuotaTable

log = logging.getLogger(__name__)

# A worker that dies is started again after this pause, doubling up to the cap while it keeps
# dying, so a broken setup does not spin; one that ran _HEALTHY_RUN before dying starts again
# after the first pause (an occasional death weeks apart is not a crash loop).
_RESTART_PAUSE = 1.0
_RESTART_PAUSE_MAX = 30.0
_HEALTHY_RUN = 60.0
# How often a worker's event loop beats its heartbeat (the supervisor kills a worker whose
# beat is older than SHAREDCTX_WORKER_STALL_SECONDS: hung, stopped or deadlocked, it would
# still receive its share of new connections).
_BEAT = 1.0
# How long a worker may take to load the model and answer; past it the start has failed.
_START_TIMEOUT = 300.0
# Beyond the grace period: time for a worker to release Redis and the model after draining.
_STOP_SLACK = 15.0


def _as_worker(index: int, supervisor: int) -> None:
    """Linux: SIGTERM this process when the supervisor dies, even by SIGKILL (no orphans),
    and name it `sharedctx-w<index>` where `ps -o comm`, `top` and `pkill` look (the command
    line stays Python's, and says nothing of which process is which). A supervisor that died
    before this ran (a spawned worker takes seconds to import) sends no signal: the worker
    then leaves at once rather than serve the port as an orphan."""
    with contextlib.suppress(OSError, AttributeError):
        pr_set_pdeathsig, pr_set_name = 1, 15
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(pr_set_pdeathsig, signal.SIGTERM)
        prctl(pr_set_name, f"sharedctx-w{index}".encode()[:15])
    if os.getppid() != supervisor:
        sys.exit(0)


def _worker_main(
    settings: Settings, index: int, supervisor: int, ready: Any, heartbeat: Any
) -> None:
    """A worker process: the whole server; says when it serves, and its metrics port, and
    beats `heartbeat` (time.monotonic(), shared with the supervisor) while its loop runs."""
    _as_worker(index, supervisor)
    from .edge.logs import configure as configure_logging
    from .server import run_until_signalled, start

    configure_logging(settings.log_format, settings.log_level)

    async def beat() -> None:
        while True:
            heartbeat.value = time.monotonic()
            await asyncio.sleep(_BEAT)

    async def main() -> None:
        running = await start(settings)
        metrics = running.metrics_server
        beating = asyncio.create_task(beat())
        ready.put((index, metrics.port if metrics is not None else None))
        try:
            await run_until_signalled(running, settings)
        finally:
            beating.cancel()

    try:
        asyncio.run(main())
    except ConfigError as exc:  # said once, plainly; the supervisor then stops the rest
        print(f"sharedctx serve: worker {index}: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)


async def serve_workers(settings: Settings, count: int) -> None:
    """Run `count` workers on settings.listen until SIGTERM/SIGINT, then stop them all."""
    # Checked here too, before the embedded Redis starts, so a refused setup or a bad quotas
    # file fails once rather than in every worker.
    check_listen_is_safe(settings)
    jwt_verifier(settings)
    QuotaTable.from_settings(settings)
    _check_port_free(settings.listen)
    embedded = None
    if not settings.redis_url:
        embedded = EmbeddedRedis(settings.data_dir)
        await embedded.start()
    try:
        await Supervisor(settings, count, embedded.url if embedded else None).run()
    finally:
        if embedded is not None:
            await embedded.stop()


def _check_port_free(listen: str) -> None:
    """ConfigError when something listens on `listen` already. The workers bind with
    SO_REUSEPORT, which another server's workers would share: without this check a second
    `serve --workers N` on the same port starts, and the kernel splits the clients between
    two servers (two stores, with different --data-dir or --redis-url)."""
    if is_unix_socket(listen):
        raise ConfigError(
            f"--listen {listen}: workers share one TCP port (SO_REUSEPORT), which a unix "
            "socket cannot be; listen on HOST:PORT, or run one worker"
        )
    host, _, port_text = listen.rpartition(":")  # HOST:PORT, checked by Settings already
    port = int(port_text)
    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        raise listen_error(listen, exc.strerror or str(exc)) from None


@dataclass
class _Worker:
    process: SpawnProcess
    started: float
    heartbeat: Any  # a shared double: time.monotonic() of the worker's last beat
    ready: bool = False
    pause: float = _RESTART_PAUSE
    restart_at: float | None = None


@dataclass
class Supervisor:
    """Starts the workers, restarts those that die, stops them all on SIGTERM/SIGINT."""

    settings: Settings
    count: int
    redis_url: str | None
    _workers: dict[int, _Worker] = field(default_factory=dict)
    _metrics_ports: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        host, _, port = self.settings.listen.rpartition(":")
        if port == "0":  # every worker must bind the same port: choose it here
            port = str(free_port())
        self.address = f"{host}:{port}"
        threads = self.settings.embedding_threads or max(1, cpu_limit() // self.count)
        self._worker_settings = replace(
            self.settings,
            listen=self.address,
            redis_url=self.redis_url or self.settings.redis_url,
            workers=str(self.count),  # which makes each worker's gRPC port reusable
            embedding_threads=threads,
            metrics_listen="127.0.0.1:0" if self.settings.metrics_listen else None,
        )
        self._context = multiprocessing.get_context("spawn")
        self._ready = self._context.Queue()

    async def run(self) -> None:
        """Serve until a signal; ConfigError if a worker cannot start at all."""
        merged = (
            MergedMetrics.start(self.settings.metrics_listen, self._metrics_ports)
            if self.settings.metrics_listen
            else None
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            for index in range(self.count):
                self._launch(index)
            await self._until_all_ready(stop)
            if not stop.is_set():
                print(f"sharedctx listening on {self.address} ({self.count} workers)", flush=True)
            while not stop.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
                self._collect_ready()
                if not stop.is_set():
                    self._kill_stalled()
                    self._restart_dead()
        finally:
            await self._stop_all()
            if merged is not None:
                merged.stop()

    def _launch(self, index: int) -> None:
        heartbeat = self._context.Value("d", 0.0, lock=False)
        process = self._context.Process(
            target=_worker_main,
            args=(self._worker_settings, index, os.getpid(), self._ready, heartbeat),
            name=f"sharedctx-worker-{index}",
        )
        process.start()
        previous = self._workers.get(index)
        self._workers[index] = _Worker(
            process,
            time.monotonic(),
            heartbeat,
            pause=previous.pause if previous else _RESTART_PAUSE,
        )

    async def _until_all_ready(self, stop: asyncio.Event) -> None:
        """Wait for every first start; a worker that exits or hangs first fails the serve."""
        while not stop.is_set() and not all(w.ready for w in self._workers.values()):
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.2)
            self._collect_ready()
            for index, worker in self._workers.items():
                if worker.ready:
                    continue
                if not worker.process.is_alive():
                    raise ConfigError(
                        f"worker {index} could not start (exit code {worker.process.exitcode}); "
                        "its reason is above"
                    )
                if time.monotonic() - worker.started > _START_TIMEOUT:
                    raise ConfigError(f"worker {index} did not start in {_START_TIMEOUT:.0f}s")

    def _collect_ready(self) -> None:
        while True:
            try:
                index, metrics_port = self._ready.get_nowait()
            except queue.Empty:
                return
            self._workers[index].ready = True
            if metrics_port is not None:
                self._metrics_ports[index] = metrics_port

    def _kill_stalled(self) -> None:
        """Kill every ready worker whose loop has not beaten for worker_stall_seconds: it
        cannot serve, and the kernel would go on handing it new connections."""
        now = time.monotonic()
        stall = self.settings.worker_stall_seconds
        for index, worker in self._workers.items():
            beat = worker.heartbeat.value
            if worker.ready and beat and now - beat > stall and worker.process.is_alive():
                log.error(
                    "worker %d has not run for %.0fs (stopped or hung); killing it",
                    index,
                    now - beat,
                )
                worker.process.kill()

    def _restart_dead(self) -> None:
        now = time.monotonic()
        for index, worker in list(self._workers.items()):
            if worker.process.is_alive():
                continue
            if worker.restart_at is None:
                if worker.ready and now - worker.started >= _HEALTHY_RUN:
                    worker.pause = _RESTART_PAUSE
                log.error(
                    "worker %d exited with code %s; starting it again in %.0fs",
                    index,
                    worker.process.exitcode,
                    worker.pause,
                )
                self._metrics_ports.pop(index, None)
                worker.restart_at = now + worker.pause
                worker.pause = min(worker.pause * 2, _RESTART_PAUSE_MAX)
            elif now >= worker.restart_at:
                self._launch(index)

    async def _stop_all(self) -> None:
        """SIGTERM every worker (each drains within the grace period), then wait for them."""
        grace = self.settings.grace_seconds
        log.info("stopping %d workers (grace %.1fs)", len(self._workers), grace)
        for worker in self._workers.values():
            if worker.process.is_alive() and worker.process.pid is not None:
                os.kill(worker.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace + _STOP_SLACK
        for worker in self._workers.values():
            await asyncio.to_thread(worker.process.join, max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                await asyncio.to_thread(worker.process.join, 5)
        self._ready.close()


class MergedMetrics:
    """The supervisor's /metrics: every worker's metrics, labelled by worker."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self._server = server

    @classmethod
    def start(cls, listen: str, ports: dict[int, int]) -> MergedMetrics:
        """Serve on `listen` the merged metrics of the workers in `ports` (index -> port)."""

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server API)
                # All at once: a worker that does not answer costs the scrape one timeout,
                # not one per worker.
                wanted = sorted(dict(ports).items())
                with ThreadPoolExecutor(max_workers=max(1, len(wanted))) as pool:
                    fetched = list(pool.map(_fetch, [port for _, port in wanted]))
                texts = [(str(i), text) for (i, _), text in zip(wanted, fetched, strict=True)]
                body = merge_expositions(texts).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # a line per scrape is noise

        try:
            host, port = parse_listen(listen)
            server = ThreadingHTTPServer((host, port), Handler)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot serve metrics on {listen!r}: {exc}") from exc
        threading.Thread(target=server.serve_forever, daemon=True).start()
        log.info("metrics of all workers on http://%s:%d/metrics", host, server.server_address[1])
        return cls(server)

    @property
    def port(self) -> int:
        """The port actually bound."""
        return int(self._server.server_address[1])

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()


def _fetch(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            return str(reply.read().decode("utf-8"))
    except OSError:
        return ""  # a worker being restarted: its series are missing from this scrape


def merge_expositions(texts: list[tuple[str, str]]) -> str:
    """Prometheus text expositions of several workers as one: each family once (its HELP and
    TYPE, then every worker's samples of it), every sample labelled worker="<name>"."""
    headers: dict[str, list[str]] = {}
    samples: dict[str, list[str]] = {}
    for worker, text in texts:
        family = ""
        for line in text.splitlines():
            if not line.strip():
                continue
            if line.startswith("#"):
                parts = line.split(maxsplit=3)
                if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                    family = parts[2]
                    lines = headers.setdefault(family, [])
                    if line not in lines:
                        lines.append(line)
                    samples.setdefault(family, [])
                continue
            samples.setdefault(family, []).append(_labelled(line, worker))
    out: list[str] = []
    for family, lines in samples.items():
        out += headers.get(family, [])
        out += lines
    return "\n".join(out) + "\n"


def _labelled(sample: str, worker: str) -> str:
    """One sample line with worker="<worker>" as its first label."""
    brace = sample.find("{")
    space = sample.find(" ")
    if brace != -1 and (space == -1 or brace < space):
        rest = sample[brace + 1 :]
        separator = "" if rest.startswith("}") else ","
        return f'{sample[:brace]}{{worker="{worker}"{separator}{rest}'
    return f'{sample[:space]}{{worker="{worker}"}}{sample[space:]}'
