"""64-bit SimHash fingerprints over character 4-grams, with vectorised bit voting.

The reference implementation (Headroom's adaptive sizer) votes bit by bit in a Python loop.
Here every distinct 4-gram is hashed once per call, its 64 bits are unpacked into a matrix,
and the votes of each text are a column sum of that matrix: the same fingerprints, a fraction
of the work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

# Bound on the (grams x 64) byte matrix expanded at once, so memory stays flat on large inputs.
_GRAMS_PER_BLOCK = 1 << 16

_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _features(text_lower: str) -> list[str]:
    """Character 4-grams at range(max(1, len - 3)); a text under 4 characters is one feature."""
    if len(text_lower) < 4:
        return [text_lower]
    return [text_lower[i : i + 4] for i in range(len(text_lower) - 3)]


def _digest64(feature: str) -> bytes:
    # The first 16 hex digits of the md5 are its first 8 bytes, read big-endian.
    return hashlib.md5(feature.encode("utf-8"), usedforsecurity=False).digest()[:8]


def simhash_many(texts: Sequence[str]) -> npt.NDArray[np.uint64]:
    """SimHash of every text, as a uint64 array in input order."""
    n = len(texts)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    row_of: dict[str, int] = {}
    rows: list[int] = []
    lengths = np.empty(n, dtype=np.int64)
    for i, text in enumerate(texts):
        feats = _features(text.lower())
        lengths[i] = len(feats)
        # Near-duplicate texts share most of their grams: hash each distinct gram once.
        rows.extend([row_of.setdefault(f, len(row_of)) for f in feats])
    digests = b"".join([_digest64(f) for f in row_of])
    # unpackbits is MSB first, so column 0 is bit 63 of the big-endian integer.
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8).reshape(-1, 8), axis=1)
    ones = _vote_counts(bits, np.asarray(rows, dtype=np.int64), lengths)
    # A bit is set where +1 votes outnumber -1 votes: ones - (m - ones) > 0.
    set_bits = (2 * ones) > lengths[:, None]
    packed = np.packbits(set_bits, axis=1)
    return packed.view(">u8").ravel().astype(np.uint64)


def _vote_counts(
    bits: npt.NDArray[np.uint8], rows: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Per text, how many of its features have each bit set (texts x 64)."""
    n = lengths.size
    ones = np.empty((n, 64), dtype=np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    first = 0
    while first < n:
        # Take whole texts until the block holds about _GRAMS_PER_BLOCK grams (at least one text).
        last = int(np.searchsorted(ends, starts[first] + _GRAMS_PER_BLOCK, side="right"))
        last = max(last, first + 1)
        lo, hi = int(starts[first]), int(ends[last - 1])
        block = bits[rows[lo:hi]]
        ones[first:last] = np.add.reduceat(block, starts[first:last] - lo, axis=0, dtype=np.int64)
        first = last
    return ones


def simhash(text: str) -> int:
    """64-bit SimHash fingerprint of one text (character 4-grams, md5 bit voting)."""
    return int(simhash_many([text])[0])


def popcount64(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]:
    """Number of set bits of each uint64."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        counts: npt.NDArray[np.uint8] = np.bitwise_count(values)
        return counts
    # numpy 1.26 has no popcount ufunc: sum a byte table over the 8 bytes of each value.
    as_bytes = values.reshape(-1).view(np.uint8).reshape(-1, 8)
    counts = _BYTE_POPCOUNT[as_bytes].sum(axis=1, dtype=np.uint8)
    return counts.reshape(values.shape)
