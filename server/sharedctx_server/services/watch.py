"""Watch: follow a namespace's change log, resumable from a token.

A resume token is the stream id of the last event seen plus the namespace version it carried.
Versions count every change with no gaps, so if the first record after the token's id does
not carry the next version, the capped log has dropped records the watcher never saw: that
is an error (OUT_OF_RANGE) rather than a silent gap.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ..errors import InvalidArgument, LogTrimmed
from ..model import ResumePoint
from ..state.records import Change, encode_resume_token, stream_order
from ..state.store import Store

# How long one blocking read waits before checking whether the server is stopping.
_BLOCK_MS = 1000
_BATCH = 256


class ChangeFeed:
    """Streams change records to watchers."""

    def __init__(self, store: Store, stopping: asyncio.Event) -> None:
        self._store = store
        self._stopping = stopping

    @staticmethod
    def token(change: Change) -> str:
        """The resume token for continuing after `change`."""
        return encode_resume_token(ResumePoint(change.id, change.namespace_version))

    @staticmethod
    def start_token(start: ResumePoint) -> str:
        """The resume token of a watch's start: a watcher that loses the stream before any
        change holds it to continue without missing one."""
        return encode_resume_token(start)

    async def _check_not_ahead(self, namespace: str, resume: ResumePoint) -> None:
        """Refuse a token past the newest change: a watch from there would wait for ids
        Redis has not handed out yet and miss every change until then, silently."""
        newest, newest_version = await self._store.log.position(namespace)
        if stream_order(resume.record_id) > stream_order(newest) or resume.version > newest_version:
            raise InvalidArgument(
                "resume_token",
                "is ahead of this namespace's change log (a token from another namespace or "
                "server, or a Redis that lost its data?); Watch without a token",
            )

    async def start(self, namespace: str, resume: ResumePoint | None) -> ResumePoint:
        """Where a watch begins: after `resume` (a decoded resume token) once the log is
        known to hold every change since, or (None) after the newest change."""
        if resume is None:
            return ResumePoint(*await self._store.log.position(namespace))
        _, first = await self._store.log.after(namespace, resume.record_id, 1)
        if first and first[0].namespace_version != resume.version + 1:
            oldest = await self._store.log.first(namespace)
            if oldest is not None and oldest.namespace_version <= resume.version + 1:
                # The log holds that version, not where the token says: not its token.
                raise InvalidArgument(
                    "resume_token",
                    "does not belong to this namespace's change log (a token from "
                    "another namespace or server?); Watch without a token",
                )
            held = f"it now starts at version {oldest.namespace_version}" if oldest else ""
            raise LogTrimmed(
                f"the change log no longer holds the changes after version {resume.version} "
                f"({held}); re-read the namespace (Keys/GetMany) and Watch without a token"
            )
        if not first:
            await self._check_not_ahead(namespace, resume)
        return resume

    async def follow(
        self, namespace: str, start: ResumePoint, touches: bool = False
    ) -> AsyncIterator[Change]:
        """Changes after `start` (from start()) until the server stops; TTL restarts
        ("touch") only with `touches`."""
        after = start.record_id
        while not self._stopping.is_set():
            for change in await self._store.log.wait(namespace, after, _BATCH, _BLOCK_MS):
                after = change.id
                if change.op != "touch" or touches:
                    yield change
