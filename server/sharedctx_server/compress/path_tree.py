"""Folder lines nested under the path they share, so a long path is written once.

A listing's form has one line per folder, each starting with the folder's path. In a deep
tree (`du` or `find -type d` of a package store) most of a line is the path its neighbours
also start with: `lib/google-cloud-sdk/lib/surface/compute/tpus/tpu_vm/ (4 entries, 196K)`.
Where a run of consecutive lines shares a long enough prefix, the prefix is written once and
the lines under it, indented two spaces, carry only the rest of their path: the layout of
`tree`, read the same way. The folder the prefix names, when it has a line of its own in the
run, heads the group (du lists a folder after its contents; here it comes first).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["FolderLine", "nest_paths"]

# Characters a group must save (its lines' shared prefix, less the indent and a heading line
# where the folder has none of its own) before it is worth the nesting: short prefixes such
# as `lib/` stay in place.
_MIN_SAVING = 64
# Prefixes shorter than this stay in place whatever their run: a few characters saved a line
# are not worth a level of indent.
_MIN_PREFIX = 12
# Lines one group takes at most (a longer run starts a second group under the same heading):
# it bounds the lines read for each line's prefixes.
_MAX_RUN = 1024
# Levels of nesting at most: deeper, the indent costs what the prefix saves.
_MAX_DEPTH = 6
_INDENT = "  "


@dataclass(frozen=True)
class FolderLine:
    """One folder's line: its path as shown (ending in `/`), what follows the path, and the
    lines kept verbatim under it (tool messages, error lines: never indented, so that they
    stay the lines they were)."""

    path: str
    rest: str
    kept: tuple[str, ...] = ()


def nest_paths(lines: list[FolderLine]) -> tuple[list[str], int]:
    """The lines with runs that share a long path prefix nested under it (module docstring),
    and how many lines were nested."""
    out: list[str] = []
    nested = _nest(lines, "", 0, out)
    return out, nested


def _nest(lines: list[FolderLine], indent: str, depth: int, out: list[str]) -> int:
    nested = 0
    i = 0
    while i < len(lines):
        group = _best_group(lines, i, len(indent)) if depth < _MAX_DEPTH else None
        if group is None:
            _emit(lines[i], indent, out)
            i += 1
            continue
        prefix, end = group
        members = lines[i:end]
        own = next((line for line in members if line.path == prefix), None)
        _emit(own or FolderLine(prefix, ""), indent, out)
        children = [
            replace(line, path=line.path[len(prefix) :]) for line in members if line is not own
        ]
        nested += len(children) + _nest(children, indent + _INDENT, depth + 1, out)
        i = end
    return nested


def _emit(line: FolderLine, indent: str, out: list[str]) -> None:
    out.append(indent + line.path + line.rest)
    out.extend(line.kept)


def _best_group(lines: list[FolderLine], i: int, indent: int) -> tuple[str, int] | None:
    """The prefix of lines[i]'s path that saves the most over the run of lines from i that
    start with it, and where that run ends; None when no prefix saves _MIN_SAVING."""
    best: tuple[int, str, int] | None = None
    stop = min(len(lines), i + _MAX_RUN)
    for prefix in _prefixes(lines[i].path):
        if len(prefix) < _MIN_PREFIX:
            continue
        end = i
        own = False
        while end < stop and lines[end].path.startswith(prefix):
            own = own or lines[end].path == prefix
            end += 1
        children = end - i - (1 if own else 0)
        if children < 2:
            continue
        # Each child loses the prefix and gains one more indent; without a line of its
        # own, the prefix costs a heading line (at the current indent).
        saving = children * (len(prefix) - len(_INDENT)) - (0 if own else indent + len(prefix))
        if saving >= _MIN_SAVING and (best is None or saving > best[0]):
            best = (saving, prefix, end)
    return None if best is None else (best[1], best[2])


def _prefixes(path: str) -> list[str]:
    """The folder paths `path` starts with, itself included (`a/`, `a/b/`, `a/b/c/`): each
    ends at a `/`, never inside the braces of sibling folders sharing a line (`a/{x,y}/`)."""
    brace = path.find("{")
    head = path if brace < 0 else path[:brace]
    out: list[str] = []
    at = head.find("/")
    while at >= 0:
        out.append(head[: at + 1])
        at = head.find("/", at + 1)
    if brace < 0 and path.endswith("/") and (not out or out[-1] != path):
        out.append(path)
    return out
