"""Shortening a long JSON string value in place, keeping its head and every line with an error.

Works on the string's source text (escapes and all), so what is kept is byte for byte what
was there and the result is still one valid JSON string. A string holding multi-line text (a
README, a captured log) is cut at its `\\n` escapes; one that is a single long line (base64,
minified code) is cut after its first characters.
"""

from __future__ import annotations

import re

from .error_lines import JudgedLines, error_flags
from .markers import chars_marker, lines_marker

__all__ = ["shorten_string"]

_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.DOTALL)
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")


def _safe_cut(inner: str, limit: int) -> int:
    """The largest cut <= limit that splits no escape and no escaped surrogate pair."""
    # Escapes are found from the start: scanning from mid-string could misread a "\\" pair.
    escapes = [m.span() for m in _ESCAPE.finditer(inner, 0, limit + 6)]
    for start, end in escapes:
        if start < limit < end:
            limit = start
    for start, end in escapes:
        if end == limit and _HIGH_SURROGATE.fullmatch(inner, start, end):
            limit = start  # keep the pair together: drop its first half too
    return limit


def _cut_line(segment: str, keep_chars: int) -> str:
    cut = _safe_cut(segment, keep_chars)
    return segment[:cut] + " " + chars_marker(len(segment) - cut)


def shorten_string(
    raw: str, keep_chars: int, judged: JudgedLines | None = None, at: int = 0
) -> str:
    """`raw` (a JSON string literal, quotes included) shortened, or `raw` if that saves nothing.

    `judged` is the document `raw` sits in at offset `at`, its lines judged already; without
    it the string's lines are judged here.
    """
    inner = raw[1:-1]
    bounds = [m.start() for m in _ESCAPE.finditer(inner) if m.group() == "\\n"]
    starts = [0] + [b + 2 for b in bounds]
    ends = bounds + [len(inner)]
    segments = [inner[s:e] for s, e in zip(starts, ends, strict=True)]
    # Segments hold no \n escape, so each is one line.
    if judged is None:
        errors = error_flags(segments)
    else:
        inner_at = at + 1  # after the opening quote
        errors = [
            judged.is_error_at(inner_at + s, inner_at + e)
            for s, e in zip(starts, ends, strict=True)
        ]
    keep = list(errors)
    total = 0
    for i, seg in enumerate(segments):
        if total >= keep_chars:
            break
        keep[i] = True
        total += len(seg) + 2
    out: list[str] = []
    i = 0
    while i < len(segments):
        if keep[i]:
            seg = segments[i]
            # A head line far longer than the head budget is cut, unless it reads as an error.
            if len(seg) > 2 * keep_chars and not errors[i]:
                seg = _cut_line(seg, keep_chars)
            out.append(seg)
            i += 1
            continue
        run = i
        while i < len(segments) and not keep[i]:
            i += 1
        out.append(lines_marker(i - run))
    shortened = '"' + "\\n".join(out) + '"'
    return shortened if len(shortened) < len(raw) else raw
