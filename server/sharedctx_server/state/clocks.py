"""The times of day of a namespace's cut entries (segment.clock_marks): where "the last 10
minutes" end, and which segments a time window a query names leaves out (docs/excerpts.md,
"Times of day")."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..fit.segment_index import SegmentTable

__all__ = ["EntryClocks"]

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


class _Clock(NamedTuple):
    latest: str  # the minute mark of the entry's last stamped segment
    stamped: BoolArray  # per segment, whether it opens with a time of day


class EntryClocks:
    """Per cut entry stamped with times of day, by slot: its last minute and which of its
    segments open with a time; and which cut entries list what happened newest first
    (segment.date_order)."""

    def __init__(self) -> None:
        self._clocks: dict[int, _Clock] = {}
        self._newest_first: set[int] = set()

    def set(
        self, slot: int, minutes: dict[int, list[str]], segments: int, newest_first: bool = False
    ) -> None:
        """Record the minute marks (clock_terms: per stamped segment, its mark) of the entry
        in `slot`, of `segments` segments, and whether it lists newest first."""
        self.forget(slot)
        if newest_first:
            self._newest_first.add(slot)
        if minutes:
            stamped = np.zeros(segments, dtype=np.bool_)
            stamped[list(minutes)] = True
            self._clocks[slot] = _Clock(minutes[max(minutes)][0], stamped)

    def forget(self, slot: int) -> None:
        """Drop the slot (no-op when it has no times)."""
        self._clocks.pop(slot, None)
        self._newest_first.discard(slot)

    def places(self, table: SegmentTable) -> IntArray:
        """Per position of `table`, its place in time within its entry: its segment's index,
        negated in an entry that lists newest first (the last written is its first)."""
        local = table.local.astype(np.int64)
        if not self._newest_first:
            return local
        flip = np.isin(table.slot_of, np.fromiter(self._newest_first, dtype=np.int64))
        return np.where(flip, -local, local)

    def latest(self, among: BoolArray, event_ms: IntArray, sequence: IntArray) -> str | None:
        """The minute mark of the last stamped line of the newest entry of `among` (by event
        time, then by write order) that has one."""
        stamped = [slot for slot in self._clocks if slot < among.size and among[slot]]
        if not stamped:
            return None
        newest = max(stamped, key=lambda slot: (int(event_ms[slot]), int(sequence[slot])))
        return self._clocks[newest].latest

    def stamped(self, table: SegmentTable) -> BoolArray:
        """Per position of `table`, whether its segment opens with a time of day."""
        flat = np.zeros(len(table), dtype=np.bool_)
        bounds = table.bounds.tolist()
        for k, slot in enumerate(table.slots.tolist()):
            clock = self._clocks.get(slot)
            if clock is not None and clock.stamped.size == bounds[k + 1] - bounds[k]:
                flat[bounds[k] : bounds[k + 1]] = clock.stamped
        return flat
