"""Rules for the fields several requests share: namespace, key, content size, batch size,
kind, if_version. Each error names its field and the rule (or the limit and its setting).
"""

from __future__ import annotations

import re

from ...errors import InvalidArgument, LimitExceeded
from ...model import NAMESPACE_CHARS, Kind
from ...settings import Limits, how_to_set

NAMESPACE_RE = re.compile(f"{NAMESPACE_CHARS}+")
# C0 and C1 control characters, DEL included.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def set_by(setting: str) -> str:
    """The end of a message naming a limit: which server setting sets it."""
    return f" (the server's {how_to_set(setting)})"


def namespace(value: str, limits: Limits) -> str:
    """A namespace is 1..max characters of NAMESPACE_CHARS."""
    if not value:
        raise InvalidArgument(
            "namespace",
            f"is required (1-{limits.max_namespace_chars} characters of {NAMESPACE_CHARS})",
        )
    if len(value) > limits.max_namespace_chars:
        raise InvalidArgument(
            "namespace",
            f"is {len(value)} characters; at most {limits.max_namespace_chars} are allowed"
            + set_by("max_namespace_chars"),
        )
    if not NAMESPACE_RE.fullmatch(value):
        bad = next(c for c in value if not NAMESPACE_RE.fullmatch(c))
        raise InvalidArgument(
            "namespace", f"may only hold characters of {NAMESPACE_CHARS}; found {bad!r}"
        )
    return value


def key(value: str, limits: Limits, field: str = "key") -> str:
    """A key is 1..max UTF-8 bytes without control characters."""
    if not value:
        raise InvalidArgument(
            field, f"is required (1-{limits.max_key_bytes} bytes of UTF-8, no control characters)"
        )
    size = utf8_len(value, field)
    if size > limits.max_key_bytes:
        raise InvalidArgument(
            field,
            f"is {size} bytes; at most {limits.max_key_bytes} are allowed"
            + set_by("max_key_bytes"),
        )
    found = CONTROL_RE.search(value)
    if found:
        raise InvalidArgument(
            field, f"may not contain control characters; found {found.group()!r} in {value!r}"
        )
    return value


def content_size(value: str, limits: Limits, field: str = "content") -> int:
    """Content fits the size limit; returns its UTF-8 length."""
    size = utf8_len(value, field)
    if size > limits.max_content_bytes:
        # A query is asked, not stored: shortening it is the fix, not splitting it.
        fix = "shorten the query" if field == "query" else "split the content"
        raise LimitExceeded(
            "max_content_bytes",
            f"{field} is {size} bytes; the limit is {limits.max_content_bytes} ({fix}, or "
            f"raise the server's {how_to_set('max_content_bytes')})",
        )
    return size


def utf8_len(value: str, field: str) -> int:
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        # Lone surrogates cannot be stored as UTF-8 (protobuf refuses them on the wire anyway).
        raise InvalidArgument(field, "is not valid UTF-8 text") from None


def batch_size(count: int, limits: Limits, field: str = "entries") -> None:
    if count == 0:
        raise InvalidArgument(field, "must hold at least one item")
    if count > limits.max_batch_entries:
        raise LimitExceeded(
            "max_batch_entries",
            f"{field} holds {count} items; the limit is {limits.max_batch_entries} per call "
            f"(send several smaller batches, or raise the server's "
            f"{how_to_set('max_batch_entries')})",
        )


def kind(value: int, field: str = "kind") -> Kind:
    try:
        return Kind(value)
    except ValueError:
        raise InvalidArgument(field, f"unknown value {value}; use one of KIND_*") from None


def if_version(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise InvalidArgument("if_version", f"must be >= 0 (0 = must not exist); got {value}")
    return value
