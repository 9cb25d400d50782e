"""Redis replies read back as domain values: entry rows, change-log records, and the tokens
that carry a position in them to a caller and back (page tokens, resume tokens)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..model import EntryMeta, ResumePoint, Stamp, StoredEntry

__all__ = [
    "ENTRY_FIELDS",
    "NAMESPACES_LISTING",
    "Change",
    "decode_page_token",
    "decode_resume_token",
    "encode_page_token",
    "encode_resume_token",
    "entry_from_fields",
    "entry_from_row",
    "keys_listing",
    "stream_order",
    "text",
]

# An entry hash's fields other than its texts, in the order entry_from_fields reads them.
ENTRY_FIELDS = ("v", "c", "u", "t", "x", "m", "q")


@dataclass(frozen=True)
class Change:
    """One change-log record."""

    id: str
    op: str
    key: str
    version: int
    namespace_version: int
    at_ms: int = 0  # when it happened, when not when it was recorded (an expiry: its time)
    expires_ms: int = 0  # a touch: the entry's new expiry

    @classmethod
    def from_record(cls, record: Sequence[Any]) -> Change:
        """Parse an XRANGE/XREAD record (id, [field, value, ...] or {field: value})."""
        record_id, fields = record[0], record[1]
        if not isinstance(fields, dict):
            fields = dict(zip(fields[::2], fields[1::2], strict=True))
        values = {text(k): v for k, v in fields.items()}
        return cls(
            id=text(record_id),
            op=text(values["op"]),
            key=text(values["key"]),
            version=int(values["v"]),
            namespace_version=int(values["ns"]),
            at_ms=int(float(values["t"])) if "t" in values else 0,
            expires_ms=int(values["x"]) if "x" in values else 0,
        )

    @property
    def time_ms(self) -> int:
        """When the change happened: an expiry's time, else when it was recorded (the stream
        id's millisecond part)."""
        return self.at_ms or int(self.id.split("-", 1)[0])


# What a page token resumes: one namespace's keys, or the namespaces. A token carries a tag
# of its listing: handed to another (another namespace's Keys), its cursor would silently
# skip every key before it.
NAMESPACES_LISTING = "namespaces"
_TAG_CHARS = 12


def keys_listing(namespace: str) -> str:
    """The listing of `namespace`'s keys, as page tokens name it."""
    return f"keys\x00{namespace}"


def _tag(listing: str) -> str:
    return hashlib.blake2b(listing.encode("utf-8"), digest_size=_TAG_CHARS // 2).hexdigest()


def encode_page_token(cursor: str | None, listing: str) -> str:
    """Opaque page token for a cursor key of `listing` ('' when there is no next page)."""
    if cursor is None:
        return ""
    return base64.urlsafe_b64encode((_tag(listing) + cursor).encode("utf-8")).decode("ascii")


def decode_page_token(token: str, listing: str) -> str | None:
    """Inverse of encode_page_token (None for ''); ValueError for a token we did not issue
    for `listing`. A plain ValueError: the edge, which decodes tokens as it reads a request,
    names the field."""
    if not token:
        return None
    try:
        decoded = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True)
        tagged = decoded.decode("utf-8")
    except (ValueError, binascii.Error, UnicodeError):
        tagged = ""
    tag = _tag(listing)
    if len(tagged) > len(tag) and tagged.startswith(tag):
        return tagged[len(tag) :]
    raise ValueError("not a page token this server issued for this listing")


def encode_resume_token(point: ResumePoint) -> str:
    """The opaque token for resuming a Watch after a change-log record: its stream id and the
    namespace version it carried (the version tells a resumed watch whether the capped log lost
    any)."""
    return f"{point.record_id}~{point.version}"


# A resume token: a Redis stream id (two unsigned 64-bit numbers) and a namespace version, in
# ASCII digits (str.isdigit would take '²' and '٣', which Redis refuses as an id).
_RESUME_TOKEN = re.compile(r"([0-9]{1,20})-([0-9]{1,20})~([0-9]{1,19})", re.ASCII)
_U64 = 2**64


def decode_resume_token(token: str) -> ResumePoint:
    """Inverse of encode_resume_token; ValueError for a token we did not issue."""
    match = _RESUME_TOKEN.fullmatch(token)
    if (
        match is None
        or int(match[1]) >= _U64
        or int(match[2]) >= _U64
        or int(match[3]) >= _U64 // 2
    ):
        raise ValueError("not a resume token this server issued")
    return ResumePoint(f"{int(match[1])}-{int(match[2])}", int(match[3]))


def stream_order(record_id: str) -> tuple[int, int]:
    """A stream id ('ms-seq') as numbers, which order as Redis orders the ids."""
    ms, _, seq = record_id.partition("-")
    return int(ms), int(seq or 0)


def text(value: Any) -> str:
    """A Redis reply value as text."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def entry_from_row(key: str, row: Sequence[Any]) -> StoredEntry:
    """An entry as get_many.lua returns it."""
    version, created, updated, event, expires, meta, body, is_full, seq = row
    return StoredEntry(
        key=key,
        stamp=Stamp(
            version=int(version),
            created_ms=int(created),
            updated_ms=int(updated),
            expires_ms=int(expires),
            event_ms=int(event),
            sequence=int(seq or 0),
        ),
        meta=EntryMeta.unpack(meta),
        content=text(body),
        full=text(is_full) == "1",
    )


def entry_from_fields(key: str, row: Sequence[Any], full: bool) -> StoredEntry | None:
    """An entry from HMGET of ENTRY_FIELDS, then f or z (the form asked for, `full` or not),
    then o (the one text of both forms); None when neither text is there (a compressed read
    of an entry written before o existed, whose one text is under f)."""
    version, created, updated, event, expires, meta, seq, asked, one = row
    if asked is not None:
        body, is_full = asked, "1" if full else "0"
    elif one is not None:
        body, is_full = one, "1"
    else:
        return None
    row = (version, created, updated, event, expires, meta, body, is_full, seq)
    return entry_from_row(key, row)
