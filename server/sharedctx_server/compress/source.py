"""The content being compressed, with the views every compressor shares, each computed once."""

from __future__ import annotations

from functools import cached_property

from .config import CompressConfig, tool_key
from .error_lines import ErrorMemo, JudgedLines
from .frames import Frame, find_frames
from .numbered import without_numbers
from .whitespace import normalise_lines

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
        return [line.removesuffix("\r") for line in self.judged.units]

    @cached_property
    def lines(self) -> list[str]:
        """Whitespace-normalised lines (trailing blanks gone, inner runs collapsed)."""
        return normalise_lines(self.judged.units)

    @cached_property
    def frames(self) -> list[Frame]:
        """The stack frames in `lines`: found once for detecting the generic compressor and
        once more for running it, they cost a scan of the content each time."""
        return find_frames(self.lines)

    @cached_property
    def judged(self) -> JudgedLines:
        """The content's lines, each judged once: `judged.is_error_line(line)` says whether a
        line of the content (raw, stripped or normalised) is one of its error lines.

        Judged on the lines as written: collapsed, a line reads the same before and after
        normalisation, and a compressor that never needs `lines` saves normalising them.
        Its `units` are the content split at newlines, which `raw_lines` and `lines` reuse.
        """
        return JudgedLines(self.content, self.is_error)

    @cached_property
    def judged_json(self) -> JudgedLines:
        """The content's lines as a JSON document has them (also cut at `\\n` escapes)."""
        return JudgedLines(self.content, self.is_error, escaped_newlines=True)

    @cached_property
    def errors(self) -> list[bool]:
        """Whether each of `lines` carries an error indicator."""
        if not self.error_lines:
            return [False] * len(self.lines)
        is_error_line = self.judged.is_error_line
        return [is_error_line(line) for line in self.lines]

    @property
    def error_lines(self) -> list[str]:
        """The error lines, whitespace collapsed (the form in which a compressed one is sought)."""
        return self.judged.error_lines

    @cached_property
    def numbered(self) -> list[str] | None:
        """The raw lines without their numbers, when every line starts with one (`cat -n`,
        numbered.py); None otherwise. What the content is, is read in these."""
        return without_numbers(self.raw_lines)

    @cached_property
    def read_lines(self) -> list[str]:
        """The lines what the content is gets read in: `lines`, or for numbered lines those
        after their numbers, whitespace-normalised alike."""
        return self.lines if self.numbered is None else normalise_lines(self.numbered)

    @cached_property
    def nonblank_raw(self) -> list[str]:
        """The raw lines that are not blank."""
        return [line for line in self.raw_lines if line.strip()]

    def missing_errors(self, text: str) -> int:
        """How many of the content's error lines `text` lacks (compared whitespace-collapsed)."""
        return len(self.judged.lost(text))
