"""Micro-batching: concurrent callers share model runs, off the event loop, behind a bounded queue.

One worker task takes requests off the queue, runs them as one model call in a dedicated
single-thread executor (onnxruntime then uses its own thread pool, and the event loop keeps
serving other RPCs), and hands each caller its rows.

Queries (`urgent=True`, as QueryCache sends them) wait in a lane of their own that is served
first: an agent's Fit is not held behind a backlog of PutMany texts. Nor behind one big batch:
each model run is cut to about `max_run_ms` of work (texts x the measured seconds per text), and
a request with more texts than that is queued as pieces that run one after another, so a query
waits at most for the run in progress, not for 32 long texts or a whole PutMany (seconds on 2
cores). Runs that short cost no throughput: a run's own overhead is a thread hop (~0.1 ms), and
the default model embeds one text per onnxruntime call anyway. A run that starts with queries
takes only queries, except right after such a run while other texts wait: then the first
waiting piece of those goes first and queries, then other texts, fill it up, so a steady
stream of queries cannot starve Puts (filling up after the queries was not enough: under load
a run is cut to one text, which a query took).

When a batch is formed: the worker takes what is queued, and waits up to `max_wait_ms` for more
only while callers are arriving concurrently (the current or the previous batch held more than
one request). A lone caller is therefore never held back by the batch window; under load, the
window lets requests that arrive a little apart share a run.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType

import numpy as np
from numpy.typing import NDArray

from sharedctx_server.embedding.embedder import Encoder
from sharedctx_server.errors import LimitExceeded, Unavailable

QUEUE_LIMIT = "embed_queue"
# Retry hint and run size before any batch has been timed: about one short text on a small CPU.
_INITIAL_SECONDS_PER_TEXT = 0.02
_MAX_RETRY_AFTER_S = 60.0


class EmbedderClosed(Unavailable):
    """The embedding batcher is shut down (the server is stopping); nothing was embedded."""


@dataclass(frozen=True)
class BatcherStats:
    """Counters since start, for metrics and for tests to see that batching happened."""

    batches: int
    texts: int
    requests: int
    rejected: int
    failed_batches: int
    queued_texts: int
    last_batch_sizes: tuple[int, ...]
    seconds_per_text: float | None


@dataclass
class _Request:
    texts: list[str]
    future: asyncio.Future[NDArray[np.float32]]
    urgent: bool
    queued: bool = True


class MicroBatcher:
    """Coalesces concurrent `embed` calls into shared model runs; see the module docstring."""

    def __init__(
        self,
        encoder: Encoder,
        *,
        max_batch: int = 32,
        max_wait_ms: float = 2.0,
        max_queued: int = 1024,
        max_run_ms: float = 50.0,
        executor: Executor | None = None,
        history: int = 64,
    ) -> None:
        # A guard for direct callers: the server's values were checked, under their flags' and
        # variables' names (--embed-batch / SHAREDCTX_EMBED_BATCH...), when Settings was built.
        if max_batch < 1 or max_queued < 1 or max_wait_ms < 0 or max_run_ms <= 0:
            raise ValueError(
                "max_batch and max_queued must be >= 1, max_wait_ms >= 0 and max_run_ms > 0"
            )
        self._encoder = encoder
        self._max_batch = max_batch
        self._max_wait_s = max_wait_ms / 1000.0
        self._max_queued = max_queued
        self._max_run_s = max_run_ms / 1000.0
        self._executor = executor
        self._owns_executor = executor is None
        self._queue: collections.deque[_Request] = collections.deque()
        self._urgent: collections.deque[_Request] = collections.deque()
        self._queued_texts = 0
        self._wakeup: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self._prev_requests = 0
        self._last_run_queries_only = False
        self._batches = 0
        self._texts = 0
        self._requests = 0
        self._rejected = 0
        self._failed_batches = 0
        self._last_sizes: collections.deque[int] = collections.deque(maxlen=history)
        self._seconds_per_text: float | None = None

    @property
    def model_id(self) -> str:
        """The model id of the vectors this batcher returns."""
        return self._encoder.model_id

    @property
    def dim(self) -> int:
        """Number of dimensions of each vector."""
        return self._encoder.dim

    @property
    def max_queued(self) -> int:
        """Most texts that may wait at once; a single call may not carry more."""
        return self._max_queued

    def start(self) -> None:
        """Start the worker on the running event loop."""
        if self._worker is not None or self._closed:
            raise RuntimeError("MicroBatcher.start() may be called once, before aclose()")
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sharedctx-embed")
        self._wakeup = asyncio.Event()
        self._worker = asyncio.get_running_loop().create_task(self._run(), name="embed-batcher")

    async def aclose(self) -> None:
        """Stop: queued requests fail with EmbedderClosed, the batch already running completes."""
        if not self._closed:
            self._close_queue()
        if self._worker is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        if self._owns_executor and self._executor is not None:
            # The worker has finished, so the thread is idle; no need to block the loop on it.
            self._executor.shutdown(wait=False)

    async def __aenter__(self) -> MicroBatcher:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def embed(self, texts: Sequence[str], *, urgent: bool = False) -> NDArray[np.float32]:
        """Return `(len(texts), dim)` float32 vectors; raise LimitExceeded if the queue is full.

        `urgent` requests (queries) are served before any other queued request.
        """
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single str")
        if self._wakeup is None or self._closed:
            raise EmbedderClosed("the embedding service is not running")
        n = len(texts)
        if n == 0:
            return np.empty((0, self.dim), dtype=np.float32)
        if n > self._max_queued:
            raise LimitExceeded(
                QUEUE_LIMIT,
                f"{n} texts in one embedding request exceed the queue capacity of "
                f"{self._max_queued}; send at most {self._max_queued} per request",
            )
        if self._queued_texts + n > self._max_queued:
            self._rejected += 1
            retry_after = self._retry_after_s()
            raise LimitExceeded(
                QUEUE_LIMIT,
                f"the embedding queue is full ({self._queued_texts} of {self._max_queued} texts "
                f"waiting); retry in {retry_after:.2f}s",
                retry_after_s=retry_after,
            )
        loop = asyncio.get_running_loop()
        size = self._run_limit()
        pieces = [
            _Request(list(texts[i : i + size]), loop.create_future(), urgent)
            for i in range(0, n, size)
        ]
        (self._urgent if urgent else self._queue).extend(pieces)
        self._queued_texts += n
        self._requests += 1
        self._wakeup.set()
        try:
            rows = [await piece.future for piece in pieces]
        except BaseException:
            # Cancelled, or a piece failed: give the other pieces' slots back now, not when the
            # worker would have reached them.
            for piece in pieces:
                if piece.queued:
                    (self._urgent if urgent else self._queue).remove(piece)
                    self._dequeued(piece)
                piece.future.cancel()
            raise
        return rows[0] if len(rows) == 1 else np.concatenate(rows)

    def stats(self) -> BatcherStats:
        """Return a snapshot of the counters."""
        return BatcherStats(
            batches=self._batches,
            texts=self._texts,
            requests=self._requests,
            rejected=self._rejected,
            failed_batches=self._failed_batches,
            queued_texts=self._queued_texts,
            last_batch_sizes=tuple(self._last_sizes),
            seconds_per_text=self._seconds_per_text,
        )

    def _close_queue(self) -> None:
        self._closed = True
        while self._urgent or self._queue:
            request = self._dequeue()
            if not request.future.done():
                request.future.set_exception(EmbedderClosed("the embedding service is closing"))
        if self._wakeup is not None:
            self._wakeup.set()

    async def _run(self) -> None:
        try:
            while True:
                batch = await self._collect()
                if batch is None:
                    return
                await self._process(batch)
        finally:
            # However the worker ends (closed, cancelled, a bug), nobody is left waiting on it.
            self._close_queue()

    async def _collect(self) -> list[_Request] | None:
        """Return the next batch (possibly empty, if its callers left), or None once closed."""
        assert self._wakeup is not None
        while not (self._urgent or self._queue):
            if self._closed:
                return None
            self._wakeup.clear()
            await self._wakeup.wait()
        # One turn of the loop lets callers already scheduled queue up behind the first.
        await asyncio.sleep(0)
        batch: list[_Request] = []
        limit = self._run_limit()
        # Right after a queries-only run, waiting texts may fill this one (no starvation).
        queries_only = not self._last_run_queries_only or not self._queue
        size = self._take(batch, 0, limit, queries_only)
        if size < limit and max(len(batch), self._prev_requests) > 1:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self._max_wait_s
            while size < limit and not self._closed:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                if not (self._urgent or self._queue):
                    self._wakeup.clear()
                    try:
                        await asyncio.wait_for(self._wakeup.wait(), remaining)
                    except TimeoutError:
                        break
                taken = self._take(batch, size, limit, queries_only)
                if taken == size:
                    break  # what waits does not go into this run: run now rather than spin
                size = taken
        self._prev_requests = len(batch)
        self._last_run_queries_only = bool(batch) and all(r.urgent for r in batch)
        return batch

    def _run_limit(self) -> int:
        """Texts in the next run: max_batch, or fewer when they would take over max_run_ms."""
        per_text = self._seconds_per_text or _INITIAL_SECONDS_PER_TEXT
        return max(1, min(self._max_batch, int(self._max_run_s / per_text)))

    def _take(self, batch: list[_Request], size: int, limit: int, queries_only: bool) -> int:
        # Whole requests (pieces) only; one larger than the limit still runs, alone. A run that
        # starts with queries takes only queries when `queries_only`: filling it up with other
        # texts would make them wait for those too. Otherwise (right after a queries-only run)
        # the first waiting piece of other texts goes first, then queries as always: filled up
        # after the queries only, it never got in where runs are cut to one text.
        if not queries_only and not batch and self._queue:
            size += len(self._queue[0].texts)
            batch.append(self._dequeue(self._queue))
        while self._urgent or self._queue:
            if queries_only and batch and batch[0].urgent and not self._urgent:
                break
            head = (self._urgent or self._queue)[0]
            if batch and size + len(head.texts) > limit:
                break
            batch.append(self._dequeue())
            size += len(head.texts)
        return size

    def _dequeue(self, lane: collections.deque[_Request] | None = None) -> _Request:
        request = (lane or self._urgent or self._queue).popleft()
        self._dequeued(request)
        return request

    def _dequeued(self, request: _Request) -> None:
        request.queued = False
        self._queued_texts -= len(request.texts)

    async def _process(self, batch: list[_Request]) -> None:
        live = [r for r in batch if not r.future.done()]
        if not live:
            return
        texts = [text for r in live for text in r.texts]
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            vectors = await loop.run_in_executor(self._executor, self._encoder.embed, texts)
        except asyncio.CancelledError:
            for r in live:
                if not r.future.done():
                    r.future.set_exception(EmbedderClosed("the embedding service was stopped"))
            raise
        except Exception as exc:
            self._failed_batches += 1
            for r in live:
                if not r.future.done():
                    r.future.set_exception(exc)
            return
        self._record(len(texts), loop.time() - started)
        offset = 0
        for r in live:
            rows = vectors[offset : offset + len(r.texts)]
            offset += len(r.texts)
            # A cancelled caller's future is done already; the others get their own copy, so
            # that no caller keeps the whole batch array alive.
            if not r.future.done():
                r.future.set_result(rows.copy())

    def _record(self, n_texts: int, elapsed_s: float) -> None:
        self._batches += 1
        self._texts += n_texts
        self._last_sizes.append(n_texts)
        per_text = elapsed_s / n_texts
        previous = self._seconds_per_text
        self._seconds_per_text = per_text if previous is None else 0.8 * previous + 0.2 * per_text

    def _retry_after_s(self) -> float:
        per_text = self._seconds_per_text or _INITIAL_SECONDS_PER_TEXT
        return round(min(_MAX_RETRY_AFTER_S, max(0.01, self._queued_texts * per_text)), 3)
