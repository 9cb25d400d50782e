"""Where text that is not a log is cut, and the bounds every segment keeps within
(docs/excerpts.md): paragraphs, outlines of keys, short runs of long paragraphs, JSON items,
and runs of a group over `max_lines`, `max_chars` or (joined) `max_segments`.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter

import numpy as np

from ..compress.json_compress import BOM
from ..compress.whitespace import indentation
from .config import SegmentConfig
from .records import CAUSE, PYTEST_EXPLAINED, PYTEST_SOURCE

__all__ = [
    "at_most",
    "capped",
    "json_cut_short",
    "json_items",
    "outlined",
    "paragraphs",
    "short_runs",
]

_HEADING = re.compile(r"^#{1,6} ")
# A line that says what it holds by a key: `Key: value`, or `Key:` over what is indented
# under it (`kubectl describe`, `pip show`, YAML, `lscpu`, an INI-less config).
_KEY_LINE = re.compile(r"^\s*[A-Za-z_][\w .\-/()]*:(?:\s|$)")
_ALIGNED_VALUE = re.compile(r"^\s*[A-Za-z_][\w .\-/()]*:\s{2,}\S")
# A paragraph of such lines longer than this is cut into its keys' blocks (_outline): as one
# paragraph, a pod of `kubectl describe` was a 245-token segment no 150-token Fit could show.
_OUTLINE_CHARS = 300
_OUTLINE_DEPTH = 8
# A paragraph over max_chars is cut anyway: into runs of lines this long (about 60 tokens)
# rather than as long as a segment may be. `/etc/services`, `mount`, YAML and Markdown read as
# text had 250-token runs, one of which filled a 300-token Fit; a hit's run is now a few
# lines, and its neighbours come as context where the budget has room.
_TEXT_RUN_CHARS = 250
# A line of fields: a first field, then a tab or a run of spaces, then more (`/etc/services`,
# `/etc/hosts`, `pip list`, `docker ps`). A paragraph mostly of such lines is a table: each row
# is a segment of its own (a line that is not a row goes with the row before it). In 250-char
# runs, the `ssh  22/tcp` row of `/etc/services` shared a 10-line segment whose BM25 the
# nine other rows diluted, and a comment paragraph saying "port" four times won over it.
_FIELD_ROW = re.compile(r"^[^\s#]\S*(?:\t|\s{2,})\s*\S")
_ROWS_SHARE = 0.8
# Delimited rows (CSV, `/etc/passwd`, a Markdown table): the delimiter, and how many a row
# holds at least (a prose line may hold one colon). In 250-char runs, a CSV row that a
# question named shared a 130-token segment with eight others, which a tight budget could not
# hold.
_DELIMITERS = ((",", 1), ("\t", 1), (";", 1), ("|", 2), (":", 2))
# Where prose and links hold a delimiter that ends no field: a comma or semicolon that a space
# follows, a URL's `://` (a README's lines of badges are no table).
_PROSE_MARKS = (", ", "; ", "://")
_MIN_DELIMITED = 4
_TABLE_RULE = re.compile(r"^[\s|:+=-]*[-=][\s|:+=-]*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_CLOSER = re.compile(r"^\s*[\]}]+,?\s*$")
_JSON_MAX_DEPTH = 6


def paragraphs(lines: list[str]) -> list[int]:
    """First line of each paragraph; blank lines stay with the paragraph before them."""
    starts = [0]
    blank_before = False
    in_fence = _FENCE.match(lines[0]) is not None
    for i in range(1, len(lines)):
        line = lines[i]
        fence = _FENCE.match(line) is not None
        if in_fence:
            in_fence = not fence
            continue
        if line.strip() and (blank_before or _HEADING.match(line) or fence):
            starts.append(i)
        in_fence = fence
        blank_before = not line.strip()
    return starts


def outlined(starts: list[int], lines: list[str]) -> list[int]:
    """`starts` with each paragraph that is an outline of keys cut into its blocks (_outline)."""
    bounds = [*starts, len(lines)]
    out: list[int] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        out.extend(_outline(lines, a, b, _OUTLINE_DEPTH))
    return out


def _outline(lines: list[str], a: int, b: int, depth: int) -> list[int]:
    """Where lines a..b are cut: whole when small or not an outline of keys, else at each
    line of the least indentation, each with the lines indented under it, and those still
    large cut the same way (a label over an outline of keys apart from it)."""
    if depth == 0 or _chars(lines, a, b) <= _OUTLINE_CHARS:
        return [a]
    indents = {i: indentation(lines[i]) for i in range(a, b) if lines[i].strip()}
    if not indents:
        return [a]
    low = min(indents.values())
    top = [i for i, indent in indents.items() if indent == low]
    if top == [min(indents)]:  # one line over all the others: a label, if it is one
        inner = _outline(lines, top[0] + 1, b, depth - 1) if _KEY_LINE.match(lines[top[0]]) else []
        return [a, *inner] if len(inner) > 1 else [a]
    keys = [i for i in top if _KEY_LINE.match(lines[i])]
    # Prose has lines that open with a few words and a colon too, but neither nests nor
    # aligns what follows them in a column (`lscpu`, `kubectl describe`).
    nested = len(top) < len(indents)
    aligned = sum(1 for i in keys if _ALIGNED_VALUE.match(lines[i]))
    if 3 * len(keys) < 2 * len(top) or not (nested or 3 * aligned >= 2 * len(keys)):
        return [a]
    cuts = sorted({a, *top})
    out: list[int] = []
    for s, e in zip(cuts, [*cuts[1:], b], strict=True):
        out.extend(_outline(lines, s, e, depth - 1))
    return out


def short_runs(starts: list[int], lines: list[str], config: SegmentConfig) -> list[int]:
    """`starts` with each paragraph over max_chars cut into its rows when it is a table
    (_rows), else into runs of lines of at most _TEXT_RUN_CHARS (a line longer on its own)."""
    bounds = [*starts, len(lines)]
    out: list[int] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        if _chars(lines, a, b) <= config.max_chars:
            out.append(a)
        else:
            out.extend(_rows(lines, a, b) or _runs(lines, a, b, _TEXT_RUN_CHARS))
    return out


def _rows(lines: list[str], a: int, b: int) -> list[int]:
    """Where lines a..b are cut when they are a table (at least _ROWS_SHARE of the lines that
    are not blank are rows: aligned, _FIELD_ROW, or delimited alike, _delimited): at each row
    but the first, a line that is not a row going with the one before; else nothing."""
    filled = [i for i in range(a, b) if lines[i].strip()]
    # A rule under a header (`|---|---|`, `----  ----`) stays with it: alone it says nothing.
    cells = [i for i in filled if not _TABLE_RULE.match(lines[i])]
    for rows in ([i for i in cells if _FIELD_ROW.match(lines[i])], _delimited(lines, cells)):
        if len(rows) >= 2 and len(rows) >= _ROWS_SHARE * len(filled):
            return [a, *(i for i in rows if i > a)]
    return []


def _delimited(lines: list[str], filled: list[int]) -> list[int]:
    """The lines of `filled` that hold one delimiter as many times as most of them do (CSV,
    `/etc/passwd`, a `|` table): the delimiter of most such lines; none for fewer than
    _MIN_DELIMITED lines (a couple of prose lines may hold one comma each)."""
    if len(filled) < _MIN_DELIMITED:
        return []
    best: list[int] = []
    for delimiter, least in _DELIMITERS:
        counts = [_without_prose_marks(lines[i]).count(delimiter) for i in filled]
        usual = Counter(counts).most_common(1)[0][0]
        rows = [i for i, count in zip(filled, counts, strict=True) if count == usual]
        if usual >= least and len(rows) > len(best):
            best = rows
    return best


def _without_prose_marks(line: str) -> str:
    """`line` without the delimiters that end no field (_PROSE_MARKS)."""
    for mark in _PROSE_MARKS:
        if mark in line:
            line = line.replace(mark, "")
    return line


def json_cut_short(text: str) -> bool:
    """Whether `text` is a JSON array or object of several lines cut short where it ends (a
    tool's output capped at some size): it opens like one and reads as JSON up to its last
    line. Read as lines, a cut-off API answer was a record per line, joined five at a time:
    an item's excerpt began in the middle of one record and ended in the middle of the next."""
    stripped = text.strip().lstrip(BOM)
    if stripped[:1] not in ("[", "{") or "\n" not in stripped:
        return False
    try:
        json.loads(stripped, strict=False)
    except json.JSONDecodeError as error:
        return error.pos > stripped.rfind("\n")
    except RecursionError:
        return False
    return False  # whole: detect says "json" for it


def json_items(lines: list[str], config: SegmentConfig) -> list[int]:
    """First line of each array item at the shallowest depth that holds two or more (a list
    of records is what a JSON tool output is usually made of), else of each member at the
    shallowest object level whose members fit `max_lines`."""
    depth_before: list[int] = []
    in_array: list[bool] = []  # whether the line starts inside an array
    stack: list[str] = []
    for line in lines:
        depth_before.append(len(stack))
        in_array.append(bool(stack) and stack[-1] == "[")
        for char in _JSON_STRING.sub("", line):
            if char in "[{":
                stack.append(char)
            elif char in "]}" and stack:
                stack.pop()
    starts_at: dict[int, list[int]] = {}
    for i in range(1, len(lines)):
        if in_array[i] and not _JSON_CLOSER.match(lines[i]):
            starts_at.setdefault(depth_before[i], []).append(i)
    for depth in sorted(starts_at):
        if len(starts_at[depth]) >= 2:
            return [0, *starts_at[depth]]
    best = [0]
    for level in range(1, _JSON_MAX_DEPTH + 1):
        starts = [0] + [
            i
            for i in range(1, len(lines))
            if depth_before[i] == level and not _JSON_CLOSER.match(lines[i])
        ]
        if len(starts) > len(best):
            best = starts
        if len(starts) > 1 and max(np.diff([*starts, len(lines)])) <= config.max_lines:
            return starts
    return best


# How far above the first `E` line the `>` line it explains may start (a statement of a few
# lines).
_SOURCE_REACH = 4


def capped(starts: list[int], lines: list[str], config: SegmentConfig) -> list[int]:
    """`starts` with every group over max_lines or max_chars split into runs within both. A
    long traceback is also split where a cause begins (`Caused by:`, `During handling of the
    above exception`), so that each cause heads a segment of its own: the root cause of a
    Java exception, its last `Caused by:`, sat in the middle of a run of frames. So is a long
    pytest failure where it is explained: at the `>` line its `E` lines follow (or the first
    of those), so that what went wrong is a short segment of its own, not the tail of a run
    of the library's source it was raised from (`E   TypeError: Object of type Decimal is not
    JSON serializable` had shared a 187-token segment with `json/encoder.py`'s lines)."""
    out: list[int] = []
    bounds = [*starts, len(lines)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        if b - a == 1:  # most groups of a log: one line, nothing to split
            out.append(a)
            continue
        long = b - a > config.max_lines or _chars(lines, a, b) > config.max_chars
        out.extend(_runs(lines, a, b, config.max_chars, config.max_lines, causes=long))
    return out


def _runs(
    lines: list[str],
    a: int,
    b: int,
    max_chars: int,
    max_lines: int | None = None,
    *,
    causes: bool = False,
) -> list[int]:
    """First line of each run lines a..b are cut into, in order, each within `max_chars`
    (a longer line on its own) and `max_lines`; with `causes`, a run also starts where a
    cause begins (records.CAUSE) and where a pytest failure is explained (_explanations)."""
    out = [a]
    chars = 0
    explained = _explanations(lines, a, b) if causes else set()
    for i in range(a, b):
        size = len(lines[i]) + 1
        full = chars + size > max_chars or (max_lines is not None and i - out[-1] >= max_lines)
        cause = causes and (i in explained or CAUSE.match(lines[i]) is not None)
        if i > out[-1] and (full or cause):
            out.append(i)
            chars = 0
        chars += size
    return out


def _explanations(lines: list[str], a: int, b: int) -> set[int]:
    """Where each pytest explanation among lines a..b begins: the `>` line of source just
    above a run of `E` lines (within _SOURCE_REACH), else the run's first `E` line."""
    out: set[int] = set()
    for i in range(a, b):
        if not PYTEST_EXPLAINED.match(lines[i]) or (i > a and PYTEST_EXPLAINED.match(lines[i - 1])):
            continue
        source = next(
            (j for j in range(i - 1, max(a, i - _SOURCE_REACH) - 1, -1)
             if PYTEST_SOURCE.match(lines[j])),
            i,
        )  # fmt: skip
        out.add(source)
    return out


def at_most(starts: list[int], lines: list[str], config: SegmentConfig) -> list[int]:
    """`starts` with neighbouring segments joined, a few at a time, where there are more
    than max_segments (each group within max_lines and max_chars; max_tokens is checked
    after, as for every segment)."""
    if len(starts) <= config.max_segments:
        return starts
    per = -(-len(starts) // config.max_segments)  # segments a group may join
    bounds = [*starts, len(lines)]
    # (Read from where each line starts: a log of short lines has a record per line, and
    # summing each record's lines again made this a sixth of cutting it.)
    offsets = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    out: list[int] = []
    members = chars = 0
    for a, b in zip(bounds, bounds[1:], strict=False):
        size = offsets[b] - offsets[a]
        joins = out and members < per and chars + size <= config.max_chars
        if joins and b - out[-1] <= config.max_lines:
            members, chars = members + 1, chars + size
        else:
            out.append(a)
            members, chars = 1, size
    return out


def _chars(lines: list[str], a: int, b: int) -> int:
    """Characters of lines a..b, a newline after each."""
    return sum(len(lines[i]) + 1 for i in range(a, b))
