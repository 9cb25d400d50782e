"""Count the commands clients send to Redis (MONITOR), and optionally what scripts run inside."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis


@contextmanager
def client_commands(
    url: str, mentioning: str = "", include_scripts: bool = False
) -> Iterator[list[str]]:
    """Collect the names of commands clients send while the block runs (PINGs left out);
    with `mentioning`, only commands whose arguments contain that text (e.g. a hash tag); with
    `include_scripts`, also the commands scripts run (as Redis's command statistics count)."""
    seen: list[str] = []
    conn = redis.Redis.from_url(url)
    ready = threading.Event()
    done = threading.Event()

    def run() -> None:
        with conn.monitor() as monitor:
            ready.set()
            for event in monitor.listen():
                if done.is_set():
                    return
                if event.get("client_type") == "lua" and not include_scripts:
                    continue
                name = event["command"].split(" ", 1)[0].lower()
                if mentioning and mentioning not in event["command"]:
                    continue
                if name not in ("ping", "echo"):
                    seen.append(name)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(5)
    time.sleep(0.1)
    try:
        yield seen
    finally:
        time.sleep(0.2)
        done.set()
        # A last command wakes the monitor so the thread can see `done`.
        redis.Redis.from_url(url).echo("bye")
        thread.join(5)
        conn.close()
