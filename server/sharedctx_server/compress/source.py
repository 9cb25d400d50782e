"""The content being compressed, with the views every compressor shares, each computed once."""

from __future__ import annotations

from functools import cached_property

from .config import CompressConfig, tool_key
from .error_lines import ErrorMemo, error_flags
from .whitespace import collapse_ws, normalise_lines

__all__ = ["Source"]


class Source:
    """One content and its hints; lines, error flags and error lines are computed on first use.

    Line compressors work on `lines` (whitespace-normalised, see whitespace.py), so that what
    they produce depends only on the normalised text; the table parser also reads `raw_lines`,
    where column alignment and empty TSV fields survive.
    """

    def __init__(
        self,
        content: str,
        kind: str | None,
        tool_name: str | None,
        config: CompressConfig,
        is_error: ErrorMemo | None = None,
    ) -> None:
        self.content = content
        self.kind = kind
        self.tool_name = tool_name
        self.tool = tool_key(tool_name)
        self.config = config
        self.is_error = is_error if is_error is not None else ErrorMemo()

    @cached_property
    def raw_lines(self) -> list[str]:
        """The lines as written, without a carriage return before each newline."""
        return [line.removesuffix("\r") for line in self.content.split("\n")]

    @cached_property
    def lines(self) -> list[str]:
        """Whitespace-normalised lines (trailing blanks gone, inner runs collapsed)."""
        return normalise_lines(self.content.split("\n"))

    @cached_property
    def errors(self) -> list[bool]:
        """Whether each of `lines` carries an error indicator."""
        found = set(self.error_lines)
        if not found:
            return [False] * len(self.lines)
        # A line reads the same collapsed before and after normalisation (see error_lines).
        return [collapse_ws(line) in found for line in self.lines]

    @cached_property
    def error_lines(self) -> list[str]:
        """The error lines, whitespace collapsed (the form in which a compressed one is sought).

        Read off the raw lines: collapsed, a line reads the same before and after
        normalisation, and a compressor that never needs `lines` saves normalising them.
        """
        raw = self.raw_lines
        flags = error_flags(raw, self.is_error)
        return [collapse_ws(line) for line, e in zip(raw, flags, strict=True) if e]

    @cached_property
    def nonblank_raw(self) -> list[str]:
        """The raw lines that are not blank."""
        return [line for line in self.raw_lines if line.strip()]

    def missing_errors(self, text: str) -> int:
        """How many of the content's error lines `text` lacks (compared whitespace-collapsed)."""
        if not self.error_lines:
            return 0
        kept = {collapse_ws(line) for line in text.split("\n")}
        return sum(1 for line in self.error_lines if line not in kept)
