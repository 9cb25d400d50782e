"""Line-oriented output: collapse runs of similar lines, then cap the lines with the sizer.

1. Long stack traces inside the output lose their middle frames (see stacktrace).
2. A run of `min_run` or more consecutive lines whose masked SimHashes stay within
   `similar_distance` of the run's first line becomes: first line, `[... N similar lines]`,
   last line. Error lines only join a run when they are the run's first line verbatim.
3. If the adaptive sizer (over the masked lines, the tool's profile) says fewer lines carry the
   information, keep: every error and warning line with `context_lines` around it, kept trace
   frames, the first and last lines, then the most distinct of the rest; each left-out stretch
   becomes `[... N lines omitted]`, N counted in input lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit import SizerProfile, compute_optimal_k

from .config import CompressConfig
from .error_lines import line_has_warning
from .markers import lines_marker, similar_marker
from .masking import mask_line
from .select import fingerprints, pick_distinct
from .stacktrace import Piece, elide_frames
from .whitespace import collapse_ws

__all__ = ["compress_log"]


@dataclass(frozen=True)
class _Unit:
    """Output lines for `span` input lines; `index` is the record whose line stands for them."""

    lines: tuple[str, ...]
    span: int
    index: int
    notable: bool  # an error or warning line: kept, with context
    pinned: bool  # kept whatever the sizer says (trace frames)


@dataclass(frozen=True)
class _Record:
    line: str
    span: int
    error: bool
    frame: bool
    marker: bool


def _records(pieces: list[Piece], errors: list[bool]) -> list[_Record]:
    records: list[_Record] = []
    pos = 0
    for piece in pieces:
        single = piece.span == 1
        # A multi-line span is a frames marker: the frames it stands for carried no error.
        error = single and errors[pos]
        records.append(_Record(piece.lines[0], piece.span, error, piece.frame, not single))
        pos += piece.span
    return records


def _collapse_runs(
    records: list[_Record], prints: npt.NDArray[np.uint64], config: CompressConfig
) -> list[_Unit]:
    units: list[_Unit] = []
    n = len(records)
    i = 0
    while i < n:
        first = records[i]
        j = i + 1
        if not (first.frame or first.marker):
            same = collapse_ws(first.line)
            while j < n:
                rec = records[j]
                if rec.frame or rec.marker:
                    break
                if (int(prints[i]) ^ int(prints[j])).bit_count() > config.similar_distance:
                    break
                if rec.error and collapse_ws(rec.line) != same:
                    break  # a different error line is never folded into a count
                j += 1
        notable = first.error or line_has_warning(first.line)
        if j - i >= config.min_run:
            lines = (first.line, similar_marker(j - i - 2), records[j - 1].line)
            span = sum(r.span for r in records[i:j])
            units.append(_Unit(lines, span, i, notable, pinned=False))
            i = j
            continue
        # Too short to fold: keep this line and look for a run from the next one.
        units.append(_Unit((first.line,), first.span, i, notable, pinned=first.frame))
        i += 1
    return units


def _cap(
    units: list[_Unit],
    prints: npt.NDArray[np.uint64],
    keys: list[str],
    profile: SizerProfile,
    config: CompressConfig,
) -> list[_Unit]:
    n = len(units)
    k = compute_optimal_k([keys[u.index] for u in units], profile.bias, profile.min_k)
    if k >= n:
        return units
    required: set[int] = set(range(min(n, config.head_lines)))
    required.update(range(max(0, n - config.tail_lines), n))
    for i, unit in enumerate(units):
        if unit.pinned:
            required.add(i)
        if unit.notable:
            lo, hi = max(0, i - config.context_lines), min(n, i + config.context_lines + 1)
            required.update(range(lo, hi))
    unit_prints = prints[[u.index for u in units]]
    kept = set(pick_distinct(unit_prints, k, required))
    out: list[_Unit] = []
    i = 0
    while i < n:
        if i in kept:
            out.append(units[i])
            i += 1
            continue
        run = i
        while i < n and i not in kept:
            i += 1
        span = sum(u.span for u in units[run:i])
        out.append(_Unit((lines_marker(span),), span, units[run].index, False, False))
    return out


def compress_log(
    lines: list[str], errors: list[bool], profile: SizerProfile, config: CompressConfig
) -> list[str]:
    """Normalised `lines` (with per-line error flags) compressed as line-oriented output."""
    records = _records(elide_frames(lines, errors, config), errors)
    keys = [mask_line(r.line) for r in records]
    prints = fingerprints(keys)
    units = _collapse_runs(records, prints, config)
    units = _cap(units, prints, keys, profile, config)
    return [line for unit in units for line in unit.lines]
