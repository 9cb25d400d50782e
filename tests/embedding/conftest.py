"""Fixtures for the embedding tests: the real default model, loaded once, with no network."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from sharedctx_server.embedding import Embedder, ModelSpec


def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"network access attempted: {args!r}")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any connection attempt or DNS look-up fail the test."""
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    monkeypatch.setattr(socket, "getaddrinfo", _no_network)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh cache folder for the session (not the user's ~/.cache)."""
    return tmp_path_factory.mktemp("sharedctx-cache")


@pytest.fixture(scope="session")
def embedder(cache_dir: Path) -> Iterator[Embedder]:
    """The default model, loaded once per session with every network call refused."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _no_network)
        mp.setattr(socket, "getaddrinfo", _no_network)
        loaded = Embedder.load(ModelSpec(), cache_dir)
    yield loaded


class CountingEncoder:
    """The real model, counting its calls; it can be held at a gate or made to fail."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[int] = []
        self.seen: list[list[str]] = []
        self.entered = threading.Event()
        self.gate: threading.Event | None = None
        self.fail_with: Exception | None = None
        self.model_id_override: str | None = None

    @property
    def model_id(self) -> str:
        return self.model_id_override or self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(len(texts))
        self.seen.append(list(texts))
        self.entered.set()
        if self.gate is not None and not self.gate.wait(timeout=60):
            raise RuntimeError("test gate never opened")
        if self.fail_with is not None:
            raise self.fail_with
        return self.inner.embed(texts)


@pytest.fixture
def counting(embedder: Embedder) -> CountingEncoder:
    """A fresh call-counting wrapper around the session's model."""
    return CountingEncoder(embedder)
