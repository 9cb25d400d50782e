"""Whitespace normalisation, shared by every line compressor so their outputs are fixpoints."""

from __future__ import annotations

import re

from .shapes import CLOCK_STAMP, LINE_NUMBER, RUNNER_STAMP, SOURCE_GUTTER

__all__ = ["collapse_ws", "indentation", "normalise_lines"]

_INNER_RUN = re.compile(r"[ \t]{2,}")
# Indentation, including pytest's one-character gutter ("E       assert", ">       call()"),
# whose spaces line the source up with the ^^^ markers below it, and the line-number gutter
# of source a compiler or linter quotes ("12 |     sum", "   |     ^^^ expected i64", ruff's
# "76 | |     self.detach()"): collapsed, the caret would point at another column.
# After the time a CI runner or dbt stamps every line with, the line's own indentation
# (`2026-12-05T21:00:00.9650000Z   repository: acme/shop`, nested under `with:`). After the
# number `cat -n` puts before a file's line, the file's own indentation (collapsed, a numbered
# JSON or Python file lost its structure, and read as numbered no more).
_LEADING = re.compile(
    rf"(?:(?:{RUNNER_STAMP}|{CLOCK_STAMP})(?=[ \t])|{LINE_NUMBER})?"
    rf"[ \t]*(?:[>E][ \t]+)?(?:{SOURCE_GUTTER}(?:[ \t]*[|/\\_])*[ \t]*)?"
)


def normalise_lines(lines: list[str]) -> list[str]:
    """Strip trailing blanks, collapse inner space/tab runs, keep at most one blank line in a row.

    Leading indentation is kept: it carries structure in code, tracebacks and YAML.
    """
    out: list[str] = []
    previous_blank = False
    for line in lines:
        line = line.rstrip(" \t\r\f\v")
        if not line:
            if not previous_blank:
                out.append("")
            previous_blank = True
            continue
        previous_blank = False
        if "  " not in line and "\t" not in line:
            out.append(line)  # no run to collapse (most lines): the regexes below are costly
            continue
        indent = _LEADING.match(line)
        cut = indent.end() if indent else 0
        out.append(line[:cut] + _INNER_RUN.sub(" ", line[cut:]))
    return out


def collapse_ws(line: str) -> str:
    """A line with every whitespace run made one space and the ends stripped (for comparisons)."""
    return " ".join(line.split())


def indentation(line: str) -> int:
    """The blanks (spaces and tabs) `line` starts with."""
    return len(line) - len(line.lstrip(" \t"))
