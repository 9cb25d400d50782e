"""The marks a compressed form carries where something was left out, and how to spot them.

A text that already carries one is a compressed form: compressing it again returns it as is,
which is what makes compression idempotent (see `compress`).

A Fit excerpt's markers (`[... 12 lines omitted ...]`) count too: an excerpt put back as an
entry is a reduced form already. Besides the markers in place of what was left out, the
structural compressors (listings, tables, diffs, test reports, sources, markup) open their
form with a header line saying what the form is and what it left out, ending `; Get with
full=true for all]`.
"""

from __future__ import annotations

import re

__all__ = [
    "OMITTED_KEY",
    "chars_marker",
    "form_header",
    "frames_marker",
    "has_marker",
    "omitted_marker",
    "json_items_marker",
    "json_keys_marker",
    "lines_marker",
    "similar_marker",
]

# The object member that stands for left-out members of a JSON object.
OMITTED_KEY = "_omitted"

_FULL_FORM_HINT = "Get with full=true for all"
# Where the compressors put markers: a line of its own (log, stack trace, table, diff, test
# report, outline), the end of a listing's folder line, between the `\n` escapes of a JSON
# string, a JSON string element (after `[`, `,`, `:` or alone on its line), and the header
# line that opens a structural form. A marker quoted inside a sentence (a README describing
# the format, or a diff of one: a JSON marker is one only where JSON goes on after it) is not
# one: such a text is not a compressed form.
_MARKER = re.compile(
    r"^[ \t]*\[\.\.\. \d+ (?:similar lines?|lines? omitted|frames? omitted)\]$"
    r"|(?:^|\\n|\")\[\.\.\. \d+ lines? omitted\](?:$|\\n|\")"
    r"|\[\.\.\. \d+ chars omitted\](?:\\n|\")"
    r"|(?:^[ \t]*|[\[,:] ?)\"… \d+ of \d+ (?:items|keys) omitted(?: \([^\n]*?\))?"
    r"; Get with full=true for all\"(?=[ \t]*(?:[,\]}]|$))"
    r"|(?:^[ \t]*| )\[\.\.\. [\d,]+ [a-z][\w -]{0,40} omitted(?:: [^\]\n]{0,2000})?\]$"
    # A Fit excerpt's (fit.segments): left-out lines, and the tail of a long line.
    r"|^\[\.\.\. [\d,]+ lines? omitted \.\.\.\]$|\S \[\.\.\. [\d,]+ chars omitted \.\.\.\]$",
    re.MULTILINE,
)
_HEADER = re.compile(r"\[[^\n]*; Get with full=true for all\]$", re.MULTILINE)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def similar_marker(n: int) -> str:
    """Stands for `n` lines like the ones around it."""
    return f"[... {_plural(n, 'similar line')}]"


def lines_marker(n: int) -> str:
    """Stands for `n` left-out lines."""
    return f"[... {_plural(n, 'line')} omitted]"


def frames_marker(n: int) -> str:
    """Stands for `n` left-out stack frames."""
    return f"[... {_plural(n, 'frame')} omitted]"


def chars_marker(n: int) -> str:
    """Stands for the `n` characters cut from the end of a long JSON string."""
    return f"[... {n} chars omitted]"


def json_items_marker(n: int, total: int, detail: str = "") -> str:
    """Text of the JSON string element that stands for `n` left-out array items; `detail`
    (no newlines) names them: `name: attrs, certifi`."""
    named = f" ({detail.replace(chr(10), ' ')})" if detail else ""
    return f"… {n} of {total} items omitted{named}; Get with full=true for all"


def json_keys_marker(n: int, total: int) -> str:
    """Text of the `_omitted` member that stands for `n` left-out object members."""
    return f"… {n} of {total} keys omitted; Get with full=true for all"


def has_marker(text: str) -> bool:
    """Whether `text` carries an omission marker, i.e. is already a compressed form."""
    if _HEADER.match(text):
        return True
    # Every other marker holds one of these, on a line of its own: only the lines holding one
    # are searched (a regex anchored per line is slow over a whole large text).
    for needle in ("[... ", "… "):
        at = text.find(needle)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            if _MARKER.search(text, start, end):
                return True
            at = text.find(needle, end)
    return False


def omitted_marker(n: int, noun: str, detail: str = "") -> str:
    """Stands for `n` left-out things in place: `[... 12 rows omitted]` (`noun` singular).

    `detail` (no brackets or newlines) says more: `[... 40 names omitted: 30 .py, 10 .pyc]`.
    """
    noun = noun if n == 1 else noun + "s"
    # Brackets or a newline inside would end the marker early for has_marker.
    detail = detail.replace("[", "(").replace("]", ")").replace("\n", " ")
    tail = f": {detail}" if detail else ""
    return f"[... {n:,} {noun} omitted{tail}]"


def form_header(summary: str) -> str:
    """The first line of a structural compressor's form: what it is and what it left out."""
    summary = summary.replace("\n", " ")
    return f"[{summary}; {_FULL_FORM_HINT}]"
