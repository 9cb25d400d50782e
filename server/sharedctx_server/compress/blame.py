"""`git blame` output: each run of lines from one commit under one line that names it.

`git blame` prefixes every line of the file with its commit, author, time and line number
(`3d9478b2 (Ada Lovelace 2026-12-05 08:54:13 +0000  12) return total`); on source code of
short lines the prefixes are most of the tokens. The form says each run's commit, author
and day once, then the run's lines as the file has them, indented by two spaces:

    3d9478b2 (Ada Lovelace 2026-12-05) lines 12-14:
      def total(xs):
          return sum(xs)

Nothing of the file is left out, and a line's commit is still one look up. A line that
carries an error or a warning is kept as written, prefix included (an error line is never
changed), and it ends its run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .markers import form_header
from .plan import Attempt, Plan
from .source import Source

__all__ = ["plan_blame"]

# `<sha> [<path>] (<author> <date> <time> <zone> <line>) <text>`: the default format, with
# the path column that appears when the file was renamed; `^` marks a boundary commit.
_LINE = re.compile(
    r"^(?P<sha>\^?[0-9a-f]{7,40}) (?:\S+ +)?\((?P<author>.+?) +(?P<day>\d{4}-\d{2}-\d{2}) "
    r"\d{2}:\d{2}:\d{2} [+-]\d{4} +(?P<line>\d+)\) ?(?P<text>.*)$"
)
# Any other `--date` format (`--date=short`: `2026-12-05`, `--date=relative`: `6 days ago`):
# the author and date as written, whitespace collapsed.
_ANY_DATE = re.compile(
    r"^(?P<sha>\^?[0-9a-f]{7,40}) (?:\S+ +)?\((?P<who>.+?) +(?P<line>\d+)\) ?(?P<text>.*)$"
)
_QUICK = re.compile(r"^\^?[0-9a-f]{7,40} (?:\S+ +)?\(.+ +\d+\)")
_INDENT = "  "


@dataclass
class _Run:
    """Consecutive lines of one commit: `sha (author day)`, their numbers, their text."""

    who: str
    first: int
    last: int
    lines: list[str]

    def render(self) -> list[str]:
        first, last = self.first, self.last
        span = f"line {first}" if first == last else f"lines {first}-{last}"
        return [f"{self.who} {span}:", *self.lines]


def plan_blame(source: Source) -> Plan | None:
    """The blame compressor, if the content reads as `git blame` output."""
    if _QUICK.match(source.content) is None:
        return None
    raw = source.raw_lines
    parsed = [_LINE.match(line) or _ANY_DATE.match(line) for line in raw]
    nonblank = sum(1 for line in raw if line.strip())
    understood = sum(1 for m in parsed if m is not None)
    share = understood / nonblank if nonblank else 0.0
    reason = f"{share:.0%} of the non-blank lines are `git blame` lines"
    return Plan("blame", share, reason, lambda: _render(source, parsed))


def _who(m: re.Match[str]) -> str:
    """A blame line's `sha (author day)`; with another date format, its author and date."""
    if m.re is _LINE:
        return f"{m['sha']} ({m['author']} {m['day']})"
    return f"{m['sha']} ({' '.join(m['who'].split())})"


def _render(source: Source, parsed: list[re.Match[str] | None]) -> Attempt:
    raw = source.raw_lines
    out: list[str | _Run] = []  # lines kept as written, and runs
    run: _Run | None = None
    for line, m in zip(raw, parsed, strict=True):
        if m is None or source.judged.is_notable(line):
            run = None
            out.append(line)  # not a blame line, or one that reports a problem: as written
            continue
        who, number = _who(m), int(m["line"])
        text = _INDENT + m["text"] if m["text"] else ""
        if run is not None and run.who == who and number == run.last + 1:
            run.last = number
            run.lines.append(text)
        else:
            run = _Run(who, number, number, [text])
            out.append(run)
    commits = {m["sha"] for m in parsed if m is not None}
    blamed = sum(1 for m in parsed if m is not None)
    header = form_header(
        f"git blame: {blamed} lines from {len(commits)} commits; each run's commit, author "
        "and day said once, its lines indented under it"
    )
    body = [part for item in out for part in ([item] if isinstance(item, str) else item.render())]
    return Attempt(
        "\n".join([header, *body]),
        ("each line's commit, author, time and number, said once per run of lines",),
    )
