"""The lines an excerpt is cut from, counts and shows (docs/excerpts.md).

A terminal's view of the text: escape sequences stripped, redrawn progress bars settled to
their last state (a line keeps its number), and a JSON document on one line shown in its
indented rendering, so that its items can be excerpted like a pretty-printed document's.
"""

from __future__ import annotations

import functools
import json
import math
import re
from decimal import Decimal
from typing import Any

from ..compress.error_lines import ErrorMemo
from ..compress.json_compress import BOM
from ..compress.progress import redraws, settle_line
from ..fit.terminal import strip_ansi

__all__ = ["excerpt_lines", "excerpt_view", "text_lines"]

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
    return excerpt_view(text)[0]


def excerpt_view(text: str) -> tuple[list[str], bool]:
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
