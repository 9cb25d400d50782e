"""Times of day in questions and on log lines, as mark terms for BM25 (docs/excerpts.md,
"Times of day").

"What happened at 10:05?", "which errors came between 14:00 and 14:10?": a log line says
when it was written in its timestamp, whose numbers are split into terms (`10`, `05`) that
every other line holds somewhere too. So a line whose record opens with a time of day carries
a mark for its minute (`@10:05`), and a question that names a time asks for the marks of its
minute, or of every minute of a range it names: BM25 weighs a minute's mark as rarely as the
minute's lines are, and the lines of that minute match the question where no word of it is
on them. `@` is no word character: no term of any text is a mark.
"""

from __future__ import annotations

import re

__all__ = [
    "CLOCK_MARK",
    "MAX_RANGE_MINUTES",
    "clock_mark",
    "clock_query_terms",
    "line_clock",
    "recent_minutes",
    "window_marks",
]

CLOCK_MARK = "@"
# A range longer than this asks for its two ends only: every minute of a day would be a query
# of 1,440 terms, each a few lines' worth.
MAX_RANGE_MINUTES = 120

# A time of day: hours and minutes, maybe seconds and a fraction, not inside a longer run of
# digits and colons (`2026-12-06` and `::1` are no times, nor is a ratio's `3:2`).
_TIME = r"(?<![\d:.])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::[0-5]\d(?:[.,]\d+)?)?(?![\d:])"
_QUERY_TIME = re.compile(_TIME + r"(?:\s*(?P<half>[ap])\.?m\b\.?)?", re.IGNORECASE)
_LINE_TIME = re.compile(_TIME)
# What joins the two ends of a range: "10:00 to 10:15", "between 10:00 and 10:15", "10:00-10:15".
_RANGE_JOIN = re.compile(r"\s*(?:-|–|to|and|until|till|through)\s*$", re.IGNORECASE)
# A log line says when in its first characters (a date, a level or a host may come first).
_STAMP_REACH = 64


def clock_mark(hour: int, minute: int) -> str:
    """The mark term of a minute of the day: `@10:05`."""
    return f"{CLOCK_MARK}{hour:02d}:{minute:02d}"


def line_clock(line: str) -> str | None:
    """The mark of the minute a line's timestamp names (a time of day in its first
    characters), or None."""
    m = _LINE_TIME.search(line, 0, _STAMP_REACH)
    return clock_mark(int(m["h"]), int(m["m"])) if m else None


def clock_query_terms(query: str) -> list[str]:
    """The minute marks a query asks for: each time of day it names (`10:05`, `10:05:30`,
    `3:05 pm`), and every minute between two times joined as a range ("from 10:00 to
    10:15"), at most MAX_RANGE_MINUTES of them."""
    found = list(_QUERY_TIME.finditer(query))
    minutes = [_minute_of_day(m) for m in found]
    marks: dict[str, None] = {}
    for k, minute in enumerate(minutes):
        marks[_mark_of(minute)] = None
        if k + 1 < len(found) and _RANGE_JOIN.match(query[found[k].end() : found[k + 1].start()]):
            end = minutes[k + 1]
            if 0 < end - minute <= MAX_RANGE_MINUTES:
                marks.update(dict.fromkeys(_mark_of(t) for t in range(minute, end + 1)))
    return list(marks)


# "In the last 10 minutes", "over the past hour", "the previous 2 hrs": a window that ends at
# the newest time the namespace's logs hold.
_RECENT = re.compile(
    r"\b(?:last|past|previous|latest|recent)\s+(?:(?P<n>\d{1,4})|an?|one|(?P<half>half\s+an?))?\s*"
    r"(?P<unit>minutes?|mins?|hours?|hrs?)\b",
    re.IGNORECASE,
)


def recent_minutes(query: str) -> int | None:
    """How many minutes back from the newest log time a query asks about ("the last 10
    minutes": 10, "the past hour": 60), or None when it names no such window."""
    m = _RECENT.search(query)
    if m is None:
        return None
    count = int(m["n"]) if m["n"] else 1
    minutes = count * (60 if m["unit"].lower().startswith("h") else 1)
    return minutes // 2 if m["half"] else minutes


def window_marks(latest: str, minutes: int) -> list[str]:
    """The marks of the minutes from `minutes` before the minute of mark `latest` to it, at
    most MAX_RANGE_MINUTES back (a window over midnight wraps to the day before)."""
    hour, minute = int(latest[1:3]), int(latest[4:6])
    end = hour * 60 + minute
    reach = min(minutes, MAX_RANGE_MINUTES)
    return [_mark_of((end - back) % 1440) for back in range(reach, -1, -1)]


def _minute_of_day(m: re.Match[str]) -> int:
    hour, minute = int(m["h"]), int(m["m"])
    half = (m["half"] or "").lower()
    if half == "p" and hour < 12:
        hour += 12
    elif half == "a" and hour == 12:
        hour = 0
    return hour * 60 + minute


def _mark_of(minute_of_day: int) -> str:
    return clock_mark(*divmod(minute_of_day, 60))
