"""Content-aware compressed forms, made at Put time: fewer tokens, no lost error lines.

Pure functions: no I/O, no Redis, no gRPC; safe to run in a worker thread.

    compress(content, count_tokens=..., kind=..., tool_name=...) -> Compressed
    explain(content, count_tokens=..., kind=..., tool_name=...) -> Choice (+ every trial)

Compressors compete (candidates.py, choose.py; docs/compression.md): "json" alone for a JSON
document (the adaptive sizer's number of items of large arrays, valid JSON with markers);
else the structural compressors that understand most of the lines, "listing" (ls, find,
tree, du), "table" (ps, kubectl, docker, pip list, CSV/TSV), "diff" (diffs, git log),
"status" (git status),
"blame" (git blame), "grep" (search results: grep -rn, git grep -n), "diagnostics"
(compiler and linter findings with code frames: cargo, ruff, gcc), "yaml" (YAML
documents: kubectl get -o yaml, manifests), "tests" (test runners' reports), "source" (an
outline of a source file) and "markup" (HTML and Markdown as text), beside the generic one
`detect` names:
"log" (runs folded, lines capped by the sizer), "stacktrace" (middle frames elided) or
"text" (whitespace normalised; short prose untouched). The smallest result that passes the
checks wins; the original, with compressor "none", when none is smaller. Guarantees, pinned
by tests/compress:

- every line of the original carrying an error indicator (`line_has_error`) is in the
  compressed form unchanged up to collapsed whitespace (inside JSON strings, lines end at `\\n`
  escapes too; in a one-line JSON document, every item carrying one is kept verbatim);
- JSON stays valid JSON; compressing is deterministic and idempotent (a text that already
  carries an omission marker is returned as is); never more tokens than the original.

`detect` keeps its meaning (json, log, stacktrace, text): the segmenter cuts entries by it.
A caller-supplied compressed form always wins: the store uses it and does not call compress().
Binary-looking content (`looks_binary`) is rejected by the server at Put (INVALID_ARGUMENT).
"""

from .choose import Choice, Trial
from .config import CompressConfig
from .detect import detect, looks_binary
from .error_lines import carries_error, line_has_error, line_has_warning, missing_error_lines
from .markers import has_marker
from .pipeline import (
    COMPRESSORS,
    REWRITING,
    Compressed,
    CompressorName,
    compress,
    describe,
    explain,
)

__all__ = [
    "COMPRESSORS",
    "REWRITING",
    "Choice",
    "CompressConfig",
    "Compressed",
    "CompressorName",
    "carries_error",
    "compress",
    "describe",
    "detect",
    "explain",
    "has_marker",
    "line_has_error",
    "line_has_warning",
    "looks_binary",
    "missing_error_lines",
    "Trial",
]
