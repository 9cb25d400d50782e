"""Domain values in, reply messages out: every reply of every RPC is built here."""

from __future__ import annotations

from typing import Any, cast

from google.protobuf.timestamp_pb2 import Timestamp
from sharedctx.v1 import sharedctx_pb2 as pb

from ..fit import Form
from ..model import (
    EntryMeta,
    NamespaceStats,
    NamespaceTotals,
    NewEntry,
    Renewed,
    Stamp,
    StoredEntry,
)
from ..services.entry_embeddings import ReembedStep
from ..services.fit_model import CandidateNote, FitAnswer
from ..state.records import Change

_FORMS = {
    Form.FULL: pb.FORM_FULL,
    Form.COMPRESSED: pb.FORM_COMPRESSED,
    Form.EXCERPT: pb.FORM_EXCERPT,
}
_OPS = {
    "put": pb.ChangeEvent.OP_PUT,
    "delete": pb.ChangeEvent.OP_DELETE,
    "expire": pb.ChangeEvent.OP_EXPIRE,
    "clear": pb.ChangeEvent.OP_CLEAR,
    "embed": pb.ChangeEvent.OP_EMBED,
    "evict": pb.ChangeEvent.OP_EVICT,
    "touch": pb.ChangeEvent.OP_TOUCH,
}


def _timestamp(ms: int) -> Timestamp:
    ts = Timestamp()
    ts.FromMilliseconds(ms)
    return ts


def entry(key: str, stamp: Stamp, meta: EntryMeta) -> pb.Entry:
    """Metadata of an entry as a proto Entry (no content)."""
    msg = pb.Entry(
        key=key,
        kind=cast(Any, int(meta.kind)),
        role=meta.role,
        agent_id=meta.agent_id,
        tool_name=meta.tool_name,
        tags=list(meta.tags),
        importance=meta.importance,
        thread=meta.thread,
        version=stamp.version,
        original_tokens=meta.original_tokens,
        compressed_tokens=meta.compressed_tokens,
        original_bytes=meta.original_bytes,
        compressed_bytes=meta.compressed_bytes,
        compressor=meta.compressor,
    )
    # Filled in place: building Timestamps to copy in would cost one more message each.
    msg.created_at.FromMilliseconds(stamp.created_ms)
    msg.updated_at.FromMilliseconds(stamp.updated_ms)
    msg.event_time.FromMilliseconds(stamp.event_ms)
    if stamp.expires_ms:
        msg.expires_at.FromMilliseconds(stamp.expires_ms)
    return msg


def stored(found: StoredEntry) -> pb.Entry:
    """A read entry, with its text in `content`."""
    msg = entry(found.key, found.stamp, found.meta)
    msg.content = found.content
    msg.full = found.full
    return msg


def put(written: NewEntry, stamp: Stamp) -> pb.PutResponse:
    """A Put's reply: the stored entry's metadata."""
    return pb.PutResponse(entry=entry(written.key, stamp, written.meta))


def put_many(written: list[NewEntry], stamps: list[Stamp]) -> pb.PutManyResponse:
    """A PutMany's reply: every stored entry's metadata, in request order."""
    return pb.PutManyResponse(
        entries=[entry(e.key, s, e.meta) for e, s in zip(written, stamps, strict=True)]
    )


def get(found: StoredEntry) -> pb.GetResponse:
    """A Get's reply: the entry, with its text."""
    return pb.GetResponse(entry=stored(found))


def get_many(keys: tuple[str, ...], found: list[StoredEntry | None]) -> pb.GetManyResponse:
    """The entries found, in request order, and the keys that were not."""
    return pb.GetManyResponse(
        entries=[stored(e) for e in found if e is not None],
        missing=[k for k, e in zip(keys, found, strict=True) if e is None],
    )


def touch(keys: tuple[str, ...], found: list[Renewed | None]) -> pb.TouchResponse:
    """The live entries with their expiry now, in request order, and the keys that were not."""
    reply = pb.TouchResponse(missing=[k for k, r in zip(keys, found, strict=True) if r is None])
    for renewed in found:
        if renewed is not None:
            msg = reply.entries.add(key=renewed.key, version=renewed.version)
            if renewed.expires_ms:
                msg.expires_at.FromMilliseconds(renewed.expires_ms)
    return reply


def stats(totals: NamespaceStats) -> pb.StatsResponse:
    """A namespace's totals."""
    return pb.StatsResponse(
        entries=totals.entries,
        original_tokens=totals.original_tokens,
        compressed_tokens=totals.compressed_tokens,
        tokens_saved=totals.tokens_saved,
        savings_percent=totals.savings_percent,
        bytes_stored=totals.bytes_stored,
    )


def keys(found: list[str], next_token: str) -> pb.KeysResponse:
    """One page of a namespace's keys."""
    return pb.KeysResponse(keys=found, next_page_token=next_token)


def delete(deleted: bool) -> pb.DeleteResponse:
    """Whether a live entry was removed."""
    return pb.DeleteResponse(deleted=deleted)


def clear(deleted: int) -> pb.ClearResponse:
    """How many live entries a Clear removed."""
    return pb.ClearResponse(deleted=deleted)


def namespaces(found: list[NamespaceTotals], next_token: str) -> pb.NamespacesResponse:
    """One page of namespaces with their totals."""
    return pb.NamespacesResponse(
        namespaces=[
            pb.NamespaceInfo(
                namespace=t.namespace,
                entries=t.entries,
                original_tokens=t.original_tokens,
                compressed_tokens=t.compressed_tokens,
            )
            for t in found
        ],
        next_page_token=next_token,
    )


def change(record: Change, resume_token: str) -> pb.ChangeEvent:
    """One change of a watched namespace."""
    return pb.ChangeEvent(
        op=_OPS.get(record.op, pb.ChangeEvent.OP_UNSPECIFIED),
        key=record.key,
        version=record.version,
        namespace_version=record.namespace_version,
        time=_timestamp(record.time_ms),
        resume_token=resume_token,
    )


def reembed(step: ReembedStep) -> pb.ReembedProgress:
    """Progress of a Reembed call."""
    return pb.ReembedProgress(done=step.done, total=step.total, computed=step.computed)


def fit(result: FitAnswer, server_ms: float) -> pb.FitResponse:
    """A Fit's reply (chronological entries, totals, weights and, with explain, candidates)."""
    reply = pb.FitResponse(
        total_tokens=result.total_tokens,
        candidates=result.candidates,
        left_out=result.left_out,
        left_out_by_reason=result.left_out_by_reason,
        weights=result.weights,
        server_ms=server_ms,
    )
    for item in result.items:
        msg = reply.entries.add(
            key=item.key,
            rank=item.rank,
            score=item.score,
            form=_FORMS[item.form],
            tokens=item.tokens,
            content=item.content,
            kind=cast(Any, int(item.kind)),
            thread=item.thread,
            total_lines=item.total_lines,
        )
        msg.event_time.FromMilliseconds(item.event_ms)
        for first, last in item.line_ranges:
            msg.line_ranges.add(first=first, last=last)
        for line, count in item.repeats:
            msg.repeats.add(line=line, count=count)
    for note in result.explain:
        _candidate(reply.explain.add(), note)
    return reply


def _candidate(msg: pb.FitCandidate, note: CandidateNote) -> None:
    msg.key = note.key
    msg.score = note.score
    msg.reason = note.reason
    msg.neighbour_gain = note.neighbour_gain
    msg.embedded = note.embedded
    msg.original_tokens = note.original_tokens
    msg.compressed_tokens = note.compressed_tokens
    for name, value in note.factors.items():
        msg.factors[name] = value
    for seg in note.segments:
        msg.segments.add(
            first_line=seg.first_line,
            last_line=seg.last_line,
            tokens=seg.tokens,
            relevance=seg.relevance,
            chosen=seg.chosen,
        )
