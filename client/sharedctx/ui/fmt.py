"""How numbers, times and durations read on the pages (the templates' filters)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

__all__ = ["FILTERS", "duration", "namespace_of", "nspath", "number", "percent", "share", "when"]


def number(value: float | int) -> str:
    """1234 -> "1,234"."""
    return f"{int(value):,}"


def share(part: float, whole: float) -> str:
    """`part` as a CSS width in percent of `whole`, clipped to [0, 100] (numbers only: these
    go into style attributes)."""
    if whole <= 0:
        return "0"
    return f"{max(0.0, min(100.0, 100.0 * part / whole)):.3f}"


def percent(part: float, whole: float) -> str:
    """A share as whole percent, "37%" ("<1%" for a sliver rather than a misleading 0%)."""
    if whole <= 0:
        return "-"
    value = 100.0 * part / whole
    if 0 < value < 1:
        return "<1%"
    if 99 < value < 100:
        return ">99%"  # not all: 70,806 of 70,998 read "100%"
    return f"{value:.0f}%"


# A browser resolves `.` and `..` segments of a path (`/ns/qa/../x` is `/ns/x`), and their
# escaped forms too (`%2E%2E`); so a namespace's dot segments go escaped twice, `%252E`,
# which the server decodes once to `%2E`, a segment no namespace holds (no `%` in names).
_DOTS = re.compile(r"(?:%2E){1,2}", re.IGNORECASE)


def nspath(namespace: str) -> str:
    """A namespace as a URL path, segment by segment (dot segments escaped twice)."""
    return "/".join(
        "%252E" * len(part) if part in (".", "..") else quote(part, safe="")
        for part in namespace.split("/")
    )


def namespace_of(path_param: str) -> str:
    """The namespace a path written by `nspath` names (as the server decoded it once)."""
    return "/".join(
        "." * (len(part) // 3) if _DOTS.fullmatch(part) else part for part in path_param.split("/")
    )


def duration(seconds: float) -> str:
    """A short span for people: "45s", "4m 10s", "3h 5m", "2d 4h"."""
    s = int(max(0.0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


def now() -> datetime:
    """The current time in UTC."""
    return datetime.now(UTC)


def when(value: datetime | None) -> str:
    """How long ago `value` was ("3m 5s ago"; "in 2m" for the future)."""
    if value is None:
        return "-"
    delta = (now() - value).total_seconds()
    return f"in {duration(-delta)}" if delta < 0 else f"{duration(delta)} ago"


def iso(value: datetime | None) -> str:
    """UTC ISO-8601 to the second, for tooltips."""
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def ttl_left(expires_at: datetime | None) -> str:
    """Time until expiry: "never", "expired" or a duration."""
    if expires_at is None:
        return "never"
    left = (expires_at - now()).total_seconds()
    return "expired" if left <= 0 else duration(left)


def epoch_ms(value: datetime | None) -> str:
    """Milliseconds since the epoch, for the page's script (empty for None)."""
    return "" if value is None else str(int(value.timestamp() * 1000))


def score(value: float) -> str:
    """A score or factor value: three decimals."""
    return f"{value:.3f}"


FILTERS: dict[str, Any] = {
    "number": number,
    "share": share,
    "percent": percent,
    "when": when,
    "iso": iso,
    "ttl_left": ttl_left,
    "epoch_ms": epoch_ms,
    "score": score,
    "nspath": nspath,
}
