"""Cutting entries into segments at Put: the units Fit's excerpts are made of.

Pure functions: no I/O. The segments' arrays (`sharedctx_server.fit.Segments`) travel with the
entry's metadata; Fit scores and assembles excerpts from them (`sharedctx_server.fit.excerpts`).
"""

from .config import DEFAULT_SEGMENTS, SegmentConfig
from .cut import Segmenter, cut_segments
from .lines import excerpt_lines, text_lines

__all__ = [
    "DEFAULT_SEGMENTS",
    "SegmentConfig",
    "Segmenter",
    "cut_segments",
    "excerpt_lines",
    "text_lines",
]
