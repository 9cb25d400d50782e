"""What the store's operations ask of sharedctx, written once for both clients.

An operation is a plan: a generator that yields a list of `Call`s (client methods to run,
at once), receives their results in the same order, and finally returns the operation's
result. `run` carries a plan on the blocking `Client`, `arun` on the `AsyncClient`
(concurrently within a step), so `batch` and `abatch` share every line of their logic.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..client import AsyncClient, Client

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One client method call; `listed` for the paging iterators (keys, namespaces), whose
    items come back as a list."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    listed: bool = False


Plan = Generator[list[Call], list[Any], T]


def run(client: Client, plan: Plan[T]) -> T:
    """Carry out a plan with the blocking client."""
    try:
        step = next(plan)
        while True:
            step = plan.send([_call(client, c) for c in step])
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(client: AsyncClient, plan: Plan[T]) -> T:
    """Carry out a plan with the asyncio client, each step's calls concurrently."""
    try:
        step = next(plan)
        while True:
            step = plan.send(list(await asyncio.gather(*(_acall(client, c) for c in step))))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _call(client: Client, call: Call) -> Any:
    result = getattr(client, call.method)(*call.args, **call.kwargs)
    return list(result) if call.listed else result


async def _acall(client: AsyncClient, call: Call) -> Any:
    result = getattr(client, call.method)(*call.args, **call.kwargs)
    if call.listed:
        return [item async for item in result]
    return await result


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def gather(calls: Iterable[Call]) -> Plan[list[Any]]:
    """A plan of one step: the calls' results (none when there are no calls)."""
    step = list(calls)
    if not step:
        return []
    return (yield step)


def parallel(plans: Iterable[Plan[Any]]) -> Plan[list[Any]]:
    """The plans side by side, their results in their order: each step is the calls of every
    unfinished plan's step (so abatch runs them concurrently), as many steps as the longest
    plan needs. The outcome is that of running them one after another: when a plan raises,
    the plans after it are dropped (they would not have run) and those before it go on, and
    the first plan's exception is raised once they are done. Only for plans that do not
    depend on each other's calls, such as reads."""
    running = dict(enumerate(plans))
    results: list[Any] = [None] * len(running)
    failures: dict[int, Exception] = {}
    steps: dict[int, list[Call]] = {}

    def advance(i: int, replies: list[Any] | None) -> None:
        # Send plan i its replies (None starts it) and keep its next step, result or failure.
        plan = running[i]
        try:
            steps[i] = next(plan) if replies is None else plan.send(replies)
            return
        except StopIteration as done:
            results[i] = done.value
        except Exception as exc:
            failures[i] = exc
            for later in [j for j in running if j > i]:
                running.pop(later).close()
                steps.pop(later, None)
        del running[i]
        steps.pop(i, None)

    for i in list(running):
        if i in running:  # not dropped by an earlier plan's failure
            advance(i, None)
    while steps:
        order = sorted(steps)
        sizes = [len(steps[i]) for i in order]
        replies = yield [call for i in order for call in steps[i]]
        at = 0
        for i, size in zip(order, sizes, strict=True):
            if i in running:  # not dropped by an earlier plan's failure in this round
                advance(i, replies[at : at + size])
            at += size
    if failures:
        raise failures[min(failures)]
    return results
