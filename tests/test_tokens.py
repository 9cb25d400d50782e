"""Token counting: a long text counted in parts on threads counts exactly as in one piece."""

from __future__ import annotations

import random

import pytest
from sharedctx.tokens import TokenCounter, _parts

# Characters around which the two encodings' split patterns decide where a piece ends: line
# breaks (a `/` after one joins it in o200k), runs of blanks, letters of several scripts,
# digits, punctuation, contractions.
_ALPHABET = ["\n", "\n\n", "\r\n", " ", "  ", "\t", "/", "a", "Z", "é", "中", "7", ".", ")"]
_ALPHABET += ["'s", "!", "  \n/", "\n ", "-->", "https://x.org/a"]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_a_long_text_counts_the_same_in_parts_as_whole(encoding: str) -> None:
    counter = TokenCounter(encoding)
    rng = random.Random(7)
    for _ in range(12):
        text = "".join(rng.choice(_ALPHABET) for _ in range(120_000))
        parts = _parts(text, 4)
        assert "".join(parts) == text and len(parts) > 1
        whole = len(counter._enc.encode_ordinary(text))
        assert sum(len(counter._enc.encode_ordinary(part)) for part in parts) == whole
        assert counter.count(text) == whole


def test_a_text_with_nowhere_to_cut_is_one_part() -> None:
    text = "x" * 300_000
    assert _parts(text, 4) == [text]
    assert TokenCounter().count(text) == len(TokenCounter()._enc.encode_ordinary(text))
