"""Requests that read, list, remove or follow entries: Get, GetMany, Touch, Keys,
Namespaces, Delete, Stats, Clear, Watch and Reembed.
"""

from __future__ import annotations

from sharedctx.v1 import sharedctx_pb2 as pb

from ...errors import InvalidArgument
from ...model import (
    NAMESPACE_CHARS,
    Following,
    KeysPage,
    NamespacesPage,
    Read,
    Reembedding,
    Removal,
    Renewal,
    ResumePoint,
)
from ...settings import Limits
from ...state.records import (
    NAMESPACES_LISTING,
    decode_page_token,
    decode_resume_token,
    keys_listing,
)
from .fields import NAMESPACE_RE, batch_size, if_version, key, namespace


def get(req: pb.GetRequest, limits: Limits) -> Read:
    """A Get: one key."""
    ns = namespace(req.namespace, limits)
    return Read(ns, (key(req.key, limits),), req.full)


def get_many(req: pb.GetManyRequest, limits: Limits) -> Read:
    """A GetMany: 1..max_batch_entries keys."""
    ns = namespace(req.namespace, limits)
    batch_size(len(req.keys), limits, "keys")
    return Read(ns, tuple(key(k, limits, f"keys[{i}]") for i, k in enumerate(req.keys)), req.full)


def touch(req: pb.TouchRequest, limits: Limits) -> Renewal:
    """A Touch: 1..max_batch_entries keys."""
    ns = namespace(req.namespace, limits)
    batch_size(len(req.keys), limits, "keys")
    return Renewal(ns, tuple(key(k, limits, f"keys[{i}]") for i, k in enumerate(req.keys)))


def keys(req: pb.KeysRequest, limits: Limits) -> KeysPage:
    """A Keys page: the prefix is key-shaped, the page size capped at max_page_size."""
    ns = namespace(req.namespace, limits)
    if req.prefix:
        key(req.prefix, limits, "prefix")
    size = _page_size(req.page_size, limits)
    return KeysPage(
        ns, req.prefix, size, _page_cursor(req.page_token, req.prefix, keys_listing(ns))
    )


def namespaces(req: pb.NamespacesRequest, limits: Limits) -> NamespacesPage:
    """A Namespaces page: the prefix is namespace-shaped, the page size capped."""
    if req.prefix:
        if len(req.prefix) > limits.max_namespace_chars or not NAMESPACE_RE.fullmatch(req.prefix):
            raise InvalidArgument(
                "prefix",
                f"must be at most {limits.max_namespace_chars} characters of {NAMESPACE_CHARS}",
            )
    size = _page_size(req.page_size, limits)
    return NamespacesPage(
        req.prefix, size, _page_cursor(req.page_token, req.prefix, NAMESPACES_LISTING)
    )


def _page_size(requested: int, limits: Limits) -> int:
    size = requested or limits.default_page_size
    if size < 0:
        raise InvalidArgument("page_size", f"must be >= 0 (0 = default); got {size}")
    return min(size, limits.max_page_size)


def _page_cursor(token: str, prefix: str, listing: str) -> str | None:
    """The position a page token carries (None: the first page). A token of another listing
    (another namespace's keys) or of a listing with another prefix is refused: resuming from
    it would skip names, or list names outside the prefix."""
    try:
        after = decode_page_token(token, listing)
    except ValueError:
        rpc = "Namespaces" if listing == NAMESPACES_LISTING else "Keys for this namespace"
        raise InvalidArgument("page_token", f"is not a token returned by {rpc}") from None
    if after is not None and not after.startswith(prefix):
        raise InvalidArgument("page_token", "belongs to a listing with a different prefix")
    return after


def delete(req: pb.DeleteRequest, limits: Limits) -> Removal:
    """A Delete, conditional when if_version is given."""
    ns = namespace(req.namespace, limits)
    entry_key = key(req.key, limits)
    return Removal(
        ns, entry_key, if_version(req.if_version if req.HasField("if_version") else None)
    )


def stats(req: pb.StatsRequest, limits: Limits) -> str:
    """A Stats: the namespace to total."""
    return namespace(req.namespace, limits)


def clear(req: pb.ClearRequest, limits: Limits) -> str:
    """A Clear: the namespace to empty."""
    return namespace(req.namespace, limits)


def watch(req: pb.WatchRequest, limits: Limits) -> Following:
    """A Watch, from the change after its resume token (or from now without one)."""
    ns = namespace(req.namespace, limits)
    return Following(ns, _resume_point(req.resume_token), req.include_touches)


def _resume_point(token: str) -> ResumePoint | None:
    if not token:
        return None
    try:
        return decode_resume_token(token)
    except ValueError:
        raise InvalidArgument("resume_token", "is not a token returned by Watch") from None


def reembed(req: pb.ReembedRequest, limits: Limits) -> Reembedding:
    """A Reembed of one namespace."""
    return Reembedding(namespace(req.namespace, limits), req.force)
