"""Per-entry factor detectors, computed once when an entry is written (docs/fit.md).

The forward-reference markers and references, and the token-density mapping; the graded
error score lives in `error_signal`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.error_signal import error_indicator

__all__ = [
    "ForwardRefs",
    "error_indicator",
    "forward_reference_score",
    "forward_references",
    "token_density_score",
    "token_density_scores",
]

# --- forward references ----------------------------------------------------------------------

# `{{ ... }}` with no braces or line breaks inside; keys are at most 512 bytes.
_BRACES = re.compile(r"\{\{\s*([^{}\r\n]{1,512}?)\s*\}\}")


@dataclass(frozen=True)
class ForwardRefs:
    """Reference markers found in one text.

    `markers`: how many `{{ref}}` / `{{ref:<name>}}` placeholders say that later turns will
    refer to this entry; `aliases`: the names given in `{{ref:<name>}}`; `references`: the keys
    named by `{{<key>}}`, i.e. other entries this text refers to. Names keep first-seen order.
    """

    markers: int
    aliases: tuple[str, ...]
    references: tuple[str, ...]

    @property
    def has_marker(self) -> bool:
        """True when the text marks itself as one later turns will refer to."""
        return self.markers > 0


def forward_references(text: str) -> ForwardRefs:
    """The `{{ref}}` / `{{ref:<name>}}` markers and `{{<key>}}` references in `text`."""
    markers = 0
    aliases: dict[str, None] = {}
    references: dict[str, None] = {}
    for match in _BRACES.finditer(text):
        inner = match.group(1)
        if inner == "ref":
            markers += 1
        elif inner.startswith("ref:"):
            markers += 1
            name = inner[4:].strip()
            if name:
                aliases[name] = None
        else:
            references[inner] = None
    return ForwardRefs(markers, tuple(aliases), tuple(references))


def forward_reference_score(counts: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Reference counts (markers + inbound references) mapped to [0, 1): c / (c + 1)."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    # One reference is worth half the scale; each further one adds less (2 -> 0.67, 3 -> 0.75).
    return c / (c + 1.0)


# --- token density ---------------------------------------------------------------------------


def token_density_score(original_tokens: int, compressed_tokens: int) -> float:
    """Compression ratio original/compressed mapped to [0, 1]: 1 - 1/ratio (ratio <= 1 gives 0)."""
    scores = token_density_scores(np.array([original_tokens]), np.array([compressed_tokens]))
    return float(scores[0])


def token_density_scores(
    original_tokens: npt.ArrayLike, compressed_tokens: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Vectorised token_density_score.

    1 - 1/ratio is the share of tokens the compressed form saves: ratio 1 -> 0, 2 -> 0.5,
    4 -> 0.75, 10 -> 0.9, approaching 1. A compressed form no smaller than the original
    scores 0; an empty compressed form of a non-empty entry scores 1; an empty entry 0.
    """
    orig = np.asarray(original_tokens, dtype=np.float64)
    comp = np.asarray(compressed_tokens, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        saved = 1.0 - comp / orig
    return np.where(orig > 0, np.clip(saved, 0.0, 1.0), 0.0)
