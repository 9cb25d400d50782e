"""Progress bars drawn with carriage returns, settled to what the terminal ended up showing.

Tools that draw progress (tqdm in every training and download script, curl's meter, apt,
`docker build`) rewrite one line many times: each state starts with a carriage return, and a
terminal shows only the last. Captured as text, the states pile up on one physical line: 50
states of a download bar are one line of several thousand characters, most of an output's
tokens, and one line is also the smallest thing an excerpt can show.

A settled line keeps its last non-blank state and says how many it dropped:
`epoch 2: 100%|##########| 1000/1000 [... 20 progress updates omitted]`. Unlike a terminal,
the earlier states' longer tails are not painted under a shorter last one (CI log viewers show
lines the same way). Lines that carry an error or a warning are left whole, so a state that
reported a problem is never lost. A text without any newline is left as it is: there, carriage
returns may be the line ends of an old Mac file rather than redraws.
"""

from __future__ import annotations

from collections.abc import Callable

from .markers import omitted_marker

__all__ = ["settle_line", "settle_progress"]


def settle_line(line: str, is_notable: Callable[[str], bool]) -> tuple[str, int]:
    """`line` settled: its last non-blank state plus a marker, and the number of states
    dropped; `line` itself and 0 when it redraws nothing or `is_notable(line)` (it carries an
    error or a warning)."""
    # A carriage return only before the newline (Windows line ends) redraws nothing.
    if "\r" not in line.rstrip("\r"):
        return line, 0
    states = [s for s in line.split("\r") if s.strip()]
    if len(states) < 2 or is_notable(line):
        return line, 0
    dropped = len(states) - 1
    return f"{states[-1].rstrip()} {omitted_marker(dropped, 'progress update')}", dropped


def settle_progress(text: str, is_notable: Callable[[str], bool]) -> tuple[str, int]:
    """`text` with each redrawn line settled (see module docstring), and how many states went.

    `is_notable(line)` says whether a line carries an error or a warning (it is left whole).
    """
    if "\r" not in text or "\n" not in text:
        return text, 0
    lines = text.split("\n")
    total = 0
    for i, line in enumerate(lines):
        settled, dropped = settle_line(line, is_notable)
        if dropped:
            lines[i] = settled
            total += dropped
    return ("\n".join(lines), total) if total else (text, 0)
