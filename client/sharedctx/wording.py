"""Counts in words for what the client commands print (`1 entry`, `2 entries`)."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, word: str, plural: str = "") -> str:
    """`1 entry`, `2 entries`: `word` for one, `plural` (default `word` + s) for the rest."""
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"
