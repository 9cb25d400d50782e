"""Redis's clock without a round trip: this machine's clock plus an offset sampled from TIME.

Fit needs "now" on Redis's clock: expiry times are Redis's, so an entry must leave Fit's
candidates when Redis expires it, whatever this machine's clock says. Asking TIME on every Fit
would add a command to the single one a steady-state Fit sends (its change-log read). Instead
the health loop samples TIME about once a second and the offset it measures serves every Fit in
between. The offset is off by at most half the sample's round trip plus the drift between two
NTP-disciplined clocks over the sample's age: well under a millisecond on a LAN. A stale sample
(the health loop stopped, or Redis was down) is refreshed inline by the next reader.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Beyond this age a sample is not trusted: the reader takes a new one first.
DEFAULT_MAX_AGE_SECONDS = 5.0


class RedisClock:
    """The latest offset between Redis's clock and this machine's, and how old it is."""

    def __init__(
        self,
        max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_age = max_age_seconds
        self._wall = wall
        self._monotonic = monotonic
        self._offset_ms = 0.0
        self._sampled_at: float | None = None

    def observe(self, redis_ms: float, sent: float, received: float) -> None:
        """Record a TIME reply `redis_ms` for a request sent and answered at these wall times
        (seconds): Redis read its clock, on average, halfway through the round trip."""
        self._offset_ms = redis_ms - (sent + received) * 500.0
        self._sampled_at = self._monotonic()

    @property
    def fresh(self) -> bool:
        """True when a sample younger than the maximum age exists."""
        return (
            self._sampled_at is not None and self._monotonic() - self._sampled_at <= self._max_age
        )

    def now_ms(self) -> int:
        """Redis's clock now, in milliseconds (this machine's clock until the first sample)."""
        return int(self._wall() * 1000.0 + self._offset_ms)

    def wall(self) -> float:
        """This machine's clock (seconds), the one samples are taken against."""
        return self._wall()
