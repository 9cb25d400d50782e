"""Which pure-Python work on texts leaves the event loop (docs/performance.md).

Deriving a write (compressing, cutting, counting) and indexing an entry for Fit (its terms and
its segments' terms) cost about 1.6 us per character and 20 us per line here. Run on the event
loop, that time holds every other RPC of the process; in a thread it does not run in parallel,
but the loop gets the interpreter back every few milliseconds. A thread's hand-off costs more
than a short note's work, so small texts stay on the loop.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["worth_a_thread"]

# About 5 ms of work: characters, and 16 more for each line.
_LOOP_WORK = 4 * 1024
_LINE_WORK = 16


def worth_a_thread(texts: Iterable[str]) -> bool:
    """Whether working through `texts` should leave the event loop."""
    work = 0
    for text in texts:
        work += len(text) + _LINE_WORK * text.count("\n")
        if work > _LOOP_WORK:
            return True
    return False
