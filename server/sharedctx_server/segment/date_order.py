"""Whether an output lists what happened newest first (docs/excerpts.md, "Superlatives":
"last" is a place in time).

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

__all__ = ["newest_first"]

_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
_DATE = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>" + "|".join(_MONTHS) + r") +(?P<cd>\d{1,2})"
    r" (?P<ch>\d{2}):(?P<cmi>\d{2}):(?P<cs>\d{2}) (?P<cy>\d{4})\b"
)
# Lines of a segment looked at for its date.
_HEAD_LINES = 4
# Dated segments an entry needs before its order says anything.
_MIN_DATED = 3


def _date(text: str) -> tuple[int, ...] | None:
    m = _DATE.search(text)
    if m is None:
        return None
    if m["y"]:
        return (int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"] or 0))
    month = _MONTHS.index(m["mon"]) + 1
    return (int(m["cy"]), month, int(m["cd"]), int(m["ch"]), int(m["cmi"]), int(m["cs"]))


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
