"""Request rules shared by every RPC: namespaces, keys, sizes (InvalidArgument, LimitExceeded)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ..errors import InvalidArgument, LimitExceeded
from ..settings import Limits

_NAMESPACE_RE = re.compile(r"[A-Za-z0-9._:/-]+")
# C0 and C1 control characters, DEL included.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_namespace(namespace: str, limits: Limits) -> str:
    """A namespace is 1..max characters of [A-Za-z0-9._:/-]."""
    if not namespace:
        raise InvalidArgument("namespace", "is required (1-128 characters of [A-Za-z0-9._:/-])")
    if len(namespace) > limits.max_namespace_chars:
        raise InvalidArgument(
            "namespace",
            f"is {len(namespace)} characters; at most {limits.max_namespace_chars} are allowed",
        )
    if not _NAMESPACE_RE.fullmatch(namespace):
        bad = next(c for c in namespace if not _NAMESPACE_RE.fullmatch(c))
        raise InvalidArgument(
            "namespace", f"may only hold characters of [A-Za-z0-9._:/-]; found {bad!r}"
        )
    return namespace


def check_key(key: str, limits: Limits, field: str = "key") -> str:
    """A key is 1..max UTF-8 bytes without control characters."""
    if not key:
        raise InvalidArgument(field, "is required (1-512 bytes of UTF-8, no control characters)")
    size = _utf8_len(key, field)
    if size > limits.max_key_bytes:
        raise InvalidArgument(field, f"is {size} bytes; at most {limits.max_key_bytes} are allowed")
    found = _CONTROL_RE.search(key)
    if found:
        raise InvalidArgument(
            field, f"may not contain control characters; found {found.group()!r} in {key!r}"
        )
    return key


def check_content(content: str, limits: Limits, field: str = "content") -> int:
    """Content fits the size limit; returns its UTF-8 length."""
    size = _utf8_len(content, field)
    if size > limits.max_content_bytes:
        raise LimitExceeded(
            "max_content_bytes",
            f"{field} is {size} bytes; the limit is {limits.max_content_bytes} "
            "(raise SHAREDCTX_MAX_CONTENT_BYTES or split the content)",
        )
    return size


def check_short_text(value: str, limits: Limits, field: str) -> str:
    """Short metadata fields (role, agent_id, tool_name, thread, tags) are bounded, printable."""
    size = _utf8_len(value, field)
    cap = limits.max_tag_bytes if field == "tags" else limits.max_field_bytes
    if size > cap:
        raise InvalidArgument(field, f"is {size} bytes; at most {cap} are allowed")
    if _CONTROL_RE.search(value):
        raise InvalidArgument(field, "may not contain control characters")
    return value


def check_tags(tags: Sequence[str], limits: Limits) -> list[str]:
    """At most max_tags tags, each a short text."""
    if len(tags) > limits.max_tags:
        raise InvalidArgument("tags", f"has {len(tags)} tags; at most {limits.max_tags} allowed")
    return [check_short_text(t, limits, "tags") for t in tags]


def check_importance(value: float) -> float:
    """Importance is a finite number in [0, 1]."""
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidArgument("importance", f"must be between 0 and 1; got {value}")
    return value


def check_ttl(ttl_seconds: int, limits: Limits) -> int:
    """A TTL is >= 0 (0 = the server default) and at most max_ttl_seconds."""
    if ttl_seconds < 0:
        raise InvalidArgument(
            "ttl_seconds", f"must be >= 0 (0 = server default); got {ttl_seconds}"
        )
    if ttl_seconds > limits.max_ttl_seconds:
        raise InvalidArgument(
            "ttl_seconds", f"is {ttl_seconds}; at most {limits.max_ttl_seconds} is allowed"
        )
    return ttl_seconds


def check_if_version(value: int | None) -> int | None:
    """A compare-and-set version is >= 0 when given."""
    if value is not None and value < 0:
        raise InvalidArgument("if_version", f"must be >= 0 (0 = must not exist); got {value}")
    return value


def check_batch(count: int, limits: Limits, field: str = "entries") -> int:
    """Batches hold 1..max_batch_entries items."""
    if count == 0:
        raise InvalidArgument(field, "must hold at least one item")
    if count > limits.max_batch_entries:
        raise LimitExceeded(
            "max_batch_entries",
            f"{field} holds {count} items; the limit is {limits.max_batch_entries} per call "
            "(send several smaller batches)",
        )
    return count


def _utf8_len(value: str, field: str) -> int:
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        # Lone surrogates cannot be stored as UTF-8 (protobuf refuses them on the wire anyway).
        raise InvalidArgument(field, "is not valid UTF-8 text") from None
