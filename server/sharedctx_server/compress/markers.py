"""The marks a compressed form carries where something was left out, and how to spot them.

A text that already carries one is a compressed form: compressing it again returns it as is,
which is what makes compression idempotent (see `compress`).
"""

from __future__ import annotations

import re

__all__ = [
    "OMITTED_KEY",
    "chars_marker",
    "frames_marker",
    "has_marker",
    "json_items_marker",
    "json_keys_marker",
    "lines_marker",
    "similar_marker",
]

# The object member that stands for left-out members of a JSON object.
OMITTED_KEY = "_omitted"

_MARKER = re.compile(
    r"\[\.\.\. \d+ (?:similar lines?|lines? omitted|frames? omitted|chars omitted)\]"
    r"|… \d+ of \d+ (?:items|keys) omitted; Get with full=true for all"
)


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


def json_items_marker(n: int, total: int) -> str:
    """Text of the JSON string element that stands for `n` left-out array items."""
    return f"… {n} of {total} items omitted; Get with full=true for all"


def json_keys_marker(n: int, total: int) -> str:
    """Text of the `_omitted` member that stands for `n` left-out object members."""
    return f"… {n} of {total} keys omitted; Get with full=true for all"


def has_marker(text: str) -> bool:
    """Whether `text` carries an omission marker, i.e. is already a compressed form."""
    return _MARKER.search(text) is not None
