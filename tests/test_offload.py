"""Work that leaves the event loop, and work a cancelled caller must not leave half done."""

from __future__ import annotations

import asyncio
import threading

import pytest
from sharedctx_server.offload import to_the_end, worth_a_thread


def test_small_texts_stay_on_the_loop_and_long_or_many_lined_ones_leave_it() -> None:
    assert not worth_a_thread(["a short note about the deploy"] * 3)
    assert worth_a_thread(["x" * 5000])
    # Few characters, many lines: each line costs a pass of every compressor.
    assert worth_a_thread(["b\n" * 300])
    assert not worth_a_thread([])


async def test_work_runs_to_its_end_when_its_caller_is_cancelled() -> None:
    started, release, finished = asyncio.Event(), threading.Event(), threading.Event()

    def index() -> str:
        release.wait(10)
        finished.set()
        return "indexed"

    async def caller() -> str:
        started.set()
        return await to_the_end(asyncio.to_thread(index))

    task = asyncio.create_task(caller())
    await started.wait()
    await asyncio.sleep(0.05)
    task.cancel()  # as gRPC does when the caller's deadline passes
    await asyncio.sleep(0.05)
    assert not task.done()  # still waiting for the thread, holding whatever it holds
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished.is_set()


async def test_the_works_own_result_error_and_cancellation_come_through() -> None:
    async def answer() -> int:
        return 42

    async def fail() -> None:
        raise ValueError("bad")

    async def cancelled() -> None:
        raise asyncio.CancelledError

    assert await to_the_end(answer()) == 42
    with pytest.raises(ValueError, match="bad"):
        await to_the_end(fail())
    with pytest.raises(asyncio.CancelledError):
        await to_the_end(cancelled())
