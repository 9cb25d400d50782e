"""The real embedding model, loaded once per test process and shared by every server."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from sharedctx_server.embedding import Embedder, ModelSpec


@functools.cache
def shared_embedder() -> Embedder:
    """The default offline model (its folder assembled in a temporary cache)."""
    cache = Path(tempfile.mkdtemp(prefix="sharedctx-test-cache-"))
    # One onnxruntime thread: tests run beside each other's servers on a small machine.
    return Embedder.load(ModelSpec(), cache, threads=1)
