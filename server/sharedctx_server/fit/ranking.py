"""Candidates in fill order (score descending, ties newer first, then the lower row),
produced in growing chunks with partial sorts, so that a walk that stops early never sorts the
whole namespace."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import numpy.typing as npt

__all__ = ["Ranking"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_FIRST_CHUNK = 1024
_NO_COST = np.iinfo(np.int64).max
_CHUNK_GROWTH = 8


class Ranking:
    """Pool rows in fill order (score descending, ties newer first, then the lower row),
    produced chunk by chunk.

    Chunks grow geometrically; each holds every remaining row at or above a score cut (found
    with np.partition), so chunks never interleave and together they are the full order.
    Under SKIP, rows that can no longer fit are dropped before a chunk is cut and sorted, so
    a walk that runs past the first chunk (small budget left, one tiny entry far down the
    ranking) sorts only the rows it could still take.
    """

    def __init__(
        self,
        pool: BoolArray,
        scores: FloatArray,
        times: FloatArray,
        costs: IntArray,
        tiebreak: IntArray,
    ) -> None:
        # Rows not yet handed out (nor dropped), with their scores and costs kept aligned so
        # each chunk costs no gathers over the whole namespace.
        self.rows = np.flatnonzero(pool)
        self._scores = scores[self.rows]
        self._costs = costs[self.rows]
        self._times = times
        self._tiebreak = tiebreak
        self._size = _FIRST_CHUNK

    def rest_min_cost(self) -> int:
        """The smallest cost among the rows not handed out yet."""
        return int(self._costs.min()) if self._costs.size else _NO_COST

    def _keep(self, mask: BoolArray) -> None:
        self.rows, self._scores, self._costs = (
            self.rows[mask],
            self._scores[mask],
            self._costs[mask],
        )

    def chunks(self, fitting_below: Callable[[], int] | None) -> Iterator[IntArray]:
        """The next chunk of rows, in fill order, until none are left.

        `fitting_below`: the largest cost that could still fit, to drop rows above it.
        """
        while self.rows.size:
            if fitting_below is not None:
                fits = self._costs <= fitting_below()
                if not fits.all():
                    self._keep(fits)
                    if not self.rows.size:
                        return
            if self.rows.size <= self._size * 2:
                chunk, chunk_scores = self.rows, self._scores
                self._keep(np.zeros(self.rows.size, dtype=np.bool_))
            else:
                k = self.rows.size - self._size
                in_chunk = self._scores >= np.partition(self._scores, k)[k]
                chunk, chunk_scores = self.rows[in_chunk], self._scores[in_chunk]
                self._keep(~in_chunk)
            self._size *= _CHUNK_GROWTH
            yield chunk[np.lexsort((self._tiebreak[chunk], -self._times[chunk], -chunk_scores))]
