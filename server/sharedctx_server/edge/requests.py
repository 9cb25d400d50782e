"""Request messages in, validated domain values out: every check of every RPC, in one place.

Each error names the field it is about (`entries[3].ttl_seconds` inside a PutMany) and the
rule, as InvalidArgument, or the limit, as LimitExceeded; nothing reaches a service or Redis
before the whole request passed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from sharedctx.v1 import sharedctx_pb2 as pb

from ..compress import looks_binary
from ..compress.config import DEFAULT_CONFIG
from ..errors import InvalidArgument, LimitExceeded
from ..fit import (
    FACTORS,
    Fill,
    Form,
    ScoringOptions,
    SelectionOptions,
    SizerProfile,
    Strategy,
    resolve_weights,
    sizer_profile,
)
from ..fit.weights import WEIGHT_PRESETS
from ..model import (
    NAMESPACE_CHARS,
    EntryMeta,
    Following,
    KeysPage,
    Kind,
    NamespacesPage,
    NewEntry,
    Read,
    Reembedding,
    Removal,
    Renewal,
    ResumePoint,
)
from ..services.fit_model import Filters, FitQuery
from ..settings import Limits, Settings, how_to_set
from ..state.records import (
    NAMESPACES_LISTING,
    decode_page_token,
    decode_resume_token,
    keys_listing,
)

T = TypeVar("T")

_NAMESPACE_RE = re.compile(f"{NAMESPACE_CHARS}+")
# C0 and C1 control characters, DEL included.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_EMBED_MODES = (pb.EMBED_UNSPECIFIED, pb.EMBED_SYNC, pb.EMBED_ASYNC)
# Each request enum's values, UNSPECIFIED mapped to the default the proto documents.
_STRATEGIES: Mapping[int, Strategy] = {
    pb.STRATEGY_UNSPECIFIED: Strategy.SCORED,
    pb.STRATEGY_SCORED: Strategy.SCORED,
    pb.STRATEGY_RELEVANT: Strategy.RELEVANT,
    pb.STRATEGY_RECENT: Strategy.RECENT,
}
# FORM_EXCERPT is absent on purpose: it is a reply form (fit() says so before looking here).
_FORMS: Mapping[int, Form] = {
    pb.FORM_UNSPECIFIED: Form.COMPRESSED,
    pb.FORM_COMPRESSED: Form.COMPRESSED,
    pb.FORM_FULL: Form.FULL,
    pb.FORM_AUTO: Form.AUTO,
}
_FILLS: Mapping[int, Fill] = {
    pb.FILL_UNSPECIFIED: Fill.SKIP,
    pb.FILL_SKIP: Fill.SKIP,
    pb.FILL_STOP: Fill.STOP,
}
_ADAPTIVE: Mapping[int, str | None] = {
    pb.ADAPTIVE_UNSPECIFIED: None,
    pb.ADAPTIVE_NONE: None,
    pb.ADAPTIVE_CONSERVATIVE: "conservative",
    pb.ADAPTIVE_MODERATE: "moderate",
    pb.ADAPTIVE_AGGRESSIVE: "aggressive",
}
# Fit's optional counts, each >= 0, with what the rule means for it.
_FIT_COUNTS = {
    "keep_recent": "must be >= 0 (0 = none); got {}",
    "max_entries": "must be >= 0 (or absent for no cap); got {}",
    "compress_threshold": "must be >= 0; got {}",
}

# --- field rules ----------------------------------------------------------------------------


def _set_by(setting: str) -> str:
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
            + _set_by("max_namespace_chars"),
        )
    if not _NAMESPACE_RE.fullmatch(value):
        bad = next(c for c in value if not _NAMESPACE_RE.fullmatch(c))
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
    size = _utf8_len(value, field)
    if size > limits.max_key_bytes:
        raise InvalidArgument(
            field,
            f"is {size} bytes; at most {limits.max_key_bytes} are allowed"
            + _set_by("max_key_bytes"),
        )
    found = _CONTROL_RE.search(value)
    if found:
        raise InvalidArgument(
            field, f"may not contain control characters; found {found.group()!r} in {value!r}"
        )
    return value


def content_size(value: str, limits: Limits, field: str = "content") -> int:
    """Content fits the size limit; returns its UTF-8 length."""
    size = _utf8_len(value, field)
    if size > limits.max_content_bytes:
        # A query is asked, not stored: shortening it is the fix, not splitting it.
        fix = "shorten the query" if field == "query" else "split the content"
        raise LimitExceeded(
            "max_content_bytes",
            f"{field} is {size} bytes; the limit is {limits.max_content_bytes} ({fix}, or "
            f"raise the server's {how_to_set('max_content_bytes')})",
        )
    return size


def _short_text(value: str, limits: Limits, field: str, cap: int | None = None) -> str:
    """Short metadata fields (role, agent_id, tool_name, thread, tags) are bounded, printable."""
    size = _utf8_len(value, field)
    setting = "max_field_bytes" if cap is None else "max_tag_bytes"
    cap = limits.max_field_bytes if cap is None else cap
    if size > cap:
        raise InvalidArgument(
            field, f"is {size} bytes; at most {cap} are allowed" + _set_by(setting)
        )
    if _CONTROL_RE.search(value):
        raise InvalidArgument(field, "may not contain control characters")
    return value


def _tags(tags: Sequence[str], limits: Limits) -> tuple[str, ...]:
    if len(tags) > limits.max_tags:
        raise InvalidArgument(
            "tags", f"has {len(tags)} tags; at most {limits.max_tags} allowed" + _set_by("max_tags")
        )
    for i, tag in enumerate(tags):
        if not tag:  # a filter on it could never be written; most likely a caller's slip
            raise InvalidArgument(f"tags[{i}]", "is empty; a tag needs at least one character")
        _short_text(tag, limits, f"tags[{i}]", limits.max_tag_bytes)
    return tuple(dict.fromkeys(tags))  # a tag given twice is one tag


def _importance(value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidArgument("importance", f"must be between 0 and 1; got {value}")
    return value + 0.0  # -0.0 is 0 (Put echoed -0, Get read back 0.0)


def _ttl_ms(ttl_seconds: int, settings: Settings) -> int:
    """The TTL in ms: the request's, else the server default; 0 = never expires."""
    limits = settings.limits
    if ttl_seconds < 0:
        raise InvalidArgument(
            "ttl_seconds", f"must be >= 0 (0 = server default); got {ttl_seconds}"
        )
    if ttl_seconds > limits.max_ttl_seconds:
        raise InvalidArgument(
            "ttl_seconds",
            f"is {ttl_seconds}; at most {limits.max_ttl_seconds} is allowed"
            + _set_by("max_ttl_seconds"),
        )
    return (ttl_seconds or settings.default_ttl_seconds) * 1000


def _if_version(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise InvalidArgument("if_version", f"must be >= 0 (0 = must not exist); got {value}")
    return value


def _batch(count: int, limits: Limits, field: str = "entries") -> None:
    if count == 0:
        raise InvalidArgument(field, "must hold at least one item")
    if count > limits.max_batch_entries:
        raise LimitExceeded(
            "max_batch_entries",
            f"{field} holds {count} items; the limit is {limits.max_batch_entries} per call "
            f"(send several smaller batches, or raise the server's "
            f"{how_to_set('max_batch_entries')})",
        )


def _kind(value: int, field: str = "kind") -> Kind:
    try:
        return Kind(value)
    except ValueError:
        raise InvalidArgument(field, f"unknown value {value}; use one of KIND_*") from None


def _event_ms(req: pb.PutRequest) -> int | None:
    """The entry's event time in ms, or None for "now" (decided by Redis's clock)."""
    if not req.HasField("event_time"):
        return None
    ts = req.event_time
    if ts.seconds < 0 or ts.seconds > 253402300799 or not 0 <= ts.nanos < 1_000_000_000:
        raise InvalidArgument("event_time", "must be a valid time between 1970 and 9999")
    return int(ts.ToMilliseconds())


def _utf8_len(value: str, field: str) -> int:
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        # Lone surrogates cannot be stored as UTF-8 (protobuf refuses them on the wire anyway).
        raise InvalidArgument(field, "is not valid UTF-8 text") from None


# --- writes ---------------------------------------------------------------------------------


@contextmanager
def _fields_of(path: str) -> Iterator[None]:
    """Errors raised inside name their field under `path` (a PutMany's `entries[i]`), so the
    per-field checks need not know whether they look at a Put or at one entry of a batch."""
    if not path:
        yield
        return
    try:
        yield
    except InvalidArgument as exc:
        raise InvalidArgument(f"{path}.{exc.field}", exc.rule) from None
    except LimitExceeded as exc:
        raise LimitExceeded(exc.limit, f"{path}: {exc}", exc.retry_after_s) from None


def put(req: pb.PutRequest, settings: Settings) -> tuple[str, list[NewEntry]]:
    """A Put as (namespace, [entry])."""
    ns = namespace(req.namespace, settings.limits)
    return ns, _entries([req], settings, batch=False)


def put_many(req: pb.PutManyRequest, settings: Settings) -> tuple[str, list[NewEntry]]:
    """A PutMany as (namespace, entries); its items' own namespaces must be empty or the same."""
    ns = namespace(req.namespace, settings.limits)
    for i, item in enumerate(req.entries):
        if item.namespace and item.namespace != ns:
            raise InvalidArgument(
                f"entries[{i}].namespace", "must be empty or equal to the request's namespace"
            )
    return ns, _entries(req.entries, settings, batch=True)


def _entries(requests: Sequence[pb.PutRequest], settings: Settings, batch: bool) -> list[NewEntry]:
    """Every entry checked before any is written. `batch`: errors name `entries[i].<field>`
    (a Put's name the field alone), whatever the number of entries."""
    limits = settings.limits
    _batch(len(requests), limits)
    seen: set[str] = set()
    entries = []
    for i, req in enumerate(requests):
        with _fields_of(f"entries[{i}]" if batch else ""):
            entry = _entry(req, settings)
            if entry.key in seen:
                raise InvalidArgument("key", f"{entry.key!r} appears twice in one PutMany")
        seen.add(entry.key)
        entries.append(entry)
    # A Put is bounded by max_content_bytes per form; max_batch_bytes is about PutMany.
    total = sum(e.stored_bytes for e in entries)
    if batch and total > limits.max_batch_bytes:
        raise LimitExceeded(
            "max_batch_bytes",
            f"the batch holds {total} bytes of content; the limit is {limits.max_batch_bytes}"
            + _set_by("max_batch_bytes"),
        )
    return entries


# looks_binary's threshold, for the message.
BINARY_SHARE = DEFAULT_CONFIG.binary_control_share


def _text(value: str, field: str) -> None:
    """Refuse binary data in disguise (terminal colour codes are text: looks_binary)."""
    if looks_binary(value):
        raise InvalidArgument(
            field,
            f"looks binary (a NUL byte, or more than {BINARY_SHARE:.0%} control characters); "
            "store text, e.g. base64-encode binary data",
        )


def _entry(req: pb.PutRequest, settings: Settings) -> NewEntry:
    """One entry with the caller's metadata (token counts and forms are derived later)."""
    limits = settings.limits
    if req.embed not in _EMBED_MODES:
        raise InvalidArgument("embed", f"unknown value {req.embed}")
    entry_key = key(req.key, limits)
    size = content_size(req.content, limits)
    _text(req.content, "content")
    compressed = req.compressed if req.HasField("compressed") else None
    comp_size = 0 if compressed is None else content_size(compressed, limits, "compressed")
    if compressed is not None:
        _text(compressed, "compressed")  # what Get and Fit return by default, and embed
        if not compressed and req.content:
            # Fit would return the entry as nothing at all, at 0 tokens.
            raise InvalidArgument(
                "compressed",
                "is empty while the content is not; leave it out and the server compresses "
                "the content",
            )
    meta = EntryMeta(
        kind=_kind(req.kind),
        role=_short_text(req.role, limits, "role"),
        agent_id=_short_text(req.agent_id, limits, "agent_id"),
        tool_name=_short_text(req.tool_name, limits, "tool_name"),
        tags=_tags(req.tags, limits),
        importance=_importance(req.importance) if req.HasField("importance") else 0.0,
        thread=_short_text(req.thread, limits, "thread"),
        original_bytes=size,
        compressed_bytes=size if compressed is None else comp_size,
        compressor="none" if compressed is None else "caller",
    )
    return NewEntry(
        key=entry_key,
        content=req.content,
        compressed=compressed,
        meta=meta,
        ttl_ms=_ttl_ms(req.ttl_seconds, settings),
        event_ms=_event_ms(req),
        if_version=_if_version(req.if_version if req.HasField("if_version") else None),
        embed_later=req.embed == pb.EMBED_ASYNC,
    )


# --- reads ----------------------------------------------------------------------------------


def get(req: pb.GetRequest, limits: Limits) -> Read:
    """A Get: one key."""
    ns = namespace(req.namespace, limits)
    return Read(ns, (key(req.key, limits),), req.full)


def get_many(req: pb.GetManyRequest, limits: Limits) -> Read:
    """A GetMany: 1..max_batch_entries keys."""
    ns = namespace(req.namespace, limits)
    _batch(len(req.keys), limits, "keys")
    return Read(ns, tuple(key(k, limits, f"keys[{i}]") for i, k in enumerate(req.keys)), req.full)


def touch(req: pb.TouchRequest, limits: Limits) -> Renewal:
    """A Touch: 1..max_batch_entries keys."""
    ns = namespace(req.namespace, limits)
    _batch(len(req.keys), limits, "keys")
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
        if len(req.prefix) > limits.max_namespace_chars or not _NAMESPACE_RE.fullmatch(req.prefix):
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
        ns, entry_key, _if_version(req.if_version if req.HasField("if_version") else None)
    )


def stats(req: pb.StatsRequest, limits: Limits) -> str:
    """A Stats: the namespace to total."""
    return namespace(req.namespace, limits)


def clear(req: pb.ClearRequest, limits: Limits) -> str:
    """A Clear: the namespace to empty."""
    return namespace(req.namespace, limits)


# --- streams --------------------------------------------------------------------------------


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


# --- Fit ------------------------------------------------------------------------------------


def _enum(value: int, table: Mapping[int, T], name: str) -> T:
    if value not in table:
        raise InvalidArgument(name, f"unknown value {value}")
    return table[value]


def _present(msg: Any, names: Sequence[str]) -> dict[str, Any]:
    """The optional fields the caller set, by name. Absent ones are left out so that the
    options' own defaults apply: they are defined once, in the fit package."""
    return {name: getattr(msg, name) for name in names if msg.HasField(name)}


def fit(req: pb.FitRequest, settings: Settings) -> FitQuery:
    """A Fit request (docs/fit.md): budget within the server's limit, known enums, weights
    and numbers that mean something."""
    limits = settings.limits
    ns = namespace(req.namespace, limits)
    if req.budget_tokens <= 0:
        raise InvalidArgument("budget_tokens", f"must be > 0; got {req.budget_tokens}")
    if req.budget_tokens > limits.max_budget_tokens:
        raise LimitExceeded(
            "max_budget_tokens",
            f"budget_tokens {req.budget_tokens} exceeds the server's limit of "
            f"{limits.max_budget_tokens}" + _set_by("max_budget_tokens"),
        )
    content_size(req.query, limits, "query")
    strategy = _enum(req.strategy, _STRATEGIES, "strategy")
    if req.form == pb.FORM_EXCERPT:
        raise InvalidArgument(
            "form",
            "FORM_EXCERPT is a reply form: ask for compressed, full or auto "
            "(excerpts come back on their own unless excerpts is false)",
        )
    weights = _weights(req)
    if strategy is Strategy.SCORED and not weights.any():
        raise InvalidArgument("weights", "every weight is 0; give at least one factor a weight > 0")
    scoring = _scoring(req, weights)
    selection = _selection(req)
    return FitQuery(
        namespace=ns,
        query=req.query,
        strategy=strategy,
        weights=weights,
        scoring=scoring,
        selection=selection,
        filters=_filters(req.filters),
        include_content=req.include_content,
        explain=req.explain,
        # Absent means on (within what the server allows).
        excerpts=settings.excerpts and (not req.HasField("excerpts") or req.excerpts),
    )


def _weights(req: pb.FitRequest) -> npt.NDArray[np.float64]:
    """The preset's weights with the request's overrides, each named as `weights.<factor>`."""
    if req.preset and req.preset not in WEIGHT_PRESETS:
        known = ", ".join(WEIGHT_PRESETS)
        raise InvalidArgument("preset", f"unknown preset {req.preset!r}; known: {known}")
    overrides = _present(req.weights, FACTORS)
    for factor, weight in overrides.items():
        if not math.isfinite(weight) or weight < 0:
            raise InvalidArgument(
                f"weights.{factor}", f"must be a finite number >= 0; got {weight}"
            )
    return resolve_weights(req.preset, overrides)


def _scoring(req: pb.FitRequest, weights: npt.NDArray[np.float64]) -> ScoringOptions:
    given = _present(req, ("recency_decay_rate", "expand_neighbours"))
    decay = given.get("recency_decay_rate")
    if decay is not None and (not math.isfinite(decay) or decay < 0):
        raise InvalidArgument("recency_decay_rate", f"must be a finite number >= 0; got {decay}")
    return ScoringOptions(weights=tuple(float(w) for w in weights), **given)


def _selection(req: pb.FitRequest) -> SelectionOptions:
    given = _present(req, ("min_score", *_FIT_COUNTS))
    min_score = given.get("min_score")
    if min_score is not None and math.isnan(min_score):
        raise InvalidArgument("min_score", "must be a number")
    for name, rule in _FIT_COUNTS.items():
        count = given.get(name)
        if count is not None and count < 0:
            raise InvalidArgument(name, rule.format(count))
    return SelectionOptions(
        budget_tokens=int(req.budget_tokens),
        fill=_enum(req.fill, _FILLS, "fill"),
        adaptive=_adaptive(req.adaptive),
        form=_enum(req.form, _FORMS, "form"),
        **given,
    )


def _adaptive(value: int) -> SizerProfile | None:
    profile = _enum(value, _ADAPTIVE, "adaptive")
    return sizer_profile(profile) if profile else None


def _filters(msg: pb.Filters) -> Filters:
    return Filters(
        include_kinds=_kinds(msg.include_kinds, "filters.include_kinds"),
        exclude_kinds=_kinds(msg.exclude_kinds, "filters.exclude_kinds"),
        include_tags=frozenset(msg.include_tags),
        exclude_tags=frozenset(msg.exclude_tags),
        include_agent_ids=frozenset(msg.include_agent_ids),
        exclude_agent_ids=frozenset(msg.exclude_agent_ids),
        threads=frozenset(msg.threads),
    )


def _kinds(values: Sequence[int], field: str) -> frozenset[Kind]:
    return frozenset(_kind(k, f"{field}[{i}]") for i, k in enumerate(values))
