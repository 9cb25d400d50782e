"""Cutting an entry's full form into segments at Put (docs/excerpts.md).

Segments follow the text's own structure, so an excerpt never shows half a thought:
- logs and line-oriented tool output (`detect` says "log" or "stacktrace"): one record per
  segment, where indented lines, blank lines, traceback headers, stack frames and the
  exception line that ends a traceback belong to the record before them (a Go crash's
  message and its crashing goroutine are one record, each other goroutine one; valgrind's
  lines are read after their `==PID==`);
- diffs (`diff -u`, `git log -p`): a commit's header, its message, a file's header, a hunk
  (diff_parts);
- JSON: one item of the array with the most items (else one member of the shallowest object
  level whose members are small enough), in a whole document or one cut short. A document
  on one line (minified, as APIs and `jq -c` print it) is cut, counted and shown in its
  indented rendering (`excerpt_lines`);
- prose and everything else: paragraphs (blank-line separated; a Markdown heading starts one,
  a fenced code block stays in one piece), a long paragraph of `Key: value` lines cut into
  each key's block, and one still over `max_chars` into short runs (groups.py);
- numbered lines (`cat -n`, compress.numbered): as the text after the numbers.
Any group longer than `max_lines` or `max_chars` is split into consecutive runs within both.

Messages are never cut (a conversation turn stays whole), nor entries under `min_tokens`:
they are returned whole or not at all.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ..compress import detect
from ..compress.numbered import without_numbers
from ..compress.whitespace import collapse_ws
from ..fit.error_signal import error_indicators
from ..fit.segments import Segments, has_long_line, is_long_line, joined_cost, shown_line
from ..fit.terminal import strip_ansi
from .commands import session_prompts
from .config import DEFAULT_SEGMENTS, SegmentConfig
from .diff_parts import diff_heads, diff_starts, looks_like_diff
from .groups import at_most, capped, json_cut_short, json_items, outlined, paragraphs, short_runs
from .heads import HEAD_TOKENS, segment_heads
from .json_parts import json_heads, with_item_names
from .lines import excerpt_view, text_lines
from .records import flush_left, records
from .traces import root_cause_errors, trace_heads, trace_runs

__all__ = ["Segmenter", "cut_segments"]

IntArray = npt.NDArray[np.int64]


def cut_segments(
    text: str,
    *,
    kind: str | None,
    tool_name: str | None,
    original_tokens: int,
    count_tokens: Callable[[str], int],
    config: SegmentConfig = DEFAULT_SEGMENTS,
    compressed: str | None = None,
) -> Segments | None:
    """The segments of an entry's full form, or None when it is not cut (a message, a small
    entry, a single line no longer than an excerpt shows whole). With the entry's
    `compressed` form, each segment says whether that form shows it (_in_compressed)."""
    if kind == "message" or original_tokens < config.min_tokens:
        return None
    lines, rendered = excerpt_view(text)
    # One line is cut only when it is long: its head is then an excerpt of it (shown_line).
    long_line = len(lines) == 1 and is_long_line(lines[0])
    if not rendered and len(lines) < 2 and not long_line:
        return None
    # Numbered lines (`cat -n`) are cut by what follows their numbers: a file, read as records
    # only when it is a log (its lines mostly flush left), else in paragraphs like any
    # document or source (indented throughout, records would be its lines).
    numbered = None if rendered else without_numbers(lines)
    view = lines if numbered is None else numbered
    read = text if numbered is None else "\n".join(numbered)
    shape = "json" if rendered else detect(strip_ansi(read), kind, tool_name)
    if shape != "json" and numbered is None and json_cut_short(read):
        shape = "json"  # its items are its records, as in a whole document
    diff = shape != "json" and looks_like_diff(read)
    items: list[int] = []
    if shape == "json":
        starts = items = json_items(view, config)
    elif diff:
        starts = diff_starts(view)
    elif shape in ("log", "stacktrace") and (numbered is None or flush_left(view)):
        starts = records(view)
    else:
        starts = short_runs(outlined(paragraphs(view), view), view, config)
    # In a terminal session, each command starts a segment: its output is one unit with it,
    # not the tail of a paragraph of the command before (segment.commands).
    prompts = session_prompts(view, range(len(view))) if "$ " in read else []
    if prompts and shape != "json":
        starts = sorted({*starts, *prompts})
    starts = at_most(capped(starts, lines, config), lines, config)
    names: dict[int, int] = {}
    if items:
        named, found = with_item_names(view, items, starts)
        if len(named) <= config.max_segments:
            starts, names = named, found
    texts, counts = _counted(lines, starts, count_tokens)
    if any(
        c > config.max_tokens and n > 1
        for c, n in zip(counts, np.diff([*starts, len(lines)]), strict=True)
    ):
        counted = dict(zip(starts, zip(texts, counts, strict=True), strict=True))
        starts = _tokencapped(starts, lines, counts, count_tokens, config.max_tokens)
        texts, counts = _counted(lines, starts, count_tokens, counted)
    if len(starts) < 2 and not long_line:
        return None
    bounds = [*starts, len(lines)]
    # A segment's count includes what it may add after an omission marker or a segment that
    # ends in punctuation; the first segment follows nothing.
    tokens = [
        c + (joined_cost(t) if i else 0) for i, (t, c) in enumerate(zip(texts, counts, strict=True))
    ]
    traces = trace_runs(view, starts)
    if shape == "json":
        heads = json_heads(starts, tokens, items, names)
    elif diff:
        heads = diff_heads(view, starts, tokens)
    else:
        heads = segment_heads(view, starts, tokens)
        trace_heads(traces, tokens, heads, HEAD_TOKENS)
    errors = root_cause_errors(view, starts, traces, error_indicators(texts))
    return Segments(
        lines=np.diff(np.asarray(bounds, dtype=np.int64)).astype(np.int64),
        tokens=np.asarray(tokens, dtype=np.int64),
        errors=np.asarray(errors, dtype=np.float64),
        heads=np.asarray(heads, dtype=np.int64),
        in_compressed=_in_compressed(lines, bounds, compressed),
    )


def _counted(
    lines: list[str],
    starts: list[int],
    count_tokens: Callable[[str], int],
    known: dict[int, tuple[str, int]] | None = None,
) -> tuple[list[str], list[int]]:
    """Each segment's text as an excerpt shows it (a long line by its head, shown_line), and
    its tokens; `known`: the text and tokens of segments counted already, by first line (a
    segment whose text is the same is not counted again)."""
    bounds = [*starts, len(lines)]
    texts: list[str] = []
    counts: list[int] = []
    # (Most texts have no line long enough to be shown by its head: their lines are shown as
    # they are, without asking each of them.)
    show = shown_line if has_long_line(lines) else None
    for a, b in zip(bounds, bounds[1:], strict=False):
        text = "\n".join(lines[a:b] if show is None else map(show, lines[a:b])) + "\n"
        seen = (known or {}).get(a)
        texts.append(text)
        counts.append(seen[1] if seen is not None and seen[0] == text else count_tokens(text))
    return texts, counts


def _tokencapped(
    starts: list[int],
    lines: list[str],
    counts: list[int],
    count_tokens: Callable[[str], int],
    cap: int,
) -> list[int]:
    """`starts` with every group of more than one line over `cap` tokens (`counts`) split
    into runs within it, line by line (a line over it on its own)."""
    out: list[int] = []
    bounds = [*starts, len(lines)]
    for (a, b), count in zip(zip(bounds, bounds[1:], strict=False), counts, strict=True):
        out.append(a)
        if count <= cap or b - a < 2:
            continue
        used = 0
        for i in range(a, b):
            size = count_tokens(shown_line(lines[i]) + "\n")
            if i > out[-1] and used + size > cap:
                out.append(i)
                used = 0
            used += size
    return out


def _in_compressed(lines: list[str], bounds: list[int], compressed: str | None) -> IntArray:
    """Per segment (`bounds`), 1 when every non-blank line of it is a line of `compressed`
    (how it is spaced aside: a compressor may re-space), else 0; -1 for each without a
    compressed form. A Fit then knows whether the compressed form, whole, shows the lines
    that matched its query."""
    count = len(bounds) - 1
    if compressed is None:
        return np.full(count, -1, dtype=np.int64)
    shown = {collapse_ws(line) for line in text_lines(strip_ansi(compressed))} | {""}
    seen = np.asarray([collapse_ws(line) in shown for line in lines])
    missing = np.add.reduceat((~seen).astype(np.int64), bounds[:-1]) if count else seen[:0]
    return np.asarray(missing == 0, dtype=np.int64)


class Segmenter:
    """cut_segments with the server's token counter and configuration, for the write path
    and for the namespace cache (which cuts entries written without segments)."""

    def __init__(self, count_tokens: Callable[[str], int], config: SegmentConfig) -> None:
        self._count = count_tokens
        self.config = config

    def __call__(
        self,
        text: str,
        *,
        kind: str | None,
        tool_name: str | None,
        original_tokens: int,
        compressed: str | None = None,
    ) -> Segments | None:
        """The segments of an entry's full form, or None when it is not cut."""
        return cut_segments(
            text,
            kind=kind,
            tool_name=tool_name,
            original_tokens=original_tokens,
            count_tokens=self._count,
            config=self.config,
            compressed=compressed,
        )
