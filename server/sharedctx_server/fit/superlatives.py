"""Superlative questions over tables: "which process uses the most memory?", "which store sold
the fewest units?" (docs/excerpts.md, "Superlatives").

No word of such a question is on the row that answers it: the row holds numbers, and which
number is the largest only the column as a whole tells. So the column decides at indexing
(segment.extremes): the row holding a column's largest value carries two mark terms, MOST
alone and MOST with the column's word (`↑`, `↑mem` for `%MEM`), the row holding its smallest
LEAST and LEAST with the word. A query with a superlative asks for the bare mark and the
marks of its words, and BM25 does the rest: a mark is on a few rows of a namespace, so it
weighs as a rare term, and the row that answers matches two, as the question says two things
of it (the most, of memory), however long the row (a `ps` row's command line) is.

A query word asks for a column whose word begins it ("memory" for `%MEM`, "restarted" for
`RESTARTS`, both folded like every term): the query asks for each of its words' prefixes of
three letters or more, of which only a column's word can exist in the index. A word that names
its quantity ("largest", "slowest", "expensive") also asks for the columns that usually hold
it.

Other shapes of question are told here too, each answered elsewhere: what occurs most or
least often (frequency_asked), the last or first of its kind (ordinal_asked), a cause ("why
...", cause_asked) and a list ("which files ...", list_asked).
"""

from __future__ import annotations

import re

from .lexical import fold_suffix, is_stop_word

__all__ = [
    "LEAST",
    "MOST",
    "cause_asked",
    "column_words",
    "frequency_asked",
    "list_asked",
    "ordinal_asked",
    "superlative_terms",
]

# Not word characters, so no term of any text can be a mark.
MOST = "↑"
LEAST = "↓"

_MOST_WORDS = frozenset(
    """most largest biggest highest greatest heaviest longest slowest maximum costliest
    oldest""".split()
)
_LEAST_WORDS = frozenset(
    "least fewest smallest lowest shortest fastest minimum cheapest newest youngest".split()
)
_SIZE = ("size",)
_TIME = ("time", "duration", "elapsed", "latency")
_PRICE = ("price", "cost")
# The columns a word of a superlative question asks about without naming them ("the largest
# file": its size; "the most expensive": its price).
_IMPLIED = {
    "largest": _SIZE,
    "biggest": _SIZE,
    "smallest": _SIZE,
    "longest": _TIME,
    "shortest": _TIME,
    "slowest": _TIME,
    "fastest": _TIME,
    "cheapest": _PRICE,
    "expensive": _PRICE,
    "costliest": _PRICE,
    "oldest": ("age",),
    "newest": ("age",),
    "youngest": ("age",),
    # "Which module took the most time by itself?": `python -X importtime`'s and perf's
    # `self` column (what a row spent apart from what it called).
    "itself": ("self",),
    "themselves": ("self",),
}
_NOT_MEASURED = frozenset(
    """recent recently common commonly frequent frequently often likely important relevant
    interesting useful popular""".split()
)
_SHORTEST_WORD = 3  # a column's word, or the prefix of a query word that may name it
_SHORTEST_TAIL = 4  # the end of a column's word that may be a word of its own (column_words)
_WORD = re.compile(r"[a-z]+")


def column_words(name: str, tails: bool = False) -> list[str]:
    """The words a column is asked by: its name's runs of letters, folded (`%MEM`: mem,
    `MEMORY(bytes)`: memory, byte; `RESTARTS`: restart); with `tails`, also every end of
    _SHORTEST_TAIL letters or more of each, folded alike: a name that joins two words is
    asked by its last (cProfile's `tottime` by "time", `ncalls` by "calls"). The other ends
    (`ottime`) are terms no query word begins with."""
    found = _WORD.findall(name.lower())
    if tails:
        found += [w[i:] for w in found for i in range(1, len(w) - _SHORTEST_TAIL + 1)]
    words = (fold_suffix(word) for word in found)
    return list(dict.fromkeys(word for word in words if len(word) >= _SHORTEST_WORD))


def superlative_terms(query: str) -> list[str]:
    """The mark terms `query` asks for: none without a superlative word."""
    words = _WORD.findall(query.lower())
    # "most" and "least" before a word that no column measures ask for no value: "the most
    # recent error", "the most common warning", "most likely".
    asks = [
        word
        for word, after in zip(words, [*words[1:], ""], strict=False)
        if not (word in ("most", "least") and after in _NOT_MEASURED)
    ]
    marks = {MOST for word in asks if word in _MOST_WORDS}
    marks |= {LEAST for word in asks if word in _LEAST_WORDS}
    if not marks:
        return []
    asked: dict[str, None] = {}
    for word in words:
        for implied in _IMPLIED.get(word, ()):
            asked.update(dict.fromkeys(column_words(implied)))  # folded as columns are
        if word in _MOST_WORDS or word in _LEAST_WORDS or is_stop_word(word):
            continue
        folded = fold_suffix(word)
        for end in range(_SHORTEST_WORD, len(folded) + 1):
            asked[folded[:end]] = None
    return [*sorted(marks), *(mark + word for mark in sorted(marks) for word in asked)]


# "most common", "most often": the superlative is of how often a line occurs, which no column
# holds (fit.segment_relevance.frequent_shape_first answers it from the lines' shapes).
_FREQUENCY_WORDS = frozenset("common commonly frequent frequently often".split())


def frequency_asked(query: str) -> int:
    """1 when `query` asks for what occurs most often ("the most common error", "which test
    fails most often"), -1 for least often ("the least common warning", "the rarest"), else
    0."""
    words = _WORD.findall(query.lower())
    for word, after in zip(words, [*words[1:], ""], strict=False):
        if after in _FREQUENCY_WORDS and word in ("most", "least"):
            return 1 if word == "most" else -1
    return -1 if "rarest" in words else 0


# "the last error", "when did it last fail", "the most recent warning": the superlative is of
# when a line was written (fit.segment_relevance.ordinal_first answers it), unless the word
# measures a span of time ("in the last hour").
_LAST_WORDS = frozenset("last latest final".split())
_FIRST_WORDS = frozenset("first earliest".split())
_SPANS = frozenset(
    """second seconds minute minutes hour hours day days week weeks month months year years
    night few couple""".split()
)


def ordinal_asked(query: str) -> int:
    """1 when `query` asks for the last line of its kind ("the last error", "the latest
    warning", "the most recent failure"), -1 for the first ("the first error", "the earliest
    timeout"), else 0."""
    words = _WORD.findall(query.lower())
    for word, after in zip(words, [*words[1:], ""], strict=False):
        if after in _SPANS or after.isdigit():
            continue
        if word in _LAST_WORDS or (word == "most" and after in ("recent", "recently")):
            return 1
        if word in _FIRST_WORDS:
            return -1
    return 0


# "Why does the pod keep restarting?", "what caused the outage?": the answer is what went
# wrong, an error line that need not share a word with the question.
_CAUSE = re.compile(
    r"\b(?:why|cause[sd]?|causing|reason|how come|what went wrong|root cause)\b", re.IGNORECASE
)


def cause_asked(query: str) -> bool:
    """Whether `query` asks for the cause of something ("why did the job fail?", "what caused
    the restart?", "the reason for the timeout")."""
    return _CAUSE.search(query) is not None


# "Which files were deleted?", "what errors did gcc report?": the answer is a list of alike
# lines, every one of them, not a few examples of each kind.
_LIST = re.compile(
    r"\b(?:which|what|list|all)\s+(?:(?:the|new|other|failing|failed)\s+){0,2}([a-z]+)\b"
)
_NOT_PLURAL = frozenset(
    """does was has is this its us yes always perhaps thus less unless process status class
    address access success analysis alias bus gas kubernetes os happens means goes says
    returns contains causes takes runs uses needs requires depends makes gets shows holds
    prints exists fails works keeps sets calls reads writes sends owns listens""".split()
)


def list_asked(query: str) -> bool:
    """Whether `query` asks for a list of things ("which files were deleted?", "what errors
    did gcc report?", "list the failing tests"): its question word is followed by a plural."""
    for match in _LIST.finditer(query.lower()):
        word = match.group(1)
        if word.endswith("s") and not word.endswith("ss") and word not in _NOT_PLURAL:
            return True
    return False
