"""Dates in outputs, read to order what they list (docs/excerpts.md, "Superlatives"): whether
an output lists what happened newest first ("last" is a place in time), and when each file
of a directory listing was last changed (its newest and oldest files).

`git log` shows the newest commit at the top, and so do `journalctl -r`, most CI run lists
and release notes; a log shows its newest line at the bottom. "What did the last commit
change?" asks for the top of a `git log` and the bottom of a log, so each cut entry says
which it is, read from the dates its segments open with: ISO dates with a time of day
(`2026-12-06 10:00:00`, `2026-12-06T10:00:00Z`) and C's `ctime` dates, which git prints
(`Sun Dec 6 20:32:31 2026`), looked for in each segment's first few lines (a commit's date is
its third).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["listing_times", "newest_first"]

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAY = 24 * 60 * 60
_YEAR = 12 * 31 * _DAY  # on the scale of _moment: months of 31 days
_HALF_YEAR = 183 * _DAY


def _moment(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> int:
    """A time as seconds on a scale that orders times (`month` from 0, every month 31 days)."""
    return ((((year * 12 + month) * 31 + day) * 24 + hour) * 60 + minute) * 60 + second


_DATE = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>"
    + "|".join(m.title() for m in MONTHS)
    + r") +(?P<cd>\d{1,2}) (?P<ch>\d{2}):(?P<cmi>\d{2}):(?P<cs>\d{2}) (?P<cy>\d{4})\b"
)
# Lines of a segment looked at for its date.
_HEAD_LINES = 4
# Dated segments an entry needs before its order says anything.
_MIN_DATED = 3


def _date(text: str) -> int | None:
    """The first ISO or `ctime` date in `text` (_moment), or None."""
    m = _DATE.search(text)
    if m is None:
        return None
    if m["y"]:
        return _moment(
            int(m["y"]), int(m["mo"]) - 1, int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"] or 0)
        )
    month = MONTHS.index(m["mon"].lower())
    return _moment(int(m["cy"]), month, int(m["cd"]), int(m["ch"]), int(m["cmi"]), int(m["cs"]))


def newest_first(lines: Sequence[str], starts: Sequence[int]) -> bool:
    """Whether the segments (first lines `starts`) that open with a date mostly go back in
    time: at least _MIN_DATED of them, and more than twice as many steps back as forward."""
    bounds = [*starts, len(lines)]
    dates = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        date = _date("\n".join(lines[a : min(b, a + _HEAD_LINES)]))
        if date is not None:
            dates.append(date)
    if len(dates) < _MIN_DATED:
        return False
    back = sum(1 for x, y in zip(dates, dates[1:], strict=False) if y < x)
    ahead = sum(1 for x, y in zip(dates, dates[1:], strict=False) if y > x)
    return back > 2 * ahead


_LISTING_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}))?")


def listing_times(dates: Sequence[str]) -> list[int]:
    """Each of a listing's dates (`Dec 6 21:27`, `Sep 20 2022`, `6 Dec 21:27`, `2024-05-01
    10:00`) as a comparable number (_moment), 0 where it does not read. `ls -l` shows a year
    for a time more than six months back and a time of day without a year for a later one:
    those are newer than any with a year, and of them, those more than half a year after the
    earliest belong to the year before (a listing made in January holds December's)."""
    read = [_listing_time(date) for date in dates]
    dated = [when for when, has_year in read if has_year]
    recent = [when for when, has_year in read if when and not has_year]
    if not recent:
        return [when for when, _ in read]
    earliest = min(recent)
    # After every time with a year, by a year before which the late ones still come.
    base = max(dated, default=0) + _YEAR
    return [
        when if has_year or not when
        else when + base - (_YEAR if when - earliest > _HALF_YEAR else 0)
        for when, has_year in read
    ]  # fmt: skip


def _listing_time(date: str) -> tuple[int, bool]:
    """One listing date as _moment (0: unread), and whether it has a year (else year 0)."""
    iso = _LISTING_ISO.match(date)
    if iso is not None:
        year, month, day = int(iso[1]), int(iso[2]) - 1, int(iso[3])
        return _moment(year, month, day, int(iso[4] or 0), int(iso[5] or 0)), True
    words = date.replace(".", "").split()
    if len(words) != 3:
        return 0, False
    first, second, last = words
    name, day_text = (first, second) if first.lower()[:3] in MONTHS else (second, first)
    if name.lower()[:3] not in MONTHS or not day_text.isdigit():
        return 0, False
    month = MONTHS.index(name.lower()[:3])
    if last.isdigit():
        return _moment(int(last), month, int(day_text)), True
    hour, _, minute = last.partition(":")
    if hour.isdigit() and minute.isdigit():
        return _moment(0, month, int(day_text), int(hour), int(minute)), False
    return 0, False
