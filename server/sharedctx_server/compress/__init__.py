"""Content-aware compressed forms, made at Put time: fewer tokens, no lost error lines.

Pure functions: no I/O, no Redis, no gRPC; safe to run in a worker thread.

    compress(content, count_tokens=..., kind=..., tool_name=...) -> Compressed

picks a compressor by content (`detect`): "json" (arrays and objects holding large arrays:
the adaptive sizer's number of items, the most distinct ones, valid JSON with omission
markers), "log" (runs of similar lines folded, lines capped by the sizer), "stacktrace"
(middle frames elided) or "text" (whitespace normalised; short prose untouched). The result is
the original with compressor "none" when that is at least as small. Guarantees, pinned by
tests/compress:

- every line of the original carrying an error indicator (`line_has_error`) is in the
  compressed form unchanged up to collapsed whitespace (inside JSON strings, lines end at `\\n`
  escapes too; in a one-line JSON document, every item carrying one is kept verbatim);
- JSON stays valid JSON; compressing is deterministic and idempotent (a text that already
  carries an omission marker is returned as is); never more tokens than the original.

A caller-supplied compressed form always wins: the store uses it and does not call compress().
Binary-looking content (`looks_binary`) is rejected by the server at Put (INVALID_ARGUMENT).
"""

from .config import CompressConfig
from .detect import detect, looks_binary
from .error_lines import carries_error, line_has_error, line_has_warning, missing_error_lines
from .markers import has_marker
from .pipeline import COMPRESSORS, Compressed, CompressorName, compress, describe

__all__ = [
    "COMPRESSORS",
    "CompressConfig",
    "Compressed",
    "CompressorName",
    "carries_error",
    "compress",
    "describe",
    "detect",
    "has_marker",
    "line_has_error",
    "line_has_warning",
    "looks_binary",
    "missing_error_lines",
]
