"""Cutting an entry's full form into segments at Put (docs/excerpts.md).

Segments follow the text's own structure, so an excerpt never shows half a thought:
- logs and line-oriented tool output (`detect` says "log" or "stacktrace"): one record per
  segment, where indented lines, blank lines, traceback headers, stack frames and the
  exception line that ends a traceback belong to the record before them (a Go crash's
  message and its crashing goroutine are one record, each other goroutine one; valgrind's
  lines are read after their `==PID==`);
- diffs (`diff -u`, `git log -p`): a commit's header, a file's header, a hunk (diff_parts);
- JSON: one item of the array with the most items (else one member of the shallowest object
  level whose members are small enough). A document on one line (minified, as APIs and
  `jq -c` print it) is cut, counted and shown in its indented rendering (`excerpt_lines`);
- prose and everything else: paragraphs (blank-line separated; a Markdown heading starts one,
  a fenced code block stays in one piece), a long paragraph of `Key: value` lines cut into
  each key's block (_outline), and one still over `max_chars` into short runs (_short_runs);
- numbered lines (`cat -n`, compress.numbered): as the text after the numbers.
Any group longer than `max_lines` or `max_chars` is split into consecutive runs within both.

Messages are never cut (a conversation turn stays whole), nor entries under `min_tokens`:
they are returned whole or not at all.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from ..compress import detect
from ..compress.error_lines import ErrorMemo
from ..compress.json_compress import BOM
from ..compress.numbered import without_numbers
from ..compress.progress import redraws, settle_line
from ..compress.shapes import ASSERTED_VALUE, CLOCK_STAMP, RUNNER_STAMP, SOURCE_GUTTER
from ..compress.whitespace import collapse_ws, indentation
from ..fit.error_signal import error_indicators
from ..fit.segments import Segments, is_long_line, joined_cost, shown_line
from ..fit.terminal import strip_ansi
from .diff_parts import diff_heads, diff_starts, looks_like_diff
from .heads import segment_heads
from .json_parts import json_heads, with_item_names

__all__ = [
    "DEFAULT_SEGMENTS",
    "SegmentConfig",
    "Segmenter",
    "cut_segments",
    "excerpt_lines",
    "text_lines",
]


@dataclass(frozen=True)
class SegmentConfig:
    """Where segmenting starts and how large a segment may grow."""

    # Entries smaller than this are never excerpted: an excerpt of a few hundred tokens saves
    # little, and keeping no segments for them keeps the namespace cache as it was.
    min_tokens: int = 256
    max_lines: int = 40
    # About 250 tokens: a segment must stay well inside small budgets, with room for its
    # markers and context. At 2,000 characters a 28-line paragraph of /proc/cpuinfo or a
    # 40-line JSON item (500 tokens) never fit a 300-token Fit; logs are not affected (their
    # records are shorter).
    max_chars: int = 1000
    # The same bound where characters undercount: text dense in tokens (a runner's timestamp
    # on every line, hex, CJK) reaches 400 tokens well within max_chars.
    max_tokens: int = 250
    # Segments of one entry, about (_at_most): past it, neighbouring short segments share
    # one. A 1 MiB output of one-character lines was 524,288 segments, each counted, judged
    # and indexed on its own (6 s to cut, seconds more at the namespace's first Fit); a
    # 1 MiB log of 50-character lines stays line by line.
    max_segments: int = 20_000


DEFAULT_SEGMENTS = SegmentConfig()
IntArray = npt.NDArray[np.int64]

# Where a cause of the exception before begins (Java, Python): a long traceback splits there.
_CAUSE_LINE = (
    r"During handling of the above exception|The above exception was the direct cause|Caused by:"
)
_TRACE_LINE = (
    rf"Traceback \(most recent call last\)|{_CAUSE_LINE}|\.\.\. \d+ (?:more|common frames)"
)
# pytest's failure blocks mark the failing line `>` and its explanation `E`, both followed by
# spaces: they belong to the block (the test's header, its source, then these).
_PYTEST_MARK = r"[>E] {3,}"
# A failed assertion's values stay with the failure, which xUnit prints them unindented under.
_CONTINUATION = re.compile(rf"^(?:[ \t]|{_TRACE_LINE}|{_PYTEST_MARK}|{ASSERTED_VALUE})")
_CAUSE = re.compile(rf"^\s*(?:{_CAUSE_LINE})")
# Stack frames and traceback lines only (indented or not): for output indented throughout.
_FRAME = r"at [\w$.<>/\[\]-]+\(|File \"[^\"]+\", line \d+"
_TRACE_CONTINUATION = re.compile(
    rf"^\s*(?:{_TRACE_LINE}|{_FRAME})|^{_PYTEST_MARK}|^{ASSERTED_VALUE}"
)
# The line that closes a pytest failure block after its `E` lines: `tests/test_x.py:7: TypeError`.
_PYTEST_WHERE = re.compile(r"^\S+:\d+: [A-Za-z_][\w.]*$")
# pytest's report: a failure block opens with `____ test_name ____` and runs to the next such
# line or to a section line (`==== short test summary info ====`). Inside, a failure that went
# through several calls repeats `file:line:` locations, `_ _ _` separators and `name = value`
# lines, none of which start a record of their own.
# Blocks are looked for only after the section that holds them (`==== FAILURES ====` or
# `==== ERRORS ====`): elsewhere such a line opens nothing.
_PYTEST_BLOCK = re.compile(r"^_{3,} \S.* _{3,}$")
_PYTEST_SECTION = re.compile(r"^={3,}( .* ={3,})?$")
_PYTEST_FAILURES = re.compile(r"^={3,} (?:FAILURES|ERRORS) ={3,}$")
_TRACE_START = re.compile(r"^\s*(?:Traceback \(most recent call last\)|at |File \")")
# The unindented line that ends a Python traceback: `ValueError: bad`, `KeyboardInterrupt`.
_TRACE_END = re.compile(r"^[A-Za-z_][\w.]*(?::\s|:?$)")
# A rule of dashes or equals signs (unittest's `-----` under `FAIL: test_x`, report borders)
# says nothing of its own: it stays with the record before it, which it closes or underlines.
_RULE = re.compile(r"^\s*(?:-{10,}|={10,})\s*$")
# rustc's diagnostic (`error[E0308]: mismatched types`) and the source it quotes under it:
# the location (` --> src/a.rs:6:5`), gutter lines (`6 |     sum`, `  |     ^^^ expected i64,
# found u64`), `= note:` lines, `...` between quoted lines and `help:` with its own quote. Its
# message is in the gutter lines, so they stay with the diagnostic even where the output is
# indented throughout (cargo's `   Compiling` lines). (gcc and clang say it on the diagnostic's
# own line, and their quotes are indented: they need no rule of their own.)
_DIAGNOSTIC = re.compile(r"^(?:error|warning)(?:\[\w+\])?: ")
_QUOTED_SOURCE = re.compile(
    rf"^\s*(?:-->|:::) |^\s*{SOURCE_GUTTER}(?:\s|$)|^\s*= (?:note|help)|^\.\.\.$|^(?:help|note): "
)
# An RFC 3339 time that CI runners and container logs put before every line (GitHub Actions,
# `docker logs -t`, `kubectl logs --timestamps`), with the space after it, and one more space
# when only one follows (a level padded to width: `2024-05-01T10:00:00Z  INFO`). Records are
# found in what follows it, where the tool's own indentation is: without this, jest's `●`
# block or a traceback under a timestamp was a record per line.
_LINE_STAMP = re.compile(rf"^(?:{RUNNER_STAMP}|{CLOCK_STAMP})(?: (?=\S))?|^==\d+== ")
# (The second: a time of day alone, as dbt stamps every line: its `Database Error in model
# x`, then the cause indented under the same stamp, `09:47:16    100051 (22012): Division by
# zero`, which was a record of its own. The third: valgrind's `==12345== ` before every
# line, after which its own indentation says which lines belong to an error: `Invalid read
# of size 1`, then `   at 0x...: main (tokenize.c:39)` and the block's addresses.)
# Go's crash: `panic: ...` or `fatal error: ...`, a blank line, then the goroutines, each a
# `goroutine 7 [running]:` line, its frames (function lines unindented, file lines indented)
# and a blank line. A goroutine is one record, and the first stays with the message above it:
# the message says what went wrong, the crashing goroutine's frames where.
_GO_CRASH = re.compile(r"^(?:panic|fatal error): ")
# What the runtime prints under the message of a crash on a signal (a nil dereference):
# `[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a3b2c]`, still its message.
_GO_SIGNAL = re.compile(r"^\[signal [A-Z]+")
_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]\n]*\]:$")
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
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_CLOSER = re.compile(r"^\s*[\]}]+,?\s*$")
_JSON_MAX_DEPTH = 6
_ONE_LINE_JSON = re.compile(rf"^{BOM}?\s*[\[{{].*[\]}}]\s*$")


def text_lines(text: str) -> list[str]:
    """The lines an excerpt counts: `text.split("\\n")` without the empty piece a final
    newline leaves."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def excerpt_lines(text: str) -> list[str]:
    """The lines an excerpt is cut from, counts and shows: the text's own lines as a terminal
    shows them (without escape sequences, progress bars settled to their last state: a line
    keeps its number), except for a JSON object or array on one line (`_json_rendering`)."""
    return _excerpt_view(text)[0]


def _excerpt_view(text: str) -> tuple[list[str], bool]:
    """excerpt_lines, and whether they are a one-line JSON document's rendering."""
    plain = strip_ansi(text)
    lines = list(_settled_lines(plain)) if redraws(plain) else text_lines(plain)
    at = _only_line(lines)
    if at is None or not _ONE_LINE_JSON.match(lines[at]):
        return lines, False
    rendered = _json_rendering(lines[at].removeprefix(BOM))  # a byte-order mark is no text
    if rendered is None:
        return lines, False
    return [*lines[:at], *rendered, *lines[at + 1 :]], True


def _only_line(lines: list[str]) -> int | None:
    """The index of the one line that is not blank (a tool's JSON answer between blank lines
    that its `print()` calls left), or None when there are none or several."""
    found = None
    for i, line in enumerate(lines):
        if line.strip():
            if found is not None:
                return None  # stops at the second: this runs on every cut and excerpt
            found = i
    return found


# Settling judges every state of every redrawn line (a 1 MiB tqdm log holds thousands), and
# Put, the namespace cache and each Fit that shows an excerpt ask for the same text's view:
# the last few are kept, keyed by the text.
@functools.lru_cache(maxsize=8)
def _settled_lines(plain: str) -> tuple[str, ...]:
    """The lines of `plain` with redrawn progress bars settled, keeping the states that report
    a problem before the last one (compress.progress)."""
    is_notable = ErrorMemo().notable
    return tuple(settle_line(line, is_notable, keep_notable=True)[0] for line in text_lines(plain))


# Put cuts a document, the namespace cache indexes it, and every Fit that shows an excerpt of
# it reads it again: parsing and rendering a large one takes tens of milliseconds, so the
# last few renderings are kept (keyed by the text, which is all they depend on).
@functools.lru_cache(maxsize=8)
def _json_rendering(line: str) -> tuple[str, ...] | None:
    """The lines of a one-line JSON document's rendering with one space of indent per level
    (`json.dumps(doc, indent=1, ensure_ascii=False)`), so that its items can be excerpted like
    a pretty-printed document's; None when `line` is no such document. The rendering is a
    function of the text alone: every server, and a client that wants the rest, gets the same
    lines."""
    try:
        # Only a rendering that shows the values the text holds: a number a float cannot
        # carry (`1e400`, twenty digits of fraction) or a key given twice (the rendering
        # would keep one) leaves the document on its line.
        doc = json.loads(line, parse_float=_exact_float, object_pairs_hook=_unique_keys)
        if not doc:  # `{}`, `[]`: nothing to excerpt
            return None
        return tuple(json.dumps(doc, indent=1, ensure_ascii=False).split("\n"))
    except (ValueError, RecursionError):  # not JSON, or nested too deep to render: its lines
        return None


def _exact_float(literal: str) -> float:
    """A JSON number as a float, if the float prints as the same number (`1E5` as 100000.0)."""
    value = float(literal)
    if not math.isfinite(value) or Decimal(repr(value)) != Decimal(literal):
        raise ValueError(f"{literal} does not survive as a float")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, if no key repeats."""
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("a key repeats")
    return members


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
    lines, rendered = _excerpt_view(text)
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
    diff = shape != "json" and looks_like_diff(read)
    items: list[int] = []
    if shape == "json":
        starts = items = _json_items(view, config)
    elif diff:
        starts = diff_starts(view)
    elif shape in ("log", "stacktrace") and (numbered is None or _flush_left(view)):
        starts = _records(view)
    else:
        starts = _short_runs(_outlined(_paragraphs(view), view), view, config)
    starts = _at_most(_capped(starts, lines, config), lines, config)
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
        starts = _token_capped(starts, lines, counts, count_tokens, config.max_tokens)
        texts, counts = _counted(lines, starts, count_tokens, counted)
    if len(starts) < 2 and not long_line:
        return None
    bounds = [*starts, len(lines)]
    # A segment's count includes what it may add after an omission marker or a segment that
    # ends in punctuation; the first segment follows nothing.
    tokens = [
        c + (joined_cost(t) if i else 0) for i, (t, c) in enumerate(zip(texts, counts, strict=True))
    ]
    if shape == "json":
        heads = json_heads(starts, tokens, items, names)
    elif diff:
        heads = diff_heads(view, starts, tokens)
    else:
        heads = segment_heads(view, starts, tokens)
    return Segments(
        lines=np.diff(np.asarray(bounds, dtype=np.int64)).astype(np.int64),
        tokens=np.asarray(tokens, dtype=np.int64),
        errors=np.asarray(error_indicators(texts), dtype=np.float64),
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
    for a, b in zip(bounds, bounds[1:], strict=False):
        text = "\n".join(map(shown_line, lines[a:b])) + "\n"
        seen = (known or {}).get(a)
        texts.append(text)
        counts.append(seen[1] if seen is not None and seen[0] == text else count_tokens(text))
    return texts, counts


def _token_capped(
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


def _records(lines: list[str]) -> list[int]:
    """First line of each record: a line starts one unless it continues the one before (read
    after the time a runner stamps it with, _LINE_STAMP)."""
    valgrind = sum(1 for line in lines if line.startswith("==")) * 2 > len(lines)
    lines = [_LINE_STAMP.sub("", line, count=1) for line in lines]
    # Where most lines are indented, indentation is the output's layout, not a continuation;
    # but valgrind's frames are most of its lines, and its indentation is its structure.
    nonblank = [line for line in lines if line.strip()]
    indented = sum(1 for line in nonblank if line[:1] in (" ", "\t"))
    by_indent = valgrind or 2 * indented <= len(nonblank)
    continuation = _CONTINUATION if by_indent else _TRACE_CONTINUATION
    starts = [0]
    in_trace = False
    explained = False  # the last non-blank line was a pytest `E` line
    failures = bool(_PYTEST_FAILURES.match(lines[0]))  # in pytest's failures section
    header = -1  # the line of the pytest failure block we are in, -1 outside one
    diagnostic = bool(_DIAGNOSTIC.match(lines[0]))  # in a rustc diagnostic's record
    crash = bool(_GO_CRASH.match(lines[0]))  # in a Go crash's message, before its goroutines
    goroutine = False  # in a goroutine of a Go crash (up to its blank line)
    for i in range(1, len(lines)):
        line = lines[i]
        if diagnostic and (not line.strip() or _QUOTED_SOURCE.match(line)):
            continue
        if goroutine and line.strip():
            continue
        if crash and _GO_SIGNAL.match(line):
            continue
        if _GOROUTINE.match(line):
            goroutine = True
            if not crash:
                starts.append(i)
            crash = False
            continue
        goroutine = False
        if failures and _PYTEST_BLOCK.match(line):
            # The header is a record of its own, so that it can head its block (heads.py):
            # a block longer than a segment is cut, and every part is then named by it.
            starts.append(i)
            header = i
            continue
        if header >= 0 and not _PYTEST_SECTION.match(line):
            if i == header + 1:
                starts.append(i)  # the block's body, one record
            continue
        header = -1
        if _PYTEST_SECTION.match(line):
            failures = bool(_PYTEST_FAILURES.match(line))
        if not line.strip() or continuation.match(line) or _RULE.match(line):
            in_trace = in_trace or bool(_TRACE_START.match(line))
            explained = explained if not line.strip() else line.startswith("E ")
            continue
        if (in_trace and _TRACE_END.match(line)) or (explained and _PYTEST_WHERE.match(line)):
            in_trace = explained = False  # the line that closes the traceback it ends
            continue
        in_trace = explained = False
        diagnostic = bool(_DIAGNOSTIC.match(line))
        crash = bool(_GO_CRASH.match(line))
        starts.append(i)
    return starts


def _flush_left(lines: list[str]) -> bool:
    """Whether most non-blank lines start at their first column."""
    nonblank = [line for line in lines if line.strip()]
    return 2 * sum(1 for line in nonblank if line[:1] in (" ", "\t")) <= len(nonblank)


def _paragraphs(lines: list[str]) -> list[int]:
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


def _outlined(starts: list[int], lines: list[str]) -> list[int]:
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


def _short_runs(starts: list[int], lines: list[str], config: SegmentConfig) -> list[int]:
    """`starts` with each paragraph over max_chars cut into runs of lines of at most
    _TEXT_RUN_CHARS (a line longer on its own)."""
    bounds = [*starts, len(lines)]
    out: list[int] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        if _chars(lines, a, b) <= config.max_chars:
            out.append(a)
        else:
            out.extend(_runs(lines, a, b, _TEXT_RUN_CHARS))
    return out


def _json_items(lines: list[str], config: SegmentConfig) -> list[int]:
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


def _capped(starts: list[int], lines: list[str], config: SegmentConfig) -> list[int]:
    """`starts` with every group over max_lines or max_chars split into runs within both. A
    long traceback is also split where a cause begins (`Caused by:`, `During handling of the
    above exception`), so that each cause heads a segment of its own: the root cause of a
    Java exception, its last `Caused by:`, sat in the middle of a run of frames."""
    out: list[int] = []
    bounds = [*starts, len(lines)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        # (A one-line group has no cause to split at: most groups of a log.)
        long = b - a > config.max_lines or (b - a > 1 and _chars(lines, a, b) > config.max_chars)
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
    cause begins (_CAUSE)."""
    out = [a]
    chars = 0
    for i in range(a, b):
        size = len(lines[i]) + 1
        full = chars + size > max_chars or (max_lines is not None and i - out[-1] >= max_lines)
        if i > out[-1] and (full or (causes and _CAUSE.match(lines[i]) is not None)):
            out.append(i)
            chars = 0
        chars += size
    return out


def _at_most(starts: list[int], lines: list[str], config: SegmentConfig) -> list[int]:
    """`starts` with neighbouring segments joined, a few at a time, where there are more
    than max_segments (each group within max_lines and max_chars; max_tokens is checked
    after, as for every segment)."""
    if len(starts) <= config.max_segments:
        return starts
    per = -(-len(starts) // config.max_segments)  # segments a group may join
    bounds = [*starts, len(lines)]
    out: list[int] = []
    members = chars = 0
    for a, b in zip(bounds, bounds[1:], strict=False):
        size = _chars(lines, a, b)
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
