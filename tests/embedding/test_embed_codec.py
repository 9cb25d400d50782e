"""Byte forms the store relies on: content hashes and float32 little-endian vectors."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest
from sharedctx_server.embedding import content_hash, from_bytes, to_bytes


def test_content_hash_is_sha256_hex_of_utf8() -> None:
    text = "naïve café ☕"
    assert content_hash(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert content_hash("") == hashlib.sha256(b"").hexdigest()
    assert content_hash("a") != content_hash("a ")


def test_vector_bytes_are_float32_little_endian_and_round_trip() -> None:
    vec = np.array([1.0, -2.5, 0.1, 3e-8], dtype=np.float64)
    data = to_bytes(vec)
    assert data == struct.pack("<4f", *vec)
    back = from_bytes(data, 4)
    assert back.dtype == np.float32
    assert back.flags.writeable
    np.testing.assert_array_equal(back, vec.astype(np.float32))


def test_from_bytes_refuses_a_length_that_does_not_match_the_dimension() -> None:
    with pytest.raises(ValueError, match="384"):
        from_bytes(b"\x00" * (383 * 4), 384)


def test_to_bytes_takes_one_vector_only() -> None:
    with pytest.raises(ValueError, match="1-d"):
        to_bytes(np.zeros((2, 3), dtype=np.float32))
