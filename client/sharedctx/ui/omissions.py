"""Find what a compressed form (or a Fit excerpt) left out, by the shape of its markers.

The server marks each gap in place: `[... 38 rows omitted]`, `[... 3 similar lines]`,
`[... 412 lines omitted ...]` in excerpts, `… 40 of 52 items omitted; Get with full=true
for all` in JSON, and a structural form opens with a header line ending `; Get with
full=true for all]`. The shapes are matched here rather than imported: the client package
never imports the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Line", "MarkedText", "mark"]

_MARKER = re.compile(
    r"\[\.\.\. [\d,]+ (?:similar lines?|[^\[\]\n]{0,60}? omitted[^\[\]\n]{0,2000})\]"
    r"|… [\d,]+ of [\d,]+ (?:items|keys) omitted; Get with full=true for all"
)
_HEADER = re.compile(r"^\[[^\n]*; Get with full=true for all\]$")
# The marker line of a Fit excerpt: the lines it stands for are not shown, and counted.
_EXCERPT_GAP = re.compile(r"^\[\.\.\. (\d+) lines? omitted \.\.\.\]$")
# A carriage return inside a line (a progress bar redrawn in place) is shown as a symbol: a
# browser would read it as a line break, and the page's line numbers would no longer match.
_CARRIAGE_RETURN = "\u240d"
# Past these, a page shows the start and links to the raw text (a browser copes, but a
# 50 MB page helps no one).
MAX_LINES = 5000
MAX_CHARS = 400_000


@dataclass(frozen=True)
class Line:
    """One line of text, cut into (text, is_marker) pieces; `label` is the line number shown
    (in an excerpt, the entry's; none on its marker lines)."""

    number: int
    pieces: tuple[tuple[str, bool], ...]
    label: str = ""

    @property
    def marked(self) -> bool:
        """Whether the line holds an omission marker."""
        return any(flag for _, flag in self.pieces)


@dataclass(frozen=True)
class MarkedText:
    """A text as lines with its markers found, and the markers listed."""

    lines: tuple[Line, ...]
    omissions: tuple[tuple[int, str], ...]  # (line number, marker text)
    total_lines: int
    shown_lines: int

    @property
    def truncated(self) -> bool:
        """Whether the page shows only the start of the text."""
        return self.shown_lines < self.total_lines


def _pieces(line: str, number: int) -> tuple[tuple[str, bool], ...]:
    if number == 1 and _HEADER.match(line):
        return ((line, True),)
    out: list[tuple[str, bool]] = []
    at = 0
    for match in _MARKER.finditer(line):
        if match.start() > at:
            out.append((line[at : match.start()], False))
        out.append((match.group(0), True))
        at = match.end()
    if at < len(line) or not out:
        out.append((line[at:], False))
    return tuple(out)


def mark(text: str, find: bool = True, excerpt: bool = False) -> MarkedText:
    """`text` as numbered lines, its omission markers found when `find` (a full form has none,
    whatever it quotes); an `excerpt`'s lines are labelled with the entry's line numbers."""
    all_lines = text.split("\n") if text else []
    if len(all_lines) > 1 and all_lines[-1] == "":  # a final newline ends a line, not starts one
        all_lines.pop()
    lines: list[Line] = []
    omissions: list[tuple[int, str]] = []
    chars = 0
    in_entry = 0  # the entry's line number, for an excerpt
    for number, raw in enumerate(all_lines, start=1):
        if number > MAX_LINES or chars > MAX_CHARS:
            break
        chars += len(raw) + 1
        raw = raw.removesuffix("\r").replace("\r", _CARRIAGE_RETURN)
        pieces = _pieces(raw, number) if find else ((raw, False),)
        gap = _EXCERPT_GAP.match(raw) if excerpt else None
        in_entry += int(gap[1]) if gap else 1
        label = "" if gap else str(in_entry if excerpt else number)
        line = Line(number, pieces, label)
        lines.append(line)
        omissions.extend((number, piece) for piece, flag in pieces if flag)
    return MarkedText(tuple(lines), tuple(omissions), len(all_lines), len(lines))
