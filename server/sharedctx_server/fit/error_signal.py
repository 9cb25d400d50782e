"""The error_indicator factor: how strongly an entry's text reads as an error (docs/fit.md).

Graded evidence, not a substring test: stack frames and exception names weigh most, error
words add up but saturate, and mentions that say there were none ("no errors found",
"0 failed", "errors: 0") count for nothing.

Computed once per entry at put time. Python's regex engine costs tens of nanoseconds per
character for patterns like these, so a long text is judged on its first and last 32k
characters (where tracebacks, exit codes and status lines sit), and each pattern only runs
when a cheap substring test says it could match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sharedctx_server.fit.terminal import strip_ansi

__all__ = ["LEVEL_KEYS", "error_indicator", "error_indicators", "has_error_evidence"]

_WINDOW = 32_768


@dataclass(frozen=True)
class _Signal:
    """One kind of error evidence: a pattern, the substrings it needs, its weight and cap."""

    pattern: re.Pattern[str]
    needs: tuple[str, ...]
    weight: float
    cap: int
    lowercase: bool = True  # run on the lowercased text (the pattern is written in lowercase)
    negatable: bool = False  # a hit can be negated by its context ("no errors", "errors: 0")
    # Whether any of `needs` is in a text, in one call: several times faster than asking for
    # each (a table of 20,000 rows reading `fail` had spent a sixth of its compression here).
    cue: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cue", re.compile("|".join(map(re.escape, self.needs))))


# Before a hit: "no ", "0 ", "zero ", "without ", "never ", "none of the tests ".
_NEGATED_BEFORE = re.compile(r"(?:\bno|\bzero|\b0|\bwithout|\bnever|\bnone of the)\s+(?:\w+\s+)?$")
# After a hit: "errors: 0", "failed=none", "failures = []". A word negates only as the whole
# value (`errors: no`, `failed=false,`): after `error: no` a compiler says what is missing
# (`error: no matching function for call`, `Error: no such table`), an error.
_NEGATED_AFTER = re.compile(
    r"\s*[:=]\s*(?:(?:0|\[\]|\{\})(?![\w.])|(?:none|null|nil|false|no)(?=\s*(?:$|[,;.)\]}])))"
)
_LOOKBEHIND = 24

# The keys a structured log's record names its level by (JSON lines: structlog, pino, zap,
# Python's json formatters, ECS), lowercase; and the levels that are errors.
LEVEL_KEYS = ("level", "severity", "levelname", "lvl", "log.level")
_ERROR_LEVELS = "error|err|fatal|critical|crit|panic|severe|alert|emerg|emergency"

_SIGNALS: tuple[_Signal, ...] = (
    # Stack frames and traceback headers, the strongest evidence (case matters here).
    _Signal(
        re.compile(
            r"""
            ^[ \t]*Traceback\ \(most\ recent\ call\ last\):
          | ^[ \t]*File\ "[^"\n]+",\ line\ \d+                       # Python
          | ^[ \t]*at\ [\w$.<>]+\([\w$.-]*(?::\d+)?\)                 # Java, Kotlin, C#
          | ^[ \t]*at\ (?:[\w$.<>\[\]]+\ )?\(?[^()\s]+:\d+:\d+\)?     # Node
          | ^goroutine\ \d+\ \[[\w\ ]+\]:                              # Go
          | ^panic:\                                                  # Go
          | ^[ \t]*Caused\ by:\                                        # Java chained cause
          | ^[ \t]*\d+:\s+0x[0-9a-f]+\ -\                              # Rust backtrace
            """,
            re.MULTILINE | re.VERBOSE,
        ),
        ("Traceback", 'File "', "at ", "goroutine", "panic:", "Caused by:", "0x"),
        0.9,
        3,
        lowercase=False,
    ),
    _Signal(
        re.compile(r"\bthread '[^'\n]*' panicked at\b"),  # Rust
        ("panicked",),
        0.9,
        1,
    ),
    # Exception names: `ValueError: ...`, `java.lang.IllegalStateException: ...`,
    # pytest's `E   AssertionError`, rustc's `error[E0308]:`.
    _Signal(
        re.compile(
            r"\b[A-Za-z_][\w.]*?(?:Error|Exception|Fault|Panic)\b(?::|[ \t]*$)"
            r"|\berror\[E\d+\]:|^[ \t]*E[ \t]+\w+(?:Error|Exception)",
            re.MULTILINE,
        ),
        ("Error", "Exception", "Fault", "Panic", "error["),
        0.9,
        2,
        lowercase=False,
    ),
    # pytest's explanation of a failure, whatever it names: `E       assert 0.36 == 0.37`,
    # `E   decimal.InvalidOperation: [...]` (no `Error` in the name), flush left with three
    # spaces or more after the `E`. Such lines had counted for nothing, and the failure
    # block's strongest error was a docstring of the library it was raised from.
    _Signal(re.compile(r"^E {3,}\S", re.MULTILINE), ("E   ",), 0.9, 2, lowercase=False),
    # Non-zero exit codes: `exit code 1`, `exited with 2`, `returncode=1`, `exit status 127`,
    # `returned 1 exit status`.
    _Signal(
        re.compile(
            r"\b(?:exit(?:ed)?\s+(?:with\s+)?(?:code|status)|exit_code|return\s?code|returncode"
            r")\s*[:=]?\s*-?0*[1-9]\d*\b|\brc(?:\s*[:=]\s*|\s+)-?0*[1-9]\d*\b"
            r"|\bexited\s+with\s+-?0*[1-9]\d*\b|\bnon-?zero\s+exit\b"
            r"|\breturned\s+0*[1-9]\d*\s+exit\s+status\b"  # `ld returned 1 exit status`
        ),
        ("exit", "code", "rc"),
        1.0,
        1,
    ),
    # HTTP 5xx: `HTTP/1.1 503`, an access log's `"GET /x HTTP/1.1" 504`, `status: 500`,
    # JSON's `"status": 503`, `502 Bad Gateway`.
    _Signal(
        re.compile(
            r"\bhttp/\d(?:\.\d)?\"?\s+5\d\d\b"
            r"|\b(?:status(?:\s+code)?|http|response|code)\"?\s*[:=]?\s*5\d\d\b"
            r"|\b(?:internal server error|bad gateway|service unavailable|gateway timeout)\b"
        ),
        ("http", "status", "response", "code", "server error", "gateway", "unavailable"),
        1.0,
        1,
    ),
    # A line that starts with an error label: `error: ...`, `[ERROR] ...`, `FATAL ...`, `E1234:`,
    # apt's `E: ...`, npm's `npm ERR! ...`.
    _Signal(
        re.compile(
            r"^[ \t]*(?:npm\s+)?(?:\[?(?:error|err|fatal|critical|crit|panic|severe)\]?[:!\s]"
            r"|e\d{3,5}:|e:\s)",
            re.MULTILINE,
        ),
        ("err", "fatal", "crit", "panic", "severe", "e"),
        0.6,
        2,
    ),
    # A structured log's level field: JSON lines (`"level": "error"`, `"severity": "ERROR"`,
    # `"levelname": "CRITICAL"`, pino's numeric `"level": 50`) and logfmt (`level=error`).
    # The line's label, where a text log puts it, is a field there: such an error line had
    # counted no more than any line that says `error` once.
    _Signal(
        re.compile(
            rf'"(?:{"|".join(map(re.escape, LEVEL_KEYS))})"\s*:\s*"(?:{_ERROR_LEVELS})"'
            r'|"level"\s*:\s*[56]0(?![\w.])'
            rf'|\b(?:level|lvl|severity)="?(?:{_ERROR_LEVELS})\b'
        ),
        ("level", "lvl", "severity"),
        0.6,
        1,
    ),
    # Crashes that name no exception: signals, core dumps, the OOM killer.
    _Signal(
        re.compile(
            r"\b(?:segmentation fault|core dumped|out of memory|oomkilled|sigsegv|sigabrt|sigkill"
            r"|stack overflow|bus error)\b"
        ),
        ("segmentation", "dumped", "memory", "oom", "sig", "overflow", "bus error"),
        0.9,
        1,
    ),
    # A parser saying where the input broke, naming no error word: Python's json module
    # (`python -m json.tool` prints `Expecting ',' delimiter: line 1 column 21 (char 20)`,
    # every JSONDecodeError message ends so) and others' `unexpected ... at line 3, column 7`.
    _Signal(
        re.compile(
            r": line \d+ column \d+ \(char \d+\)"
            r"|\b(?:expecting|expected|unexpected|unterminated|invalid)\b[^\n]{0,80}?"
            r"\bline \d+,? column \d+\b"
        ),
        ("column",),
        0.9,
        1,
    ),
    # Failure counts: `3 failed`, `1 error`, `error_count=2`, `num_failures: 4`. The word
    # starts the name or one of its `_` parts: `HAVE_GAI_STRERROR=1` (a build setting that
    # says strerror exists) counts nothing. Nor does a setting that bounds failures
    # (`failureThreshold: 3` in a manifest, `max_failures: 10`, `error_rate_limit=10`) or a
    # probe's `#failure=3` beside its `#success=1` (every container of `kubectl describe`):
    # those had counted as much as `Reason: OOMKilled` beside them.
    _Signal(
        re.compile(
            r"\b0*[1-9]\d*\s+(?:failed|errors?|failures?)\b"
            r"|(?<!#)\b(?!(?:max|min|allowed|tolerated)_)(?:\w*_)?(?:error|fail|exception)"
            r"(?!\w*(?:threshold|limit|budget|tolerance|allowed|rate|timeout|retries|retry"
            r"|delay|backoff|interval|max|min))\w*\s*[:=]\s*0*[1-9]\d*(?![\w.])"
        ),
        ("fail", "error", "exception"),
        0.6,
        1,
    ),
    # Plain error words: weak one by one, capped so volume alone cannot make a log an error.
    # Not as the last part of a dotted name (`email.errors`, `requests.exceptions` are modules
    # a listing or an import trace names) unless it is called: `log.error("...")` logs one;
    # nor before a file's extension (`errors.py`, `error.log` are names of files).
    _Signal(
        re.compile(
            r"(?:(?<![.#])|(?=\w+\())\b(?:errors?|exceptions?|failed|failures?|fail(?:s|ing)?|fatal|panic(?:ked|s)?"
            r"|crash(?:ed|es)?|abort(?:ed)?|traceback|denied|refused|timed out|unhandled|uncaught"
            r"|critical|killed|undefined reference"
            # What the shell, coreutils, make and the loader say when they fail, naming no
            # error word: `ls: cannot access 'x': No such file or directory`, `bash: x: command
            # not found`, `make: *** No rule to make target`, ldd's `libfoo.so => not found`.
            r"|no such file or directory|command not found|operation not permitted"
            r"|no rule to make target"
            r")\b(?!\.[a-z][a-z0-9]{0,4}\b(?!\())"
            # ... and the loader's `=> not found`; `cannot` only before what it names, quoted
            # (coreutils: `cannot stat 'a'`) or a linker's library (`cannot find -lfoo`), not
            # in prose (`you cannot access the page`).
            r"|=>\s*not found\b|\bcannot (?:access|stat|open|remove|create|execute) ['\"‘`/]"
            r"|\bcannot find -l"
        ),
        (
            "err",
            "exception",
            "fail",
            "fatal",
            "panic",
            "crash",
            "abort",
            "traceback",
            "denied",
            "refused",
            "timed out",
            "unhandled",
            "uncaught",
            "critical",
            "killed",
            "undefined reference",  # the linker's
            "no such file",
            "command not found",
            "not permitted",
            "no rule to make",
            "cannot ",
            "not found",
        ),
        0.35,
        4,
        negatable=True,
    ),
)


def _sample(text: str) -> str:
    if len(text) <= 2 * _WINDOW:
        return text
    return text[:_WINDOW] + "\n" + text[-_WINDOW:]


def _negated(text: str, start: int, end: int) -> bool:
    before = text[max(0, start - _LOOKBEHIND) : start]
    return bool(_NEGATED_BEFORE.search(before) or _NEGATED_AFTER.match(text, end))


def _hits(signal: _Signal, text: str, cap: int | None = None) -> int:
    """The signal's hits in `text` that nothing negates, counted up to `cap` (its own cap
    when None)."""
    if signal.cue.search(text) is None:
        return 0
    cap = signal.cap if cap is None else cap
    hits = 0
    for match in signal.pattern.finditer(text):
        if signal.negatable and _negated(text, match.start(), match.end()):
            continue
        hits += 1
        if hits == cap:
            break
    return hits


def error_indicator(text: str) -> float:
    """How strongly `text` reads as an error, in [0, 1) (0: no error evidence)."""
    sample = _sample(strip_ansi(text))
    lowered = sample.lower()
    evidence = sum(s.weight * _hits(s, lowered if s.lowercase else sample) for s in _SIGNALS)
    # Saturating: one error word ~0.30, an exception line ~0.6, a traceback with frames ~0.95.
    return 1.0 - math.exp(-evidence)


def has_error_evidence(text: str) -> bool:
    """Whether `error_indicator(text)` is above 0: the first evidence decides (the
    compressor asks this of every line that holds a cue word, and needs no grade)."""
    sample = _sample(strip_ansi(text))
    lowered = sample.lower()
    return any(_hits(s, lowered if s.lowercase else sample, cap=1) for s in _SIGNALS)


# Every signal's cue words, lowercased: a text holding none of them has no error evidence.
# (The one-letter cue "e" stands for `e123:`, looked for with a pattern.)
# Not compress.error_lines' narrower _NEEDLES: one check per text affords loose cues.
_CUES = tuple(sorted({n.lower() for s in _SIGNALS for n in s.needs if len(n) > 1}))
# ... and `e:` as a line's label (apt's `E: Unable to locate package`).
_E_CODE = re.compile(r"\be\d{3,5}:|^[ \t]*(?:npm\s+)?e:\s", re.MULTILINE)


def _has_cue(text: str) -> bool:
    low = text.lower()
    for cue in _CUES:
        if cue in low:
            return True
    return _E_CODE.search(low) is not None


def error_indicators(texts: Sequence[str]) -> list[float]:
    """error_indicator of each text, skipping the patterns for texts without a cue word (most
    lines of a log): a 2,000-line log's segments are judged in a fraction of the time."""
    return [error_indicator(t) if _has_cue(t) else 0.0 for t in texts]
