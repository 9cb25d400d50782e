"""Stack traces: keep the exception lines, the innermost and the entry frames; elide the middle."""

from __future__ import annotations

from dataclasses import dataclass

from .config import CompressConfig
from .frames import Frame, find_frames, frame_blocks
from .markers import frames_marker
from .whitespace import indentation

__all__ = ["Piece", "compress_stacktrace", "elide_frames"]


# Not frozen: one is made per line, and a frozen dataclass takes four times as long to make.
@dataclass(slots=True)
class Piece:
    """Output lines standing for `span` input lines; `frame` marks kept frames and their markers."""

    lines: tuple[str, ...]
    span: int
    frame: bool = False


def _kept_frames(block: list[Frame], errors: list[bool], config: CompressConfig) -> list[bool]:
    m = len(block)
    inner, outer = config.innermost_frames, config.outermost_frames
    keep = [False] * m
    for k in range(m):
        # Index counted from the raising end of the trace.
        from_inner = m - 1 - k if block[0].innermost_last else k
        if from_inner < inner or m - 1 - from_inner < outer:
            keep[k] = True
        elif any(errors[x] for x in range(block[k].start, block[k].end)):
            keep[k] = True  # a frame whose source line reads as an error is never elided
    return keep


def elide_frames(
    lines: list[str], errors: list[bool], config: CompressConfig, frames: list[Frame] | None = None
) -> list[Piece]:
    """`lines` as pieces, with the middle frames of every long trace replaced by one marker
    (`frames`: their stack frames, when the caller has found them already)."""
    elided: dict[int, tuple[int, int, int]] = {}  # first line -> (end line, frame count, indent)
    in_frame = [False] * len(lines)
    for block in frame_blocks(find_frames(lines) if frames is None else frames):
        for frame in block:
            for x in range(frame.start, frame.end):
                in_frame[x] = True
        keep = _kept_frames(block, errors, config)
        k = 0
        while k < len(block):
            if keep[k]:
                k += 1
                continue
            run_end = k
            while run_end < len(block) and not keep[run_end]:
                run_end += 1
            # Eliding a single frame would cost as much as the frame itself.
            if run_end - k >= 2:
                head = lines[block[k].start]
                indent = indentation(head)
                elided[block[k].start] = (block[run_end - 1].end, run_end - k, indent)
            k = run_end
    if not elided:  # most outputs: one piece per line
        return [Piece((line,), 1, frame=f) for line, f in zip(lines, in_frame, strict=True)]
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        if i in elided:
            end, count, indent = elided[i]
            marker = lines[i][:indent] + frames_marker(count)
            pieces.append(Piece((marker,), end - i, frame=True))
            i = end
        else:
            pieces.append(Piece((lines[i],), 1, frame=in_frame[i]))
            i += 1
    return pieces


def compress_stacktrace(
    lines: list[str], errors: list[bool], config: CompressConfig, frames: list[Frame] | None = None
) -> list[str]:
    """A trace (or a text holding traces) with the middle of every long frame run elided."""
    return [line for piece in elide_frames(lines, errors, config, frames) for line in piece.lines]
