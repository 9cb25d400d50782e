"""The blocking Client against a real server: typed results, typed errors, paging."""

from __future__ import annotations

import pytest
from sharedctx import Client, NotFoundError, PutItem, VersionConflictError
from sharedctx_server.server import RunningServer

NS = "team-a/session-42"


def test_blocking_client_covers_every_call(threaded_server: RunningServer) -> None:
    with Client(f"127.0.0.1:{threaded_server.port}") as client:
        entry = client.put(NS, "a", "alpha", tags=("x",), kind="note")
        assert entry.version == 1 and entry.kind == "note"
        client.put_many(NS, [PutItem(key=f"b{i}", content=f"beta {i}") for i in range(7)])
        assert client.get(NS, "a").content == "alpha"
        assert set(client.get_many(NS, ["a", "b3", "zz"])) == {"a", "b3"}
        assert list(client.keys(NS, "b", page_size=2)) == [f"b{i}" for i in range(7)]
        with pytest.raises(VersionConflictError) as info:
            client.put(NS, "a", "again", if_version=5)
        assert info.value.current_version == 1
        assert client.delete(NS, "a") is True
        with pytest.raises(NotFoundError):
            client.get(NS, "a")
        assert client.stats(NS).entries == 7
        assert client.clear(NS) == 7


def test_unreachable_server_raises_unavailable_after_retries() -> None:
    from sharedctx import UnavailableError

    with Client("127.0.0.1:1", timeout=2, retries=1) as client:
        with pytest.raises(UnavailableError):
            client.get(NS, "a")
