"""Factor detectors computed at put time: error indicator, forward references, density."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.fit import error_indicator, forward_references, token_density_scores
from sharedctx_server.fit.error_signal import error_indicators, has_error_evidence
from sharedctx_server.fit.factors import forward_reference_score, token_density_score

NEGATIONS = [
    "no errors found",
    "0 errors",
    "0 failed",
    "error_count=0",
    "errors: 0",
    "Build succeeded. 0 Warning(s), 0 Error(s)",
    "collected 12 items ... 12 passed, 0 failed",
    "process finished with exit code 0",
    "returncode=0",
    "none of the tests failed",
    "finished without errors",
    "ran 10 tests, all passed",
    "HTTP/1.1 200 OK",
    "errors: no",
    "failed=false, retried=2",
]

ERRORS = [
    "error: file not found",
    "ValueError: invalid literal for int() with base 10: 'x'",
    'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\n'
    "KeyError: 'user'",
    'Exception in thread "main" java.lang.IllegalStateException: closed\n'
    "\tat com.acme.Pool.take(Pool.java:41)\n\tat com.acme.Main.main(Main.java:12)",
    "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:",
    "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:4:5",
    "    at Object.<anonymous> (/srv/app/index.js:10:15)",
    "command exited with code 1",
    "exited with 2",
    "subprocess returncode=1",
    "ansible: FAILED! rc=1",
    "job exited rc 2",
    "HTTP/1.1 503 Service Unavailable",
    '10.0.0.7 - - [05/Dec/2026:14:09:16 +0000] "GET /v1/reports HTTP/1.1" 504 167 "-" "curl/8"',
    "upstream answered status: 502",
    "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200",
    "3 failed, 10 passed in 2.1s",
    "fatal: not a git repository (or any of the parent directories): .git",
    "Segmentation fault (core dumped)",
    "error[E0308]: mismatched types",
    # A parser's position report, no error word: `python -m json.tool` on broken JSON.
    "Expecting ',' delimiter: line 1 column 21 (char 20)",
    "unexpected character at line 3, column 7",
    # A structured log's level field, and JSON's status.
    '{"ts": "2026-12-07T08:04:51Z", "level": "error", "msg": "connection pool exhausted"}',
    '{"severity": "CRITICAL", "message": "disk full"}',
    '{"level":50,"time":1733558400000,"msg":"request failed"}',
    'time="2026-12-07T08:04:51Z" level=error msg="db down"',
    '{"path": "/v1/orders", "status": 503}',
]


# Names that hold an error word without reporting one: build settings, modules.
NAMES = [
    'HAVE_GAI_STRERROR = "1"',
    "HAVE_STRERROR=1",
    "import time:       412 |       1893 | email.errors",
    "Requires: requests.exceptions, urllib3.exceptions",
    # Files: `ls -la /etc`'s rc1.d is no return code, `errors.py` no error.
    "drwxr-xr-x 2 root root 4096 Nov 30 10:00 rc1.d",
    "./src/app/errors.py",
    "tail -f /var/log/nginx/error.log",
    "lib/python3.11/site-packages/requests/exceptions.pyc",
    # Positions that report no failure.
    "cursor at line 3, column 7",
    "SELECT column_name FROM columns WHERE line = 3",
    # Settings that bound failures: a manifest's threshold, a probe's (kubectl describe).
    "        failureThreshold: 3",
    "max_failures: 10",
    "error_rate_limit=10",
    "Liveness:  http-get http://:8080/healthz delay=10s period=10s #success=1 #failure=3",
    # Levels that are no errors.
    '{"level": "info", "status": 200, "msg": "request completed"}',
    '{"level":30,"msg":"listening"}',
    "level=warn msg=slow",
    "lvl=2 handled",
]


@pytest.mark.parametrize("text", NEGATIONS + NAMES)
def test_saying_there_were_none_or_naming_an_error_word_is_not_an_error(text: str) -> None:
    assert error_indicator(text) == 0.0


def test_counts_named_by_their_parts_still_count() -> None:
    for text in ("error_count=2", "num_errors=3", "total_failures: 4", "exception_count=1"):
        assert error_indicator(text) >= 0.45, text
    assert error_indicator("requests.exceptions.ConnectionError: refused") >= 0.45


@pytest.mark.parametrize("text", ERRORS)
def test_error_evidence_scores_clearly(text: str) -> None:
    assert error_indicator(text) >= 0.45


@pytest.mark.parametrize(
    "text",
    [
        # After `error:`, a compiler's "no" says what is missing: an error, not "errors: no".
        "src/a.cpp:7:9: error: no matching function for call to 'draw(std::string)'",
        'x.py:1: error: No overload variant of "f" matches argument type "int"',
        "sqlite3: Error: no such table: orders",
        # The linker names no error word.
        "main.c:(.text+0x9): undefined reference to `helper'",
        "collect2: ld returned 1 exit status",
    ],
)
def test_an_error_that_says_what_is_missing_is_an_error(text: str) -> None:
    assert error_indicator(text) > 0


@pytest.mark.parametrize(
    "text",
    ["E       assert 0.36 == 0.37", "E           decimal.InvalidOperation: [<class 'Syntax'>]"],
)
def test_pytests_explanation_of_a_failure_is_error_evidence_whatever_it_names(text: str) -> None:
    assert error_indicator(text) >= 0.45
    assert error_indicator(text.replace("E ", "Eat ", 1)) == 0  # not any line starting E


def test_error_score_is_graded_by_the_strength_of_evidence() -> None:
    word = error_indicator("the error handling docs")
    exception = error_indicator("ValueError: bad")
    traceback = error_indicator(ERRORS[2])
    assert 0 < word < exception < traceback < 1


def test_a_log_repeating_error_does_not_outweigh_a_traceback_by_volume() -> None:
    spam = "warning: error budget at 80%\n" * 5000
    assert error_indicator(spam) < error_indicator(ERRORS[2])


def test_long_texts_are_judged_on_their_ends() -> None:
    text = "ok\n" * 50_000 + ERRORS[2]
    assert error_indicator(text) > 0.9


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_error_indicator_is_in_unit_range(text: str) -> None:
    assert 0.0 <= error_indicator(text) < 1.0


def test_forward_reference_markers_and_references() -> None:
    refs = forward_references(
        "see {{ref}} and {{ref:deploy-plan}}; uses {{tool/grep#7}} and {{ D1:3 }} and {{D1:3}}"
    )
    assert refs.markers == 2 and refs.has_marker
    assert refs.aliases == ("deploy-plan",)
    assert refs.references == ("tool/grep#7", "D1:3")


def test_text_without_markers_has_no_references() -> None:
    refs = forward_references("plain {text} with {single} braces and {{}} empty ones")
    assert refs.markers == 0 and not refs.has_marker and refs.references == ()


def test_more_references_score_higher_but_stay_below_one() -> None:
    scores = forward_reference_score([0, 1, 2, 3, 100]).tolist()
    assert scores[0] == 0 and scores == sorted(scores) and scores[-1] < 1
    assert scores[1] == 0.5


@pytest.mark.parametrize(
    ("original", "compressed", "expected"),
    [
        (100, 100, 0.0),
        (100, 50, 0.5),
        (100, 25, 0.75),
        (100, 10, 0.9),
        (100, 200, 0.0),
        (100, 0, 1.0),
        (0, 0, 0.0),
    ],
)
def test_token_density_maps_the_ratio_to_unit_range(
    original: int, compressed: int, expected: float
) -> None:
    assert token_density_score(original, compressed) == pytest.approx(expected)
    assert token_density_scores([original], [compressed])[0] == pytest.approx(expected)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("abcdefrxitlE0123456789 :=[]()\"'.\n")), max_size=40)
        | st.sampled_from(
            ["ValueError: x", "exit code 2", "e404: gone", "HTTP/1.1 503", "0 failed", "panic: x"]
        ),
        max_size=12,
    )
)
def test_error_indicators_of_many_texts_equal_one_by_one(texts: list[str]) -> None:
    assert error_indicators(texts) == [error_indicator(t) for t in texts]


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.text(max_size=40)
        | st.sampled_from(
            [
                "ValueError: x",
                "no errors found",
                "errors: 0",
                "exit code 2",
                "HTTP/1.1 503",
                "0 failed, 1 failed",
                "ORD-1,fail,807",
                '  File "a.py", line 3',
                "Segmentation fault (core dumped)",
            ]
        ),
        min_size=1,
        max_size=4,
    ).map(" ".join)
)
def test_error_evidence_is_a_positive_indicator(text: str) -> None:
    assert has_error_evidence(text) == (error_indicator(text) > 0.0)
