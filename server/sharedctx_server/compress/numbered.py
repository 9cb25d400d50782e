"""Text whose every line starts with its number: `cat -n`, `nl -ba`, and the file readers of
coding agents, which print a file that way (`    12\tdef f():`, or `    12→def f():`).

The structure is in the text after the numbers: read with them, every line looks like a
record of its own (a number, then anything), so an excerpt of a source file was cut line by
line, a function's `def` apart from its body (docs/excerpts.md), and the source outline did
not see the source (docs/compression.md).
"""

from __future__ import annotations

import re

from .shapes import LINE_NUMBER

__all__ = ["without_numbers"]

_NUMBER = re.compile(rf"^{LINE_NUMBER}")
# A blank line's number once trailing blanks are stripped (`     2\t` became `     2`, as the
# compressed form and many agents' harnesses print it): padded, as `cat -n` pads every number;
# a bare count up from the first column is `seq`, not numbered lines.
_BLANK = re.compile(r"^ +(\d+)$")
# At least _LEAST lines must carry a number, and _SHARE of the non-blank ones; _SHARE of the
# steps from one number to the next must be one up (a count or a size before each line is no
# line number).
_LEAST = 3
_SHARE = 0.9


def without_numbers(lines: list[str]) -> list[str] | None:
    """`lines` without the number in front of each, when (nearly) every non-blank line has
    one and they count up by one (`nl` leaves blank lines unnumbered); otherwise None."""
    if lines and lines[0].strip() and _NUMBER.match(lines[0]) is None:
        return None  # most texts: known at the first line
    body: list[str] = []
    numbers: list[int] = []
    nonblank = 0
    for line in lines:
        match = _NUMBER.match(line) or _BLANK.match(line)
        if match is None:
            blank = not line.strip()
            nonblank += not blank
            body.append("" if blank else line)
            continue
        nonblank += 1
        numbers.append(int(match.group(1)))
        body.append(line[match.end() :])
    if len(numbers) < max(_LEAST, _SHARE * nonblank):
        return None
    in_step = sum(b == a + 1 for a, b in zip(numbers, numbers[1:], strict=False))
    return body if in_step >= _SHARE * (len(numbers) - 1) else None
