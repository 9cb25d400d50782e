"""Byte forms of texts and vectors, as the store keys and stores them.

Vectors travel as raw float32 little-endian bytes: 4 bytes a dimension, no header, so a stored
embedding is exactly `dim * 4` bytes and can be read back without knowing the writer's platform.
The dimension is not in the bytes; the model id that keys them fixes it.
"""

from __future__ import annotations

import hashlib

import numpy as np
from numpy.typing import NDArray

# Explicit byte order: the store is shared by replicas that need not share a platform.
VECTOR_DTYPE = np.dtype("<f4")


def content_hash(text: str) -> str:
    """Return the sha256 hex digest of `text` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def to_bytes(vec: NDArray[np.floating]) -> bytes:
    """Return one vector as float32 little-endian bytes (`len == dim * 4`)."""
    arr = np.asarray(vec)
    if arr.ndim != 1:
        raise ValueError(f"to_bytes takes one vector (1-d), got shape {arr.shape}")
    return arr.astype(VECTOR_DTYPE, copy=False).tobytes()


def from_bytes(data: bytes, dim: int) -> NDArray[np.float32]:
    """Return the float32 vector stored in `data`, checking that it has `dim` dimensions."""
    if len(data) != dim * VECTOR_DTYPE.itemsize:
        raise ValueError(
            f"embedding bytes of length {len(data)} do not hold {dim} float32 values "
            f"({dim * VECTOR_DTYPE.itemsize} bytes expected)"
        )
    # frombuffer gives a read-only view of `data`; the copy makes it a normal native array.
    return np.frombuffer(data, dtype=VECTOR_DTYPE).astype(np.float32)
