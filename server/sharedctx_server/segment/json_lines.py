"""What a structured log's record says, apart from its fields: the message of a JSON line, as
its template (segment shapes, fit.segment_index.line_shape).

A JSON-lines log (structlog, pino, bunyan, zap, logrus, a Kubernetes app's `kubectl logs`)
writes each statement as an object whose other fields (time, request id, user, path, method)
vary from line to line: read as words, no two lines of one statement had one shape, so a
question that matched many of them ("what happened to user u0042?") got its routine lines
first and the one warning among them last, and "the most common error" had no repeats to
count. The record's level and message are its statement, as a text log's template is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..fit.error_signal import LEVEL_KEYS
from ..fit.lexical import lexical_terms_each

__all__ = ["record_statement", "statement_terms"]

# Keys that hold a record's message and its level, as common loggers name them.
_MESSAGE_KEYS = ("msg", "message", "event", "MESSAGE", "Message")
_LEVEL_KEYS = (*LEVEL_KEYS, "Level", "LEVEL")
# A line longer than this is not read as JSON here (what its shape would gain is not worth
# parsing a large document line).
_MAX_CHARS = 8192


def record_statement(line: str) -> str | None:
    """The level and message of `line` when it is a JSON object with a string message, else
    None."""
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")) or len(text) > _MAX_CHARS:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    message = next((record[k] for k in _MESSAGE_KEYS if isinstance(record.get(k), str)), None)
    if message is None:
        return None
    level = next((str(record[k]) for k in _LEVEL_KEYS if k in record), "")
    return f"{level} {message}"


def statement_terms(
    lines: Sequence[str], starts: Sequence[int], counts: Sequence[int]
) -> list[list[str] | None]:
    """Per segment (first lines `starts`, line counts `counts`), the terms of its record's
    statement when it is one JSON record on one line, else None; [] when no segment opens
    with `{` (most texts: nothing to read)."""
    if not any(lines[start].lstrip().startswith("{") for start in starts):
        return []
    statements = [
        record_statement(lines[start]) if count == 1 else None
        for start, count in zip(starts, counts, strict=True)
    ]
    # All at once: a term scan per line costs several times the JSON parse.
    terms = iter(lexical_terms_each([s for s in statements if s is not None]))
    return [next(terms) if s is not None else None for s in statements]
