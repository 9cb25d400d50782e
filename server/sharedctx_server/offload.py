"""Which work leaves the event loop (docs/performance.md): pure-Python work on texts, and a
Fit's selection over many rows; and work that must not be left half done when its caller is
cancelled.

Deriving a write (compressing, cutting, counting) and indexing an entry for Fit (its terms and
its segments' terms) cost about 1.6 us per character and 20 us per line here. Run on the event
loop, that time holds every other RPC of the process; in a thread it does not run in parallel,
but the loop gets the interpreter back every few milliseconds. A thread's hand-off costs more
than a short note's work, so small texts stay on the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import ParamSpec, TypeVar

__all__ = ["off_the_loop_if", "selection_worth_a_thread", "to_the_end", "worth_a_thread"]

P = ParamSpec("P")
T = TypeVar("T")

# About 5 ms of work: characters, and 16 more for each line.
_LOOP_WORK = 4 * 1024
_LINE_WORK = 16
# A Fit's selection over more candidates and segments than this runs in a thread (numpy lets
# go of the interpreter in the heavy parts).
_SELECTION_ROWS = 5000


def worth_a_thread(texts: Iterable[str]) -> bool:
    """Whether working through `texts` should leave the event loop."""
    work = 0
    for text in texts:
        work += len(text) + _LINE_WORK * text.count("\n")
        if work > _LOOP_WORK:
            return True
    return False


async def off_the_loop_if(
    worth: bool, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """`work(*args, **kwargs)`: in a thread when `worth` (worth_a_thread), else right here."""
    if worth:
        return await asyncio.to_thread(work, *args, **kwargs)
    return work(*args, **kwargs)


def selection_worth_a_thread(candidates: int, segments: int) -> bool:
    """Whether a Fit's selection over `candidates` entries and `segments` cut segments should
    leave the event loop."""
    return candidates + segments > _SELECTION_ROWS


async def to_the_end(work: Awaitable[T]) -> T:
    """`work`'s result, awaited to its end even when the caller is cancelled meanwhile (the
    cancellation is raised once it ends). A caller cancelled by its deadline leaves its lock;
    work it leaves behind, in a thread or between awaits, would go on changing a namespace's
    state while the next caller of that lock changes or reads it too."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                raise  # the work itself was cancelled
            cancelled = True
            continue
        if cancelled:
            raise asyncio.CancelledError
        return result
