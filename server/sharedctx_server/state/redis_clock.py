"""Redis's clock without a round trip: this process's monotonic clock plus a sampled offset.

Fit needs "now" on Redis's clock: expiry times are Redis's, so an entry must leave Fit's
candidates when Redis expires it, whatever this machine's clock says. Asking TIME on every Fit
would add a command to the single one a steady-state Fit sends (its change-log read). Instead
the health loop samples TIME about once a second and the offset it measures serves every Fit in
between. The offset rides on the monotonic clock, so a step of this machine's wall clock (NTP,
a resumed VM) changes nothing. Its error is half the sample's round trip (event-loop delay
included) plus the drift between two clocks over the sample's age: about a millisecond. A
sample whose round trip was slow is not taken while a fresh one exists; a stale sample (the
health loop stopped, or Redis was down) is refreshed inline by the next reader.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Beyond this age a sample is not trusted: the reader takes a new one first.
DEFAULT_MAX_AGE_SECONDS = 5.0
# A sample slower than this replaces a fresh one only when nothing better is at hand.
SLOW_SAMPLE_SECONDS = 0.02


class RedisClock:
    """The latest offset between Redis's clock and this process's monotonic clock."""

    def __init__(
        self,
        max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_age = max_age_seconds
        self._monotonic = monotonic
        self._offset_ms = time.time() * 1000.0 - monotonic() * 1000.0
        self._sampled_at: float | None = None

    def local(self) -> float:
        """The clock samples are taken against (seconds, monotonic)."""
        return self._monotonic()

    def observe(self, redis_ms: float, sent: float, received: float) -> None:
        """Record a TIME reply `redis_ms` for a request sent and answered at these `local()`
        times: Redis read its clock, on average, halfway through the round trip."""
        if received - sent > SLOW_SAMPLE_SECONDS and self.fresh:
            return
        self._offset_ms = redis_ms - (sent + received) * 500.0
        self._sampled_at = received

    @property
    def fresh(self) -> bool:
        """True when a sample younger than the maximum age exists."""
        return (
            self._sampled_at is not None and self._monotonic() - self._sampled_at <= self._max_age
        )

    def now_ms(self) -> int:
        """Redis's clock now, in milliseconds (this machine's wall clock until the first
        sample)."""
        return int(self._monotonic() * 1000.0 + self._offset_ms)
