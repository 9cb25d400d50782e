"""compress(): detect the content type, run its compressor, keep the result only if it is safe
and smaller."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .config import DEFAULT_CONFIG, CompressConfig
from .detect import detect_lines, looks_binary
from .error_lines import ErrorMemo, missing_error_lines
from .json_compress import compress_json, looks_like_json
from .log import compress_log
from .markers import has_marker
from .stacktrace import compress_stacktrace
from .whitespace import normalise_lines

__all__ = ["COMPRESSORS", "Compressed", "CompressorName", "compress", "describe"]

CompressorName = Literal["json", "log", "stacktrace", "text", "none"]
COMPRESSORS: tuple[CompressorName, ...] = ("json", "log", "stacktrace", "text", "none")


@dataclass(frozen=True)
class Compressed:
    """A compressed form, the compressor that made it and the token counts of both forms."""

    text: str  # the compressed form; the original itself when nothing helped
    compressor: CompressorName  # "none" when `text` is the original
    original_tokens: int
    compressed_tokens: int

    @property
    def token_density(self) -> float:
        """Original tokens per compressed token (1.0 when nothing was saved)."""
        return self.original_tokens / self.compressed_tokens if self.compressed_tokens else 1.0


def _compress_lines(
    content: str,
    kind: str | None,
    tool_name: str | None,
    config: CompressConfig,
    is_error: ErrorMemo,
) -> tuple[CompressorName, str]:
    lines = normalise_lines(content.split("\n"))
    name = detect_lines(lines, kind, tool_name, config)
    if name == "text":
        # Prose is only ever whitespace-normalised, and short prose not even that.
        return name, content if len(content) < config.prose_min_chars else "\n".join(lines)
    errors = [is_error(line) for line in lines]
    if name == "stacktrace":
        return name, "\n".join(compress_stacktrace(lines, errors, config))
    return name, "\n".join(compress_log(lines, errors, config.profile_for(tool_name), config))


def _json_is_safe(original: str, text: str, is_error: ErrorMemo) -> bool:
    try:
        json.loads(text, strict=False)
    except ValueError:
        return False
    # A one-line document is one line: there the item carrying an error is what stays intact
    # (json_compress always keeps it verbatim), not the line.
    if "\n" not in original.strip():
        return True
    return not missing_error_lines(original, text, escaped_newlines=True, is_error=is_error)


def compress(
    content: str,
    *,
    count_tokens: Callable[[str], int],
    kind: str | None = None,
    tool_name: str | None = None,
    config: CompressConfig = DEFAULT_CONFIG,
) -> Compressed:
    """The compressed form of `content` for an entry of `kind` written by `tool_name`.

    The result is the original (compressor "none") when the content is small, binary-looking,
    already a compressed form (it carries an omission marker), when compression would lose an
    error line, or when it would not save tokens. A compressed form supplied by the caller at
    Put always wins over this one; the store does not call compress() then.
    """
    original_tokens = count_tokens(content)
    unchanged = Compressed(content, "none", original_tokens, original_tokens)
    if len(content) < config.min_chars or looks_binary(content, config) or has_marker(content):
        return unchanged
    is_error = ErrorMemo()
    name: CompressorName
    if looks_like_json(content):
        name = "json"
        text = compress_json(content, config.profile_for(tool_name), config, is_error)
    else:
        name, text = _compress_lines(content, kind, tool_name, config, is_error)
    if text == content:
        return unchanged
    if name == "json":
        safe = _json_is_safe(content, text, is_error)
    else:
        # Belt and braces: every compressor keeps error lines by construction; if one ever
        # did not, the original is stored rather than a form that hides an error.
        safe = not missing_error_lines(content, text, is_error=is_error)
    if not safe:
        return unchanged
    tokens = count_tokens(text)
    if tokens >= original_tokens:
        return unchanged
    return Compressed(text, name, original_tokens, tokens)


def describe(result: Compressed) -> str:
    """One line for people: the compressor, tokens before and after, and the share saved."""
    if result.compressor == "none":
        return f"none: {result.original_tokens:,} tokens, stored as is"
    saved = 1.0 - result.compressed_tokens / result.original_tokens
    return (
        f"{result.compressor}: {result.original_tokens:,} -> {result.compressed_tokens:,} tokens"
        f" ({saved:.0%} saved)"
    )
