"""The terms of texts and queries for BM25 (fit.bm25; docs/fit.md, "Lexical terms").

Tokens here are for ranking only and are deliberately broader than the relevance battery's
`content_tokens` (whose definition is frozen by its calibration): Unicode words and numbers,
lowercased (casefolded), of 2+ characters, or a single digit (`epoch 3`) or CJK character,
minus a short list of English function words, and a light suffix folding (`failed`, `fails`,
`failing` -> `fail`; `stories` -> `story`; a stem's final `e` goes: `upgrade`, `upgraded` ->
`upgrad`; a `-tion` noun meets its verb: `eviction` -> `evict`) so inflections meet: it lifted
LoCoMo evidence recall by about two points at every budget. Only regular suffixes of words of
4+ letters go; identifiers, error codes and numbers are otherwise matched as written. A
snake_case name counts as its parts and once more joined (a name that starts with an
underscore, `_records`, once more whole), a dotted name (`logs.py`) as its parts and once
more whole, a path's last two parts once more joined (`grpc/aio`), a CamelCase name as its
parts too, a word with a number at its end (`ssh2`) as its letters too, a git object id as
its abbreviations too (`53a9cb5`), a failure said in words as its program name too (`no such
file`: `enoent`); the fraction of a time of day is left out (docs/fit.md, "Lexical terms").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.terminal import strip_ansi

__all__ = [
    "fold_suffix",
    "is_stop_word",
    "lexical_terms",
    "lexical_terms_each",
]


# Word characters except underscore, so snake_case splits into its parts (as do paths, dotted
# names and kebab-case), plus combining marks (casefolding 'İ' gives 'i' + U+0307); a CJK
# ideograph or kana on its own is a term, since CJK has no spaces.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TERM = re.compile(f"[{_CJK}]|(?:[^\\W_{_CJK}]|[\u0300-\u036f])+")
_CJK_SINGLE = re.compile(f"[{_CJK}]")

_STOP_WORDS = frozenset(
    """a an and are as at be been but by did do does for from had has have he her him his how
    i if in into is it its me my no not of on or our she so than that the their them then there
    these they this to too was we were what when where which who whom why will with would you
    your""".split()
)


# (suffix, shortest word it is taken from, replacement), tried in order; the first match wins.
_SUFFIXES = (
    # Before -ing and -s, so that a plural of an -ing noun meets it: warnings, warning ->
    # warn (the -s alone left `warning`, and gcc's `warning:` lines never met "which
    # warnings ...?"); meetings, meeting -> meet.
    ("ings", 7, ""),
    ("ing", 6, ""),
    ("ied", 5, "y"),
    ("ies", 5, "y"),
    ("ed", 5, ""),
    ("s", 4, ""),
)
# Doubled consonants that the word has too: install(ed), pass(ed), buzz(ed), staff(ed); and
# vowels, which are never doubled for an inflection (agreed, freed).
_KEEP_DOUBLED = frozenset("lszfaeiou")
# A stem this long or longer loses a final "e", so that a word whose inflections drop or keep
# it meets them: upgrade, upgrades, upgraded, upgrading -> upgrad; package(s) -> packag;
# matches -> matche -> match.
_E_STEM = 4
# A noun made of a verb with -tion meets the verb: eviction(s) -> evict, as evicted does;
# deletion -> delet, as delete does. Not -ception: `exception` would meet the `except` of
# every Python handler.
_TION = 7


# A namespace's vocabulary is small beside its text (a 1 MiB log has some 200,000 terms and a
# few thousand distinct ones), and folding is pure: remembered, indexing a cold namespace's
# logs took a third less time.
@functools.lru_cache(maxsize=1 << 16)
def fold_suffix(term: str) -> str:
    """`term` without a regular English inflection (failed -> fail) and without the final
    "e" of its stem (upgraded, upgrade -> upgrad); others unchanged."""
    if term.endswith("ss") or not term.isalpha():
        return term
    for suffix, shortest, replacement in _SUFFIXES:
        if len(term) >= shortest and term.endswith(suffix):
            term = term[: -len(suffix)] + replacement
            # A consonant doubled before -ed/-ing is one in the word (skipped, skipping ->
            # skip, as SKIP is), but not l, s, z, f (installed, passed, buzzed, staffed keep
            # theirs) nor in a stem of three letters (added -> add).
            if (
                suffix in ("ed", "ing", "ings")
                and len(term) >= 4
                and term[-1] == term[-2]
                and term[-1] not in _KEEP_DOUBLED
            ):
                term = term[:-1]
            break
    if len(term) >= _TION and term.endswith("tion") and not term.endswith("ception"):
        return term[:-3]
    stem = term[:-1] if len(term) >= _E_STEM and term.endswith("e") else term
    return _NOUNS_OF_VERBS.get(stem, stem)


# Nouns that name what their verb did, folded to the verb's stem: test runners and CI print
# `Failures: 1`, `2 failures`, `FAILURE!` where a question says "how many failed?".
_NOUNS_OF_VERBS = {"failur": "fail"}


# A snake_case name, whose parts are terms; joined, it is one more (VIRTUAL_ENV: virtualenv),
# so that a query that writes the name as one word meets it. Anchored on `\b` and an
# underscore, this costs a fraction of the term scan; a word-by-word search cost as much again.
_SNAKE = re.compile(r"\b\w+_\w+")
# A name that starts with an underscore (`_records`, `__init__`): one more term, whole, since
# its parts alone are English words (`records`), which comments and prose say everywhere:
# "what does _records do?" got the comments that mention records, not the function.
_PRIVATE = re.compile(r"(?<!\w)_+[^\W\d_]\w*")
# A dotted name that starts with a letter (`logs.py`, `os.path`, `java.lang.Thread`): one more
# term, whole, so that a query naming a file meets the line that names it rather than every
# line that says `logs`. Numbers (`10.0.0.1`, `0.5`) are not names.
_DOTTED = re.compile(r"(?<![\w.])[^\W\d_][\w-]*(?:\.\w[\w-]*)+")
# A path (`grpc/aio`, `src/app.py`, `/usr/lib/x86_64-linux-gnu`): its last two parts, when
# both hold a letter, are one more term (`grpc/aio`), so that a query naming a file or folder
# with its parent meets its own lines rather than every other folder's of that name
# (`grpc/experimental/aio`, the hundred `__init__.py`). Only the last two: each pair of a long
# path made its line longer, and BM25 weighed its other words less (a folder's own header line
# fell below the line naming it in its parent). Numbers (`2026/12/06`) are not names.
# Possessive and from the start of a run only: a long run without a slash (base64, a hash)
# is read once, not tried again from each of its characters.
_PATH = re.compile(r"(?<![\w.-])[\w.-]*+(?:/[\w.-]*+)+")
_LETTER = re.compile(r"[^\W\d_]")
# A CamelCase name (`ConnectionRefusedError`, `OOMKilled`, `getHTTPResponse`): its parts are
# terms too, so that "connection refused" meets the exception that says it in one word, and
# the name itself still matches whole. Read on each word as written (before casefolding,
# which loses the case that marks the parts), a snake_case name's parts too.
_CAMEL = re.compile(r"[A-Za-z0-9]*(?:[a-z][A-Z]|[A-Z]{2}[a-z])[A-Za-z0-9]*")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


# A word with a number at its end (`ssh2`, `python3`, `worker7`, `sha256`): its letters are a
# term too, so that "ssh" meets sshd's `port 4422 ssh2` and "worker" meets `worker7`. Read on
# each word, a snake_case name's parts too (`Package_for_KB3121255`: `kb`).
_NUMBERED = re.compile(r"([^\W\d_]{2,})\d+")


# A git object id (40 hex digits, 64 with SHA-256) or a container's (64): its abbreviations
# are terms too, as people and tools quote them (`git log --oneline`'s 7 characters, more in a
# large repository; `docker ps`'s 12): "which files did commit 53a9cb5 change?" met nothing in
# a `git log -p`, which prints each id whole.
_HEX = re.compile(r"[0-9a-f]+")
_OBJECT_ID_LENGTHS = (40, 64)
_ABBREVIATIONS = range(7, 13)


# The fraction of a time of day (`14:02:35.504`, `10:00:00,123`): noise, not a number anyone
# asks about, yet it meets a query's "504" on every line logged at that millisecond.
_TIME_FRACTION = re.compile(r"(\d\d:\d\d:\d\d)[.,]\d+")


# Failures that programs name one way and people another: the words (`no such file`, `out of
# memory`, `timed out`) and the name a program logs (`ENOENT`, `OOMKilled`, `timeout`). The
# words also count as the name, in a query as in a text, so either meets the other; the name
# alone is not spelled out, since it already meets the words' extra term. General vocabulary
# of operating systems and networks (errno symbols, the kernel's and runtimes' wording).
# Each pattern starts with a literal, which the regex engine finds fast; the word boundary
# before it is checked by hand (a leading `\b`, or one alternation of all of them, scanned
# every position and cost as much as the rest of the terms).
_SAME_FAILURE = tuple(
    (name, re.compile(rf"{words}\b"))
    for name, words in (
        ("oom", r"out[ -]of[ -]memory"),
        ("segfault", r"segmentation fault"),
        ("timeout", r"time[ds]?[ -]out"),
        ("enoent", r"no such file"),
        ("eacces", r"permission denied"),
        ("econnrefused", r"connection refused"),
        ("econnreset", r"connection reset"),
        ("epipe", r"broken pipe"),
        ("enospc", r"no space left"),
        # ... and what people call it: "the disk is full", "when did the disk fill up?".
        ("enospc", r"disk(?: is full| full| fill)"),
        ("enospc", r"out of (?:disk )?space"),
        ("eaddrinuse", r"address already in use"),
        ("emfile", r"too many open files"),
    )
)


def is_stop_word(word: str) -> bool:
    """Whether `word` (lowercase) is too common to be a term."""
    return word in _STOP_WORDS


@functools.lru_cache(maxsize=1 << 16)
def _word_term(word: str) -> str | None:
    """A word's term (folded), or None for a stop word or a single letter."""
    ok = word not in _STOP_WORDS and (
        len(word) >= 2 or word.isdigit() or _CJK_SINGLE.match(word) is not None
    )
    return fold_suffix(word) if ok else None


@functools.lru_cache(maxsize=1 << 16)
def _word_terms(word: str) -> tuple[str, ...]:
    """The terms of one word as written (a find of _TERM before casefolding): its own, then,
    for a word with a number at its end, its letters, and for a CamelCase name, its parts."""
    folded = word.casefold()
    terms = [term for term in map(_word_term, _TERM.findall(folded)) if term is not None]
    numbered = _NUMBERED.fullmatch(folded)
    if numbered is not None and numbered.group(1) not in _STOP_WORDS:
        terms.append(fold_suffix(numbered.group(1)))
    if len(folded) in _OBJECT_ID_LENGTHS and _HEX.fullmatch(folded):
        terms.extend(folded[:n] for n in _ABBREVIATIONS)
    camel = _CAMEL.match(word)
    if camel is not None:
        parts = _CAMEL_PART.findall(camel.group())
        if _looks_like_a_name(parts):
            terms.extend(
                fold_suffix(part)
                for part in (p.casefold() for p in parts)
                if part not in _STOP_WORDS and len(part) >= 2
            )
    return tuple(terms)


def lexical_terms(text: str) -> list[str]:
    """The terms of `text` for BM25, in order, repeats kept, each word's followed by the
    letters of a word with a number at its end and the parts of a CamelCase name; then each
    snake_case name's parts joined (a name of two or more parts), each dotted name whole,
    each path's last two parts, and the name of a failure said in words (`out of memory`:
    `oom`)."""
    return _terms([strip_ansi(text)])[0]


# Joins the texts of lexical_terms_each: not a term character, so no term crosses it, and
# no pattern here reads it as part of a word (to each, it is a text's edge).
_SEPARATOR = "\x00"
_AT_ZERO = np.zeros(1, dtype=np.int64)  # where the one text of a single-text read starts


def lexical_terms_each(texts: Sequence[str]) -> list[list[str]]:
    """`[lexical_terms(t) for t in texts]`, term for term, in a few passes over all of them.

    Indexing a cold namespace called lexical_terms once per segment (18,000 for a 1 MiB log),
    and its fixed cost per call (a dozen pattern scans, most finding nothing) was most of the
    time: here each extra pattern scans the joined texts once and its finds are dealt out by
    position, and each distinct word is folded once."""
    plain = [strip_ansi(t) for t in texts]
    if not plain:
        return []
    if len(plain) > 1 and any(_SEPARATOR in t for t in plain):
        return [_terms([t])[0] for t in plain]  # a text holding the separator: one by one
    return _terms(plain)


def _terms(texts: list[str]) -> list[list[str]]:
    """The terms of each of `texts` (without terminal escapes; two or more hold no
    _SEPARATOR): the words of each, then each extra pattern's finds over all of them, dealt
    out by position."""
    one = len(texts) == 1
    plain = texts[0] if one else _SEPARATOR.join(texts)
    if ":" in plain:
        plain = _TIME_FRACTION.sub(r"\1", plain)
    folded = plain.casefold()
    folded_parts = [folded] if one else folded.split(_SEPARATOR)
    # Words are found as written, so that a CamelCase name still shows its parts; each distinct
    # word's terms are made once (_word_terms).
    plain_parts = [plain] if one else plain.split(_SEPARATOR)
    out = [
        [term for word in _TERM.findall(part) for term in _word_terms(word)] for part in plain_parts
    ]
    folded_starts = _starts(folded_parts)
    if "_" in folded:
        for at, name in _finds(_SNAKE, folded, folded_starts):
            parts = [part for part in name.split("_") if part]
            if len(parts) >= 2:
                out[at].append(fold_suffix("".join(parts)))
        for at, name in _finds(_PRIVATE, folded, folded_starts):
            out[at].append(name)
    if "." in folded:
        for at, name in _finds(_DOTTED, folded, folded_starts):
            out[at].append(name.rstrip("."))
    if "/" in folded:
        for at, path in _finds(_PATH, folded, folded_starts):
            pair = _path_pair(path)
            if pair is not None:
                out[at].append(pair)
    for name, words in _SAME_FAILURE:
        for at, match in _matches(words, folded, folded_starts):
            start = match.start()
            if start == 0 or not folded[start - 1].isalnum():
                out[at].append(name)
    return out


def _starts(parts: list[str]) -> npt.NDArray[np.int64]:
    """Where each of `parts` starts in `_SEPARATOR.join(parts)`."""
    if len(parts) == 1:
        return _AT_ZERO
    lengths = np.fromiter((len(p) + 1 for p in parts), dtype=np.int64, count=len(parts))
    return np.concatenate(([0], np.cumsum(lengths[:-1])))


def _matches(
    pattern: re.Pattern[str], text: str, starts: npt.NDArray[np.int64]
) -> Iterable[tuple[int, re.Match[str]]]:
    """Each match of `pattern` in `text`, with the index of the part it lies in."""
    found = list(pattern.finditer(text))
    if not found:
        return []
    if starts.size == 1:
        return ((0, m) for m in found)
    where = np.searchsorted(starts, [m.start() for m in found], side="right") - 1
    return zip(where.tolist(), found, strict=True)


def _finds(
    pattern: re.Pattern[str], text: str, starts: npt.NDArray[np.int64], group: int = 0
) -> Iterable[tuple[int, str]]:
    """Each match's text (or `group`) with the index of the part it lies in."""
    return ((at, m.group(group)) for at, m in _matches(pattern, text, starts))


def _path_pair(path: str) -> str | None:
    """A path's last two parts joined by a slash, when both hold a letter."""
    head, slash, last = path.rstrip("/.").rpartition("/")
    parent = head[head.rfind("/") + 1 :]
    if slash and _LETTER.search(parent) and _LETTER.search(last):
        return f"{parent}/{last}"
    return None


def _looks_like_a_name(parts: list[str]) -> bool:
    """Whether CamelCase parts are words (`Connection`, `Refused`, `OOM`) rather than the
    mixed case of base64 or a key (`YFdIpHg` would read "ip"): every part of letters has two
    or more, and they average three or more."""
    letters = [len(p) for p in parts if not p.isdigit()]
    return bool(letters) and min(letters) >= 2 and sum(letters) >= 3 * len(letters)
