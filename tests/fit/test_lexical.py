"""Lexical relevance: BM25 over incrementally kept namespace term statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import TermStats, lexical_terms
from sharedctx_server.fit.lexical import lexical_terms_each

DOCS = [
    "Deploy the staging database tonight",
    "lunch plans for friday",
    "rollback plan for the staging deploy failed with ValueError",
    "database_connection timeout in prod-db-2",
]


def naive_bm25(
    docs: list[list[str]], query: list[str], k1: float = 1.2, b: float = 0.75
) -> list[float]:
    n = len(docs)
    avg = sum(len(d) for d in docs) / n
    out = []
    for d in docs:
        score = 0.0
        for term in dict.fromkeys(query):
            df = sum(1 for x in docs if term in x)
            tf = d.count(term)
            if not df or not tf:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avg))
        out.append(score)
    return out


def test_terms_split_identifiers_and_drop_function_words() -> None:
    assert lexical_terms("The database_connection to prod-db-2 timed out") == [
        "databas",
        "connect",
        "prod",
        "db",
        "2",  # a single digit is a term ("epoch 3"); a single letter is not
        "tim",
        "out",
        "databaseconnect",  # the snake_case name joined, after the terms
        "timeout",  # "timed out" names the failure as programs do
    ]
    # A query that writes a name as one word meets it: VIRTUAL_ENV is virtualenv too.
    assert "virtualenv" in lexical_terms("VIRTUAL_ENV=/srv/app/.venv")
    assert "init" in lexical_terms("__init__.py")
    # A name that starts with an underscore also counts whole: its part alone is a word that
    # prose says everywhere ("what does _records do?" is not about every `records`).
    assert lexical_terms("__init__") == ["init", "__init__"]
    assert lexical_terms("def _records(lines):") == ["def", "record", "lin", "_records"]
    assert "_records" not in lexical_terms("the records") + lexical_terms("raw_records")
    assert lexical_terms("東京の天気") == ["東", "京", "の", "天", "気"]
    assert lexical_terms("İstanbul ÉCOLE") == ["i̇stanbul", "écol"]


def test_inflections_meet_but_identifiers_stay() -> None:
    assert lexical_terms("failed fails failing fail") == ["fail"] * 4
    assert lexical_terms("stories carried class status") == ["story", "carry", "class", "statu"]
    # A word with a number at its end counts as its letters too (`http500`: `http`).
    assert lexical_terms("http500 v2.3 is a") == ["http500", "http", "v2", "3", "v2.3"]
    # A dotted name counts whole too, a dotted number does not.
    assert lexical_terms("see logs.py at 10.0.0.1") == [
        "see",
        "log",
        "py",
        "10",
        "0",
        "0",
        "1",
        "logs.py",
    ]
    # A stem's final "e" goes, so words whose inflections drop or keep it meet them.
    assert set(lexical_terms("upgrade upgrades upgraded upgrading")) == {"upgrad"}
    assert set(lexical_terms("package packages")) == {"packag"}
    assert lexical_terms("matches boxes use uses") == ["match", "box", "use", "use"]
    # A -tion noun meets its verb; a short one stays (option, action).
    assert set(lexical_terms("eviction evictions evicted evict")) == {"evict"}
    assert set(lexical_terms("deletion deleted delete")) == {"delet"}
    assert lexical_terms("option action") == ["option", "action"]
    assert lexical_terms("exception except") == ["exception", "except"]
    # A consonant doubled for -ed/-ing is one in the word; l, s, z, f and short stems keep two.
    assert set(lexical_terms("skipped skipping SKIP")) == {"skip"}
    assert set(lexical_terms("committed commit stopped stop")) == {"commit", "stop"}
    assert lexical_terms("installed install passed pass added add") == [
        "install", "install", "pass", "pass", "add", "add",
    ]  # fmt: skip
    # A test runner's `Failures: 1` meets "how many failed?".
    assert set(lexical_terms("Failures: FAILURE! failure failed fail")) == {"fail"}
    # The plural of an -ing noun meets it (gcc's `warning:` lines, "which warnings ...?").
    assert set(lexical_terms("warnings warning warn")) == {"warn"}
    assert set(lexical_terms("mappings mapping map")) == {"map"}
    assert lexical_terms("things thing strings string") == ["thing", "thing", "str", "str"]


def test_a_path_counts_its_last_two_parts_joined_too() -> None:
    # "the grpc/aio directory" meets grpc/aio's own header line, not grpc/experimental/aio's.
    assert lexical_terms("what is in grpc/aio?") == ["grpc", "aio", "grpc/aio"]
    assert lexical_terms("/srv/venv/site-packages/grpc/aio:")[-1] == "grpc/aio"
    assert "grpc/aio" not in lexical_terms("/srv/site-packages/grpc/experimental/aio:")
    assert lexical_terms('File "src/app.py", line 3')[-1] == "src/app.py"
    # Only the last two: each pair of a long path would make its line longer for BM25.
    assert [t for t in lexical_terms("/a1/b2/c3/d4") if "/" in t] == ["c3/d4"]
    # A trailing slash or full stop is not a part; numbers (dates, ratios) are not names.
    assert lexical_terms("see /usr/lib/.")[-1] == "usr/lib"
    assert not [t for t in lexical_terms("on 2026/12/06, 3/4 of them, /") if "/" in t]


def test_a_long_run_without_a_slash_is_read_in_linear_time() -> None:
    # Possessive from a run's start: tried from each character, 5,000 took half a second.
    assert lexical_terms("x" * 200_000 + "/y")[-1] == "x" * 200_000 + "/y"


def test_camel_case_names_count_their_parts_too() -> None:
    # The name still matches whole; its parts meet a query that says them as words.
    assert lexical_terms("ConnectionRefusedError: [Errno 111]") == [
        "connectionrefusederror",
        "connect",
        "refus",
        "error",
        "errno",
        "111",
    ]
    assert lexical_terms("pod OOMKilled") == ["pod", "oomkill", "oom", "kill"]
    assert lexical_terms("getHTTPResponse")[1:] == ["get", "http", "respons"]
    # Words in one case, or capitalised, are not CamelCase.
    assert lexical_terms("ERROR Ubuntu error") == ["error", "ubuntu", "error"]
    # Nor is the mixed case of base64 or a key: `YFdIpHg` does not say "ip".
    assert lexical_terms("SHA256:9xYFdIpHgQz") == ["sha256", "sha", "9xyfdiphgqz"]


def test_the_parts_of_a_snake_case_name_are_words_like_any_other() -> None:
    # A part's own rules hold as they do for a word alone: `KB3121255` says "kb", and
    # `ResolvePendingTransactions` its words, inside `Package_for_KB3121255` and a longer name.
    assert "kb" in lexical_terms("Package_for_KB3121255")
    assert {"resolv", "pend", "transact"} <= set(lexical_terms("Store_ResolvePendingTransactions"))


def test_a_numbered_word_counts_as_its_letters_too() -> None:
    # "ssh" meets sshd's `ssh2`, "worker" meets `worker7`; a letter and a number do not split.
    assert lexical_terms("port 4422 ssh2") == ["port", "4422", "ssh2", "ssh"]
    assert lexical_terms("worker7 e404") == ["worker7", "worker", "e404"]


def test_a_failure_said_in_words_counts_as_its_program_name_too() -> None:
    # "ran out of memory" meets `OOMKilled`, "no such file" meets `ENOENT`, either way round.
    assert lexical_terms("did it run out of memory?")[-1] == "oom"
    assert "oom" in lexical_terms("pod OOMKilled")
    assert lexical_terms("no such file") == ["such", "fil", "enoent"]
    assert lexical_terms("upstream timed out")[-1] == "timeout"
    assert lexical_terms("request timed-out, time out")[-2:] == ["timeout", "timeout"]
    # Whole words only: `outofmemory` or "segmentation faults" are not the phrase.
    assert "oom" not in lexical_terms("outofmemory")
    assert "segfault" not in lexical_terms("segmentation faults")
    # A full disk, as people say it, meets `No space left on device`.
    device = lexical_terms("write failed: No space left on device")
    for asked in ("when did the disk fill up?", "is the disk full?", "we ran out of disk space"):
        assert "enospc" in lexical_terms(asked) and "enospc" in device, asked
    assert "enospc" not in lexical_terms("disk fullness report")


def test_the_fraction_of_a_time_of_day_is_not_a_term() -> None:
    # It would meet a query's "504" on every line logged at that millisecond.
    assert lexical_terms("14:02:35.504 GET /api 200") == ["14", "02", "35", "get", "api", "200"]
    assert lexical_terms("10:00:00,123 504 Gateway") == ["10", "00", "00", "504", "gateway"]


def test_bm25_matches_the_formula() -> None:
    stats = TermStats()
    tokenised = [lexical_terms(d) for d in DOCS]
    for slot, terms in enumerate(tokenised):
        stats.add(slot, terms)
    query = lexical_terms("staging deploy database")
    assert stats.bm25_scores(query).tolist() == pytest.approx(naive_bm25(tokenised, query))
    assert stats.bm25_scores(query)[1] == 0.0


def test_scores_come_back_aligned_with_slots_and_sized_on_request() -> None:
    stats = TermStats()
    stats.add(5, ["alpha"])
    scores = stats.bm25_scores(["alpha"], size=8)
    assert scores.shape == (8,) and scores[5] > 0 and scores[:5].sum() == 0
    assert stats.bm25_scores(["alpha"], size=3).tolist() == [0.0, 0.0, 0.0]


def test_remove_and_overwrite_update_document_frequencies() -> None:
    stats = TermStats()
    stats.add(0, ["a", "b"])
    stats.add(1, ["b"])
    assert stats.document_frequency("b") == 2
    stats.add(1, ["c"])  # overwrite
    assert stats.document_frequency("b") == 1 and stats.document_frequency("c") == 1
    stats.remove(0)
    stats.remove(0)  # absent: no-op
    assert stats.documents == 1 and stats.document_frequency("a") == 0
    assert stats.average_length == 1.0


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.lists(st.sampled_from("abcdef"), max_size=6) | st.none()),
        max_size=30,
    ),
    st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=4),
)
def test_incremental_updates_equal_a_fresh_index(
    ops: list[tuple[int, list[str] | None]], query: list[str]
) -> None:
    """Any sequence of puts, overwrites and deletes leaves the same statistics (and scores)
    as indexing the surviving documents from scratch."""
    stats = TermStats()
    alive: dict[int, list[str]] = {}
    for slot, terms in ops:
        if terms is None:
            stats.remove(slot)
            alive.pop(slot, None)
        else:
            stats.add(slot, terms)
            alive[slot] = terms
        stats.bm25_scores(query, size=9)  # interleaved reads must not go stale
    fresh = TermStats()
    for slot, terms in alive.items():
        fresh.add(slot, terms)
    assert np.allclose(stats.bm25_scores(query, size=9), fresh.bm25_scores(query, size=9))


# Pieces that exercise every kind of term: suffixes, stop words, snake_case, dotted and
# CamelCase names, numbered words, failures said in words, times with fractions, CJK,
# casefolding that changes length (ß, İ), the separator itself and terminal escapes.
_PIECES = [
    "failed",
    "installing",
    "the",
    "a",
    "x",
    "7",
    "VIRTUAL_ENV",
    "_private",
    "logs.py",
    "os.path.join",
    "grpc/aio",
    "/",
    "2026/12",
    "10.0.0.1",
    "ConnectionRefusedError",
    "OOMKilled",
    "getHTTPResponse",
    "ssh2",
    "worker7",
    "out of memory",
    "no such file",
    "connection refused",
    "timed out",
    "14:02:35.504",
    "Straße",
    "İstanbul",
    "日本語",
    "\x00",
    "\x1b[31mERROR\x1b[0m",
    "\x1b]0;title",
    "\x07",
    ".",
    "_",
    ":",
    "-",
    " ",
    "\n",
    "\t",
    "é",
    "ǅ",
    "ﬁle",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), max_size=8))
def test_terms_of_many_texts_are_each_texts_own(texts: list[str]) -> None:
    assert lexical_terms_each(texts) == [lexical_terms(t) for t in texts]


def test_terms_of_many_texts_without_escapes_or_separators() -> None:
    # The joined path (no text holds an escape or the separator), against one by one.
    rng = np.random.default_rng(5)
    pieces = [p for p in _PIECES if p not in ("\x00", "\x07") and "\x1b" not in p]
    texts = ["".join(rng.choice(pieces, size=rng.integers(0, 15))) for _ in range(2000)]
    assert lexical_terms_each(texts) == [lexical_terms(t) for t in texts]


def test_a_git_object_id_is_met_by_its_abbreviations() -> None:
    # `git log -p` prints a commit's id whole; people and `git log --oneline` quote 7 or more
    # of its characters, `docker ps` a container id's 12.
    sha = "53a9cb5da3ecc8edd0ed000f804307d935cd51dc"
    terms = lexical_terms(f"commit {sha}")
    assert sha in terms
    assert {"53a9cb5", "53a9cb5d", "53a9cb5da3ec"} <= set(terms)
    assert "53a9cb" not in terms  # six is no abbreviation git prints
    assert set(lexical_terms("what did 53a9cb5 change?")) & set(terms) == {"53a9cb5"}
    # Hex of other lengths (a port, a short hash) has no abbreviations.
    assert "deadbeef012" not in lexical_terms("deadbeef0123")
