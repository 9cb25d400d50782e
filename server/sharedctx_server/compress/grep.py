"""Search results (`grep -rn`, `git grep -n`, `rg -n --no-heading`): each file's path once.

Such output prefixes every matching line with its file's path and line number
(`server/app/orders.py:212:    total = sum(prices)`); with deep trees the paths are a third
or more of the tokens. The form says each file's path once, after a blank line and ending in
`:`, then the file's lines as `212: total = sum(prices)` (context lines of `-C` as
`213- ...`, group separators `--` as they were), much as ripgrep's `--heading` does:

    server/app/orders.py:
    212: total = sum(prices)
    230: refund(total)

Nothing is left out. A line that carries an error or a warning is kept as written, path
included (an error line is never changed), and the next line names its file again; so are
lines that are not search results (`grep: logs: Permission denied`, `Binary file x matches`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .markers import form_header
from .plan import Attempt, Plan
from .source import Source
from .wording import counted

__all__ = ["plan_grep"]

# `path:number:text` (a match) or `path-number-text` (a context line of -A/-B/-C). A path has
# no whitespace or colon and looks like one: a folder in it or a file extension, not only
# digits and dots (so `12:00:05 ...` and `10.0.0.1:80:...` are no paths).
_MATCH = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?P<text>.*)$")
_PATH = re.compile(r"[^\s:]*(?:/[^\s:]*|\.[A-Za-z]\w{0,7})")
_NUMERIC = re.compile(r"[\d.]+")
_COLUMN = re.compile(r"\d+:")
_CONTEXT_TAIL = re.compile(r"-(?P<line>\d+)-(?P<text>.*)$")
_SEPARATOR = "--"
_PROBE_LINES = 5  # lines at the start that may hold the first result (after grep's complaints)


@dataclass(frozen=True)
class _Hit:
    """One line of a file in the results: its path, number, text and whether it matched."""

    path: str
    number: str
    text: str
    matched: bool

    def render(self) -> str:
        mark = ":" if self.matched else "-"
        text = self.text.strip()
        return f"{self.number}{mark} {text}" if text else f"{self.number}{mark}"


def _is_path(path: str) -> bool:
    return _PATH.fullmatch(path) is not None and _NUMERIC.fullmatch(path) is None


def _match(line: str) -> re.Match[str] | None:
    """The line as a match, or None. A column after the number (`path:12:5: F401 ...`) makes
    it a linter's or compiler's finding, not a search result: those the log compressor folds
    by rule (ruff's 11,551 tokens to 4,451; 8,366 with each path said once)."""
    m = _MATCH.match(line)
    if m is None or not _is_path(m["path"]) or _COLUMN.match(m["text"]):
        return None
    return m


def _parse(lines: list[str]) -> list[_Hit | None]:
    """Each line as a hit, or None where it is not one (separators too)."""
    hits: list[_Hit | None] = []
    paths: set[str] = set()
    for line in lines:
        m = _match(line)
        if m is not None:
            hits.append(_Hit(m["path"], m["line"], m["text"], True))
            paths.add(m["path"])
        else:
            hits.append(None)
    # Context lines read `path-number-text`, and a path may hold `-12-` itself: a context line
    # is one that starts with the path of a match.
    for i, line in enumerate(lines if paths else ()):
        if hits[i] is None and line != _SEPARATOR:
            hits[i] = _context(line, paths)
    return hits


def _context(line: str, paths: set[str]) -> _Hit | None:
    at = line.find("-")
    while at > 0:
        path = line[:at]
        if path in paths:
            tail = _CONTEXT_TAIL.match(line, at)
            if tail is not None:
                return _Hit(path, tail["line"], tail["text"], False)
        at = line.find("-", at + 1)
    return None


def plan_grep(source: Source) -> Plan | None:
    """The grep compressor, if the content reads as search results with paths and numbers."""
    if not any(_match(line) for line in source.content[:2000].split("\n")[:_PROBE_LINES]):
        return None
    lines = source.lines
    hits = _parse(lines)
    nonblank = sum(1 for line in lines if line.strip())
    understood = sum(1 for line, hit in zip(lines, hits, strict=True) if hit or line == _SEPARATOR)
    share = understood / nonblank if nonblank else 0.0
    reason = f"{share:.0%} of the non-blank lines are search results (path:line:text)"
    return Plan("grep", share, reason, lambda: _render(source, lines, hits))


def _render(source: Source, lines: list[str], hits: list[_Hit | None]) -> Attempt:
    out: list[str] = []
    path = ""  # the file whose lines are being written; "" after a line kept as written
    for line, hit in zip(lines, hits, strict=True):
        if hit is None or source.judged.is_notable(line):
            out.append(line)  # not a result (or a separator), or one reporting a problem
            path = "" if line != _SEPARATOR else path
            continue
        if hit.path != path:
            # After a blank line and ending in `:`, the path opens a block as `ls -lR`'s
            # folders do (compress.blocks): an excerpt shows it above the lines it picks.
            if not out or out[-1] != "":
                out.append("")
            out.append(f"{hit.path}:")
            path = hit.path
        out.append(hit.render())
    found = [hit for hit in hits if hit is not None]
    matches = sum(1 for hit in found if hit.matched)
    files = len({hit.path for hit in found})
    header = form_header(
        f"search results: {counted(matches, 'matching line')} in {counted(files, 'file')}; "
        "each file's path said once, its lines under it as `number: text` (context lines "
        "`number- text`)"
    )
    return Attempt(
        "\n".join([header, *out]),
        ("each line's file path, said once per run of lines from one file",),
    )
