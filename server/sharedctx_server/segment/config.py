"""How segments are cut: where segmenting starts and how large a segment may grow."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_SEGMENTS", "SegmentConfig"]


@dataclass(frozen=True)
class SegmentConfig:
    """Where segmenting starts and how large a segment may grow."""

    # Entries smaller than this are never excerpted: an excerpt of a few hundred tokens saves
    # little, and keeping no segments for them keeps the namespace cache as it was.
    min_tokens: int = 256
    max_lines: int = 40
    # About 250 tokens: a segment must stay well inside small budgets, with room for its
    # markers and context. At 2,000 characters a 28-line paragraph of /proc/cpuinfo or a
    # 40-line JSON item (500 tokens) never fit a 300-token Fit; logs are not affected (their
    # records are shorter).
    max_chars: int = 1000
    # The same bound where characters undercount: text dense in tokens (a runner's timestamp
    # on every line, hex, CJK) reaches 400 tokens well within max_chars.
    max_tokens: int = 250
    # Segments of one entry, about (_at_most): past it, neighbouring short segments share
    # one. A 1 MiB output of one-character lines was 524,288 segments, each counted, judged
    # and indexed on its own (6 s to cut, seconds more at the namespace's first Fit); a
    # 1 MiB log of 50-character lines stays line by line.
    max_segments: int = 20_000


DEFAULT_SEGMENTS = SegmentConfig()
