"""Masking the variable parts of a line (times, ids, numbers) before judging similarity."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

__all__ = ["line_keys", "mask_line"]

# Order matters: a timestamp is digits too, a hex id may be all digits. Each pattern opens
# with a look at the one character every match starts with: Python's engine then skips other
# positions at once instead of trying each alternative there (half the time on JSON items).
_TIMESTAMP = re.compile(
    r"(?=\d)(?:\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?\b)"
)
_HEX = re.compile(r"(?=[0-9a-fA-F])(?:\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b)")
_DIGITS = re.compile(r"\d+")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{8,}")


def mask_line(line: str) -> str:
    """`line` with timestamps, hex ids and numbers replaced by placeholders, spaces collapsed."""
    line = _TIMESTAMP.sub("<t>", line)
    line = _HEX.sub("<x>", line)
    line = _DIGITS.sub("0", line)
    return " ".join(line.split())


def line_keys(lines: list[str]) -> list[str]:
    """What the log compressor compares lines by: numbers, hex ids, paths and the words that
    vary between lines of one shape masked.

    Cheaper than `mask_line` per line (a 1 MiB log has ten thousand lines): numbers and hex
    runs are masked in two passes over the joined lines (neither pattern crosses a newline).
    Numbers go first, so a timestamp needs no pattern of its own (`0-0-0 0:0:0,0` is the same
    on every line) and a hex id is a run of eight or more hex characters; then every word
    holding a `/` (a path, a URL) becomes one placeholder, and varying words go (see
    _mask_varying).
    """
    text = _HEX_RUN.sub("<x>", _DIGITS.sub("0", "\n".join(lines)))
    words = [
        ["<p>" if "/" in word else word for word in line.split()] if "/" in line else line.split()
        for line in text.split("\n")
    ]
    return _mask_varying(words)


# A word is common in its column when at least this share of the lines of its length (and at
# least _COMMON_MIN of them) hold it there.
_COMMON_SHARE = 0.05
_COMMON_MIN = 3
_MIN_LINES = 6  # lines of one length needed before columns say anything
# A column with more distinct words than this names things (packages, users, hosts): every
# word of it varies, even one that recurs (a frequent version string).
_MAX_CONSTANTS = 12


def _mask_varying(words: list[list[str]]) -> list[str]:
    """Each line's words joined by one space, with the words that vary between lines of one
    shape masked as `<*>`.

    Lines with the same number of words are read as columns; a word varies when few of those
    lines hold it at that place, or when its column holds many different words (a package
    name in `status unpacked libfoo:amd64 0.0-0`, a user in `session opened for user alice`).
    A line whose words are at least half common has a skeleton, and its varying words are
    masked, so the repeats of one statement look alike whatever they name. A line with no
    such skeleton (prose, messages that share no words) is left as it is: masking it would
    make unrelated lines look alike.
    """
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, line in enumerate(words):
        by_length[len(line)].append(i)
    out = [" ".join(line) for line in words]
    for length, members in by_length.items():
        if length < 3 or len(members) < _MIN_LINES:
            continue
        common_at = max(_COMMON_MIN, math.ceil(_COMMON_SHARE * len(members)))
        # Column by column (C-speed zip and Counter): which lines hold a common word there.
        columns = list(zip(*(words[i] for i in members), strict=True))
        common: list[list[bool]] = []
        for column in columns:
            counts = Counter(column)
            if len(counts) > _MAX_CONSTANTS:
                common.append([False] * len(column))
            else:
                constant = {w for w, k in counts.items() if k >= common_at}
                common.append([w in constant for w in column])
        for i, flags in zip(members, zip(*common, strict=True), strict=True):
            kept = sum(flags)
            if kept < length and 2 * kept >= length:
                out[i] = " ".join(w if c else "<*>" for w, c in zip(words[i], flags, strict=True))
    return out
