"""What a compressor offers for one content: how well it recognised it, and its output."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["COMPRESSORS", "REWRITING", "Attempt", "Compressed", "CompressorName", "Plan"]

CompressorName = Literal[
    "json",
    "listing",
    "table",
    "diff",
    "status",
    "blame",
    "grep",
    "diagnostics",
    "yaml",
    "tests",
    "source",
    "markup",
    "log",
    "stacktrace",
    "text",
    "none",
]
#: Every compressor, in the order that breaks ties between results of equal size (the order
#: of CompressorName): the structural ones first (they keep more of the structure per token).
COMPRESSORS: tuple[CompressorName, ...] = get_args(CompressorName)
#: The compressors whose form leaves out nothing an agent reads of any line, only says it in
#: fewer words (each path of a status once per folder, a search result's path once per file,
#: a blame's commit once per run): the form shows every line, though not as written, so a
#: Fit may take it whole for the lines that matched (fit.excerpts).
REWRITING: frozenset[CompressorName] = frozenset({"status", "grep", "blame"})


@dataclass(frozen=True)
class Attempt:
    """A compressor's output and what it left out, in words (for `explain`)."""

    text: str
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """A compressor that applies to a content: the share of its non-blank lines the compressor
    understood, why it applies, and the run (parsing is done; `run` renders)."""

    name: CompressorName
    share: float
    reason: str
    run: Callable[[], Attempt]
    # Where the JSON document starts in the content and the result alike (json only): after
    # lines that are not JSON, kept as they are (a tool's warnings on stderr, `2>&1`).
    json_at: int = 0


@dataclass(frozen=True)
class Compressed:
    """A compressed form, the compressor that made it and the token counts of both forms."""

    text: str  # the compressed form; the original itself when nothing helped
    compressor: CompressorName  # "none" when `text` is the original
    original_tokens: int
    compressed_tokens: int

    @property
    def token_density(self) -> float:
        """Original tokens per compressed token (1.0 when nothing was saved)."""
        return self.original_tokens / self.compressed_tokens if self.compressed_tokens else 1.0
