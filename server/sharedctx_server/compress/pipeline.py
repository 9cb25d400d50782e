"""compress(): let the compressors that apply compete, keep the smallest safe result."""

from __future__ import annotations

from collections.abc import Callable

from .choose import Choice, choose
from .config import DEFAULT_CONFIG, CompressConfig
from .plan import COMPRESSORS, REWRITING, Compressed, CompressorName

__all__ = [
    "COMPRESSORS",
    "REWRITING",
    "Compressed",
    "CompressorName",
    "compress",
    "describe",
    "explain",
]


def explain(
    content: str,
    *,
    count_tokens: Callable[[str], int],
    kind: str | None = None,
    tool_name: str | None = None,
    config: CompressConfig = DEFAULT_CONFIG,
) -> Choice:
    """The compressed form of `content` with every compressor considered and what came of it."""
    return choose(content, count_tokens, kind, tool_name, config)


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
    already a compressed form (it carries an omission marker), or when no compressor saved
    tokens without losing an error line. A compressed form supplied by the caller at Put
    always wins over this one; the store does not call compress() then.
    """
    return choose(content, count_tokens, kind, tool_name, config).result


def describe(result: Compressed) -> str:
    """One line for people: the compressor, tokens before and after, and the share saved."""
    if result.compressor == "none":
        return f"none: {result.original_tokens:,} tokens, stored as is"
    saved = 1.0 - result.compressed_tokens / result.original_tokens
    return (
        f"{result.compressor}: {result.original_tokens:,} -> {result.compressed_tokens:,} tokens"
        f" ({saved:.0%} saved)"
    )
