"""An entry's full form as segments: the units an excerpt is made of (docs/excerpts.md).

A segment is a run of consecutive lines that belong together (a log record with its
traceback, a JSON item, a paragraph). Segments are cut once, at Put, and stored with the
entry as three small arrays: line counts, token counts and error evidence, so that Fit can
plan an excerpt's exact cost without reading or tokenising the text again.

Token counts are each segment's text plus its newline, counted on its own, plus what joining
it to a piece before it can add (`joined_cost`); an excerpt's text is the concatenation of
exactly those pieces and of omission markers, so the sum of the parts bounds the excerpt's
cost.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

__all__ = [
    "LONG_LINE_CHARS",
    "Segments",
    "has_long_line",
    "is_long_line",
    "joined_cost",
    "line_head",
    "marker_tokens",
    "omission_marker",
    "shown_line",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Wire format: version byte, segment count, then the columns (little-endian). Version 1 had
# no heads; its blobs still read (every segment without a head). Version 3 has version 2's
# layout, counted on the excerpt view of long lines and progress bars (shown_line, settled
# redraws): older blobs still read, and the namespace cache cuts their entries again
# (is_current), so that a plan's costs match what is shown. Version 4 adds whether the
# compressed form shows each segment; a version 3 blob reads as not knowing, and stays (the
# cache cuts from the full form alone and could not know either).
_VERSION = 4
_CURRENT = (3, 4)
_PER_SEGMENT = {1: 9, 2: 13, 3: 13, 4: 14}
_HEAD = struct.Struct("<BI")
_NOT_GIVEN: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)


def omission_marker(lines: int) -> str:
    """The line an excerpt shows in place of `lines` left-out lines."""
    return f"[... {lines} line{'' if lines == 1 else 's'} omitted ...]"


# A line longer than this is shown by its head: a request dump or a stack trace logged on one
# line (thousands of characters) would otherwise be one segment larger than most budgets, and
# the entry that answers would be left out whole. A log line's message comes first; its tail
# is one `Get` away (the excerpt's line ranges name the line).
LONG_LINE_CHARS = 1000
# A cut must leave out at least this much: less saves fewer tokens than its marker costs.
_MIN_OMITTED = 100
# The head ends at whitespace when some is this close to the cut, so no word is shown halved.
_WORD_BACKOFF = 200


def is_long_line(line: str) -> bool:
    """Whether an excerpt shows `line` by its head: it is longer than LONG_LINE_CHARS by
    more than a little."""
    return len(line) > LONG_LINE_CHARS + _MIN_OMITTED


def has_long_line(lines: list[str]) -> bool:
    """Whether any of `lines` is_long_line (asked of every line of a text as one pass)."""
    return max(map(len, lines), default=0) > LONG_LINE_CHARS + _MIN_OMITTED


def line_head(line: str) -> str:
    """The part of `line` an excerpt shows: all of it, or (is_long_line) its first
    LONG_LINE_CHARS characters, ended at whitespace when some is near."""
    if not is_long_line(line):
        return line
    for end in range(LONG_LINE_CHARS, LONG_LINE_CHARS - _WORD_BACKOFF, -1):
        if line[end].isspace():
            return line[:end]
    return line[:LONG_LINE_CHARS]


def shown_line(line: str) -> str:
    """`line` as an excerpt shows it: its head (line_head) and, when that is not all of it, a
    marker counting the characters left out."""
    if not is_long_line(line):
        return line
    head = line_head(line)
    return f"{head} [... {len(line) - len(head):,} chars omitted ...]"


# o200k_base pre-tokenises a run of punctuation together with the newlines and slashes after
# it (` ?[^\s\p{L}\p{N}]+[\r\n/]*`): `]\n` + `/usr` counted apart can be one token short of
# `]\n/usr` counted together. Every omission marker ends in `]`, and any segment may follow one.
_JOINABLE_START = re.compile(r"[\r\n/]")


def joined_cost(text: str) -> int:
    """Tokens that joining `text` (a segment) after a piece that ends in punctuation may add
    to the two counted apart: 1 when it starts with a slash or a line break, else 0
    (measured: never more than 1 on logs, listings, compiler and test output)."""
    return 1 if _JOINABLE_START.match(text) else 0


def marker_tokens(count_tokens: Callable[[str], int], lines: int) -> int:
    """Tokens of the omission marker line for `lines` left-out lines."""
    return count_tokens(omission_marker(lines) + "\n")


@dataclass(frozen=True, eq=False)
class Segments:
    """Per segment, in text order: its line count, its tokens (text plus newline, counted
    alone, see joined_cost), its error evidence in [0, 1] and its head: the earlier segment
    that says what it is part of (a table's header row, the `commit` line of a `git log`
    record, a folder's line in `ls -lR`, a Markdown heading), or -1; and whether the entry's
    compressed form shows it (`in_compressed`: every line of it is a line of that form, 1;
    some line is not, 0; not known, -1: no compressed form was given, or an older blob)."""

    lines: IntArray
    tokens: IntArray
    errors: FloatArray
    heads: IntArray = field(default_factory=lambda: _NOT_GIVEN)  # not given: -1 for each
    in_compressed: IntArray = field(default_factory=lambda: _NOT_GIVEN)  # not given: -1

    def __post_init__(self) -> None:
        n = self.lines.shape[0]
        for name in ("heads", "in_compressed"):
            if getattr(self, name) is _NOT_GIVEN:
                object.__setattr__(self, name, np.full(n, -1, dtype=np.int64))
        columns = (self.tokens, self.errors, self.heads, self.in_compressed)
        if any(column.shape != (n,) for column in columns):
            raise ValueError("Segments columns must have the same length")
        if n and int(self.lines.min()) < 1:
            raise ValueError("every segment holds at least one line")
        if n and bool((self.heads >= np.arange(n)).any()):
            raise ValueError("a segment's head comes before it")
        if n and not np.isin(self.in_compressed, (-1, 0, 1)).all():
            raise ValueError("in_compressed is 1, 0 or -1")

    def __len__(self) -> int:
        return int(self.lines.shape[0])

    @cached_property
    def starts(self) -> IntArray:
        """Each segment's first line, 0-based."""
        out = np.zeros(len(self), dtype=np.int64)
        np.cumsum(self.lines[:-1], out=out[1:])
        return out

    @cached_property
    def as_lists(self) -> tuple[list[int], list[int], list[int]]:
        """Starts, line counts and tokens as Python lists, for the per-segment arithmetic of
        excerpts (fit.excerpts.Excerpt): made once per entry, not once per Fit."""
        return self.starts.tolist(), self.lines.tolist(), self.tokens.tolist()

    @cached_property
    def total_lines(self) -> int:
        """Lines of the whole text."""
        return int(self.lines.sum())

    def pack(self) -> bytes:
        """Compact bytes for the entry's metadata (errors quantised to 1/255)."""
        n = len(self)
        errors = np.rint(np.clip(self.errors, 0.0, 1.0) * 255).astype("<u1")
        return b"".join(
            (
                _HEAD.pack(_VERSION, n),
                self.lines.astype("<u4").tobytes(),
                self.tokens.astype("<u4").tobytes(),
                errors.tobytes(),
                self.heads.astype("<i4").tobytes(),
                self.in_compressed.astype("<i1").tobytes(),
            )
        )

    @staticmethod
    def is_current(blob: bytes) -> bool:
        """Whether `blob` was packed by this version's cutting rules."""
        return len(blob) >= _HEAD.size and blob[0] in _CURRENT

    @classmethod
    def unpack(cls, blob: bytes) -> Segments | None:
        """Inverse of pack(); None for bytes of another version or a damaged blob."""
        if len(blob) < _HEAD.size:
            return None
        version, n = _HEAD.unpack_from(blob)
        per_segment = _PER_SEGMENT.get(version)
        if per_segment is None or len(blob) != _HEAD.size + per_segment * n:
            return None
        at = _HEAD.size
        lines = np.frombuffer(blob, dtype="<u4", count=n, offset=at).astype(np.int64)
        tokens = np.frombuffer(blob, dtype="<u4", count=n, offset=at + 4 * n).astype(np.int64)
        errors = np.frombuffer(blob, dtype="<u1", count=n, offset=at + 8 * n) / 255.0
        heads = in_compressed = _NOT_GIVEN
        if version >= 2:
            heads = np.frombuffer(blob, dtype="<i4", count=n, offset=at + 9 * n).astype(np.int64)
        if version >= 4:
            shown = np.frombuffer(blob, dtype="<i1", count=n, offset=at + 13 * n)
            in_compressed = shown.astype(np.int64)
        try:
            return cls(lines, tokens, errors.astype(np.float64), heads, in_compressed)
        except ValueError:
            return None
