"""Recognising stack frames of Python, Java/Kotlin/C#, Node, Go and Rust traces, line by line."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .whitespace import indentation

__all__ = ["Frame", "find_frames", "frame_blocks"]

_PY_FRAME = re.compile(r'^([ \t]*)File "[^"\n]+", line \d+')
_JAVA_FRAME = r"^[ \t]*at [\w$.<>/\[\]-]+\([^()\n]*\)(?: in \S.*)?[ \t]*$"
_JS_FRAME = (
    r"^[ \t]*at (?:async )?(?:new )?(?:[^\s()]+ )?\(?"
    r"(?:[^()\s]+:\d+(?::\d+)?|native|<anonymous>)\)?[ \t]*$"
)
_AT_FRAME = re.compile(f"{_JAVA_FRAME}|{_JS_FRAME}")
_GO_FILE = re.compile(r"^\t\S+\.go:\d+(?: \+0x[0-9a-f]+)?[ \t]*$")
_RUST_HEAD = re.compile(r"^[ \t]*\d+:\s+\S")
_RUST_AT = re.compile(r"^[ \t]+at \S+:\d+(?::\d+)?[ \t]*$")


@dataclass(frozen=True)
class Frame:
    """Lines [start, end) of one frame; Python lists the innermost (raising) frame last."""

    start: int
    end: int
    innermost_last: bool


def _is_frame_head(line: str) -> bool:
    return bool(_PY_FRAME.match(line) or _AT_FRAME.match(line))


# Where a frame may start, found in one scan of the joined lines: a Python or Java/Node frame
# line, or the line before a Go file line. Outside a Rust backtrace no other line starts one.
_MAY_START = re.compile(r'^[ \t]*(?:File "|at )|^(?P<go>)(?=\t\S+\.go:\d)', re.MULTILINE)


def find_frames(lines: list[str]) -> list[Frame]:
    """Every stack frame in `lines`, in order."""
    text = "\n".join(lines)
    if "stack backtrace:" in text or text.count("\n") != len(lines) - 1:
        return _find_frames(lines, range(len(lines)))
    # Only the lines a frame may start at are read: a 1 MiB output of short lines went
    # through three patterns a line, with no frame in it.
    found = list(_MAY_START.finditer(text))
    if not found:
        return []
    starts = np.cumsum([0, *(len(line) + 1 for line in lines[:-1])])
    at = np.searchsorted(starts, [m.start() for m in found], side="right") - 1
    # A Go file line's match is at its own start: the frame starts on the line before it.
    go = np.array([m["go"] is not None for m in found], dtype=np.bool_)
    at = np.where(go, at - 1, at)
    return _find_frames(lines, sorted(set(at[at >= 0].tolist())))


def _find_frames(lines: list[str], candidates: Iterable[int]) -> list[Frame]:
    """The frames that start at `candidates` (ascending line numbers), each line read once."""
    frames: list[Frame] = []
    n = len(lines)
    in_rust = False  # Rust frame numbers look like any numbered list outside a backtrace
    i = 0
    for at in candidates:
        if at < i:
            continue  # inside the frame before
        if at > i:
            in_rust = False
        i = at
        line = lines[i]
        if line.strip() == "stack backtrace:":
            in_rust, i = True, i + 1
            continue
        if in_rust and _RUST_HEAD.match(line):
            j = i + 1
            while j < n and _RUST_AT.match(lines[j]):
                j += 1
            frames.append(Frame(i, j, innermost_last=False))
            i = j
            continue
        in_rust = False
        py = _PY_FRAME.match(line)
        if py:
            # The source line and 3.11's ^^^ markers are indented below the File line.
            indent, j = len(py.group(1)), i + 1
            while j < n and lines[j].strip() and indentation(lines[j]) > indent:
                if _is_frame_head(lines[j]):
                    break
                j += 1
            frames.append(Frame(i, j, innermost_last=True))
            i = j
        elif _AT_FRAME.match(line):
            frames.append(Frame(i, i + 1, innermost_last=False))
            i += 1
        elif i + 1 < n and line[:1].strip() and _GO_FILE.match(lines[i + 1]):
            # Go prints the function, then its file on a tab-indented line.
            frames.append(Frame(i, i + 2, innermost_last=False))
            i += 2
        else:
            i += 1
    return frames


def frame_blocks(frames: list[Frame]) -> list[list[Frame]]:
    """Frames grouped into traces: runs of frames with no other line between them."""
    blocks: list[list[Frame]] = []
    for frame in frames:
        if blocks and blocks[-1][-1].end == frame.start:
            blocks[-1].append(frame)
        else:
            blocks.append([frame])
    return blocks
