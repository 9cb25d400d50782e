"""Progress bars drawn with carriage returns, settled to what the terminal ended up showing.

Tools that draw progress (tqdm in every training and download script, curl's meter, apt,
`docker build`) rewrite one line many times: each state starts with a carriage return, and a
terminal shows only the last. Captured as text, the states pile up on one physical line: 50
states of a download bar are one line of several thousand characters, most of an output's
tokens, and one line is also the smallest thing an excerpt can show.

A settled line keeps its last non-blank state and says how many it dropped:
`epoch 2: 100%|##########| 1000/1000 [... 20 progress updates omitted]`. Unlike a terminal,
the earlier states' longer tails are not painted under a shorter last one (CI log viewers show
lines the same way). A line is settled only when that makes it shorter (a spinner's one-
character states are not). What is not a redraw is left as it is:
- a text without any newline, and a line whose every state ends in a carriage return without
  one before its first: there, carriage returns are an old Mac file's line ends;
- a carriage return just before the newline (Windows line ends); in a text whose lines
  mostly end so, the states before it are settled (compression only: excerpts show such a
  line as it is).
A state that reports an error or a warning is never dropped by compression, which leaves such
a line whole (an error line is never changed); the excerpt view shows the first and the last
such state before the last state (`keep_notable`).
"""

from __future__ import annotations

from collections.abc import Callable

from .markers import omitted_marker

__all__ = ["redraws", "settle_line", "settle_progress"]

# Between the states an excerpt keeps on one line (a problem reported, then the last state).
_STATE_JOIN = " | "


def redraws(text: str) -> bool:
    """Whether `text` may hold redrawn lines at all: a carriage return, and a newline (without
    any, its carriage returns are line ends)."""
    return "\r" in text and "\n" in text


def settle_line(
    line: str, is_notable: Callable[[str], bool], *, keep_notable: bool = False
) -> tuple[str, int]:
    """`line` settled (see module docstring) and the number of states dropped; `line` itself
    and 0 when it is not a redraw, or settling would not shorten it, or (unless
    `keep_notable`) a state or the line reports a problem (`is_notable`)."""
    body = line.rstrip("\r")
    if "\r" not in body or (line.endswith("\r") and not line.startswith("\r")):
        return line, 0
    states = [s for s in body.split("\r") if s.strip()]
    if len(states) < 2:
        return line, 0
    flagged = [s for s in states[:-1] if is_notable(s)]
    if not keep_notable and (flagged or is_notable(states[-1]) or is_notable(line)):
        return line, 0
    # A bar that reports the same problem in every state (`ERROR ... retrying 40%`) would
    # crowd the last state out of what an excerpt shows: the first and the last report do.
    kept = [*dict.fromkeys([flagged[0], flagged[-1]]), states[-1]] if flagged else [states[-1]]
    dropped = len(states) - len(kept)
    if not dropped:
        return line, 0
    shown = _STATE_JOIN.join(s.strip() for s in kept) if flagged else states[-1].rstrip()
    settled = f"{shown} {omitted_marker(dropped, 'progress update')}"
    return (settled, dropped) if len(settled) < len(line) else (line, 0)


def settle_progress(text: str, is_notable: Callable[[str], bool]) -> tuple[str, int]:
    """`text` with each redrawn line settled, for compression (lines that report a problem
    stay whole), and how many states went."""
    if not redraws(text):
        return text, 0
    lines = text.split("\n")
    # Windows line ends (what a terminal capture holds): when most lines end in a carriage
    # return, that one ends the line, and the states are before it.
    crlf = 2 * sum(line.endswith("\r") for line in lines) > len(lines)
    total = 0
    for i, line in enumerate(lines):
        end = "\r" if crlf and line.endswith("\r") else ""
        settled, dropped = settle_line(line[: len(line) - len(end)], is_notable)
        if dropped:
            lines[i] = settled + end
            total += dropped
    return ("\n".join(lines), total) if total else (text, 0)
