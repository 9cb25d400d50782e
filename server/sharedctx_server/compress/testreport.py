"""Test reports (pytest, unittest, go test, cargo test, jest / vitest, node --test, mocha,
TAP): every failure whole, passing tests counted.

A line that reports one passing (or skipped) test, `test_x.py::test_a PASSED [ 2%]`,
`test_a (mod.Case) ... ok`, `--- PASS: TestA (0.00s)`, `test a::b ... ok`, `✓ adds (3 ms)`,
`ok 3 - adds`, and pytest's progress lines without an F or E (`test_x.py ....s. [ 40%]`),
is left out; each run of them becomes one marker counting the tests by file (or module,
package, suite): `[... 40 passed tests omitted: test_orders.py 38, test_api.py 2]`. Every
other line stays as it was: the session header, failing and erroring tests, the failure
sections with their tracebacks, captured output and assertion details, warnings, summaries.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .markers import form_header, omitted_marker
from .plan import Attempt, Plan
from .source import Source
from .wording import counted

__all__ = ["plan_tests"]

# jest / vitest without --verbose: one line per passing file, its tests not listed.
_SUITE_PASS = re.compile(r"^PASS (?P<key>\S+\.\w+)(?: \([\d.]+ m?s\))?$")
# One passing or skipped test: (pattern, group holding the file or module it belongs to).
_PASSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?P<key>\S*?)(?:::\S+)+ (?:PASSED|SKIPPED|XFAIL|XPASS)\b.*$"), "key"),
    (re.compile(r"^(?P<key>\S+\.py) [.sxX]+ *(?:\[ *\d+%\])?$"), "key"),
    # pytest wraps a file's progress onto lines of their own: they belong to the file above.
    # `pytest -q` prints only such lines, failures (F, E) among the dots: the dots are
    # passes, the failures are in the report's FAILURES and ERRORS sections.
    (re.compile(r"^(?P<key>)[.sxXFE]+ +\[ *\d+%\]$"), "key"),
    (
        re.compile(
            r"^\w+ \((?P<key>[\w.]+?)(?:\.\w+)?\)(?: \S.*)? \.\.\. "
            r"(?:ok|skipped\b.*|expected failure)$"
        ),
        "key",
    ),
    (re.compile(r"^ *--- (?:PASS|SKIP): (?P<key>[^/\s]+)\S* \([\d.]+s\)$"), "key"),
    (re.compile(r"^=== (?:RUN|PAUSE|CONT|NAME) +(?P<key>[^/\s]+)"), "key"),
    (re.compile(r"^test (?P<key>\S+?)(?:::\w+)? \.\.\. (?:ok|ignored)$"), "key"),
    (re.compile(r"^ *(?:[✓✔√]|PASS:) (?P<key>).+$"), "key"),
    (_SUITE_PASS, "key"),
    (re.compile(r"^ *ok \d+ (?P<key>)"), "key"),
    (re.compile(r"^(?P<key>)[.i]+(?: \d+/\d+)?$"), "key"),  # cargo test -q progress
)
# Lines that belong to the passing test before (TAP's YAML block) or after (its header).
_PROGRESS = re.compile(r"^(?:\S+\.py )?([.sxXFE]+) *(?:\[ *\d+%\])?$|^([.i]+)(?: \d+/\d+)?$")
# A pytest progress line of a file, failures and errors included: the file later lines of
# dots belong to.
_PYTEST_FILE = re.compile(r"^(\S+\.py) [.sxXFE]+ *\[ *\d+%\]$")
_TAP_HEADER = re.compile(r"^ *# Subtest: ")
_YAML_START = re.compile(r"^ +---$")
_YAML_END = re.compile(r"^ +\.\.\.$")
_RUNNER = re.compile(
    r"^=+ test session starts =+$|^collected \d+ items?|^collecting \.\.\.|^Ran \d+ tests? in "
    r"|^running \d+ tests?$|^test result: |^Tests?:\s+\d|^Test Suites:|^ℹ (?:tests|pass|fail) \d"
    r"|^# (?:tests|pass|fail) \d|^=+ .*\b(?:passed|failed|errors?|no tests ran)\b.* in [\d.]+m?s"
    r"|^(?:ok|FAIL)\s+\S+\s+[\d.]+s$|^ *\d+ (?:passing|failing)\b|^1\.\.\d+$"
    # pytest -q's summary, undecorated: `1 failed, 2499 passed, 5 warnings in 4.18s`.
    r"|^\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)"
    r"(?:, \d+ \w+)* in [\d.]+m?s(?: \([\d:]+\))?$"
)
_SKIPPED = re.compile(r"\bSKIP(?:PED)?\b|\bskipped\b|\bignored$|^\S+\.py [.sxX]*[sxX]")
# Tests expected to fail (pytest's XFAIL/XPASS, unittest's `expected failure`): counted with
# the passes, and the marker says so.
_EXPECTED = re.compile(r"\bX(?:FAIL|PASS)\b|expected failure$|^\S+\.py [.sxX]*[xX]")
_RUNNER_ANYWHERE = re.compile(_RUNNER.pattern, re.MULTILINE)
_SUITE = re.compile(r"^ *(?:PASS|FAIL) (?P<suite>\S+\.\w+)")  # jest / vitest file headers
_COUNTS = re.compile(r"\b(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")


@dataclass(frozen=True)
class _Read:
    passes: dict[int, str]  # line index -> group (file, module, suite) of a passing test
    counts: dict[int, int]  # line index -> tests it reports (lines attached to a test: none)
    tests: int  # passing tests counted (progress lines count each character)
    span: tuple[int, int]  # first and last line of the report


def _count_in(line: str) -> int:
    """Tests a pass line stands for: one, or each dot of a progress line."""
    m = _PROGRESS.match(line)
    if m is None:
        return 1
    return sum(1 for mark in m.group(1) or m.group(2) if mark not in "FE")


def _attach(lines: list[str], passes: dict[int, str]) -> None:
    """Give each passing TAP test its `# Subtest:` line and its YAML block."""
    for i in sorted(passes):
        if i > 0 and _TAP_HEADER.match(lines[i - 1]):
            passes[i - 1] = passes[i]
        j = i + 1
        if j < len(lines) and _YAML_START.match(lines[j]):
            while j < len(lines) and not _YAML_END.match(lines[j]):
                passes[j] = passes[i]
                j += 1
            if j < len(lines):
                passes[j] = passes[i]


def _read(lines: list[str]) -> _Read | None:
    passes: dict[int, str] = {}
    counts: dict[int, int] = {}
    first = last = -1
    suite = ""
    tests = 0
    runner = False
    for i, line in enumerate(lines):
        s = _SUITE.match(line) or _PYTEST_FILE.match(line)
        if s:
            suite = s.group(1)
        for pattern, group in _PASSES:
            m = pattern.match(line)
            if m:
                passes[i] = m.group(group) or suite
                counts[i] = _count_in(line)
                tests += counts[i]
                break
        else:
            if not _RUNNER.match(line):
                continue
            runner = True
        first = i if first < 0 else first
        last = i
    if not runner or len(passes) < 1:
        return None
    _attach(lines, passes)
    return _Read(passes, counts, tests, (first, last))


def _marker(run: list[int], read: _Read, lines: list[str]) -> str:
    groups: Counter[str] = Counter()
    for i in run:
        groups[read.passes[i]] += read.counts.get(i, 0)
    total = sum(groups.values())
    named = [(g, n) for g, n in groups.most_common() if g]
    files = all(_SUITE_PASS.match(lines[i]) for i in run)  # one line a file: names alone
    detail = ", ".join(g if files else f"{g} {n:,}" for g, n in named[:6])
    if len(named) > 6:
        detail += f", {len(named) - 6} more"
    if files:
        return omitted_marker(total, "passed test file", detail)
    skipped = any(_SKIPPED.search(lines[i]) for i in run)
    expected = any(_EXPECTED.search(lines[i]) for i in run)
    what = "passed, skipped or expected-to-fail test" if expected else "passed or skipped test"
    return omitted_marker(total, what if skipped or expected else "passed test", detail)


def _render(source: Source, read: _Read) -> Attempt:
    lines = [line.rstrip() for line in source.raw_lines]
    body: list[str] = []
    run: list[int] = []
    for i, line in enumerate(lines):
        if i in read.passes and not source.judged.is_error_line(line):
            run.append(i)
            continue
        if run and (line.strip() or i == len(lines) - 1):
            body.append(_marker(run, read, lines))
            run = []
        body.append(line)
    if run:
        body.append(_marker(run, read, lines))
    while body and not body[-1].strip():
        body.pop()
    counts: Counter[str] = Counter()
    for line in lines[read.span[1] - 2 : read.span[1] + 1]:
        for n, word in _COUNTS.findall(line):
            counts[word.rstrip("s") if word.startswith("error") else word] += int(n)
    said = ", ".join(f"{n:,} {w}" for w, n in counts.items())
    summary = f"test report: {said or counted(read.tests, 'test') + ' passing'}"
    summary += f"; failures kept whole, {counted(read.tests, 'passing test')} counted by file"
    text = "\n".join([form_header(summary), *body])
    return Attempt(text, (f"{counted(read.tests, 'passing test line')} (counted by file)",))


def plan_tests(source: Source) -> Plan | None:
    """The test report compressor, if a test runner's report is in the content."""
    if _RUNNER_ANYWHERE.search(source.content) is None:
        return None
    read = _read(source.raw_lines)
    if read is None:
        return None
    first, last = read.span
    inside = sum(1 for line in source.raw_lines[first : last + 1] if line.strip())
    nonblank = len(source.nonblank_raw)
    share = inside / nonblank if nonblank else 0.0
    reason = f"a test report: {counted(read.tests, 'passing test')}, {share:.0%} of the lines"
    return Plan("tests", share, reason, lambda: _render(source, read))
