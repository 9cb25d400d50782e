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

from sharedctx.v1 import sharedctx_pb2 as pb

from ..compress import looks_binary
from ..errors import InvalidArgument, LimitExceeded
from ..fit import (
    FACTORS,
    Fill,
    Form,
    ScoringOptions,
    SelectionOptions,
    Strategy,
    resolve_weights,
    sizer_profile,
)
from ..model import (
    EntryMeta,
    KeysPage,
    Kind,
    NamespacesPage,
    NewEntry,
    Read,
    Removal,
    Renewal,
)
from ..services.fit_model import Filters, FitQuery
from ..settings import Limits, Settings

_NAMESPACE_RE = re.compile(r"[A-Za-z0-9._:/-]+")
# C0 and C1 control characters, DEL included.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_EMBED_MODES = (pb.EMBED_UNSPECIFIED, pb.EMBED_SYNC, pb.EMBED_ASYNC)
_STRATEGIES = {0: Strategy.SCORED, 1: Strategy.SCORED, 2: Strategy.RELEVANT, 3: Strategy.RECENT}
_FORMS = {0: Form.COMPRESSED, 1: Form.COMPRESSED, 2: Form.FULL, 3: Form.AUTO}
_FILLS = {0: Fill.SKIP, 1: Fill.SKIP, 2: Fill.STOP}
_ADAPTIVE = {0: None, 1: None, 2: "conservative", 3: "moderate", 4: "aggressive"}

# --- field rules ----------------------------------------------------------------------------


def namespace(value: str, limits: Limits) -> str:
    """A namespace is 1..max characters of [A-Za-z0-9._:/-]."""
    if not value:
        raise InvalidArgument("namespace", "is required (1-128 characters of [A-Za-z0-9._:/-])")
    if len(value) > limits.max_namespace_chars:
        raise InvalidArgument(
            "namespace",
            f"is {len(value)} characters; at most {limits.max_namespace_chars} are allowed",
        )
    if not _NAMESPACE_RE.fullmatch(value):
        bad = next(c for c in value if not _NAMESPACE_RE.fullmatch(c))
        raise InvalidArgument(
            "namespace", f"may only hold characters of [A-Za-z0-9._:/-]; found {bad!r}"
        )
    return value


def key(value: str, limits: Limits, field: str = "key") -> str:
    """A key is 1..max UTF-8 bytes without control characters."""
    if not value:
        raise InvalidArgument(field, "is required (1-512 bytes of UTF-8, no control characters)")
    size = _utf8_len(value, field)
    if size > limits.max_key_bytes:
        raise InvalidArgument(field, f"is {size} bytes; at most {limits.max_key_bytes} are allowed")
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
        raise LimitExceeded(
            "max_content_bytes",
            f"{field} is {size} bytes; the limit is {limits.max_content_bytes} "
            "(raise SHAREDCTX_MAX_CONTENT_BYTES or split the content)",
        )
    return size


def _short_text(value: str, limits: Limits, field: str) -> str:
    """Short metadata fields (role, agent_id, tool_name, thread, tags) are bounded, printable."""
    size = _utf8_len(value, field)
    cap = limits.max_tag_bytes if field == "tags" else limits.max_field_bytes
    if size > cap:
        raise InvalidArgument(field, f"is {size} bytes; at most {cap} are allowed")
    if _CONTROL_RE.search(value):
        raise InvalidArgument(field, "may not contain control characters")
    return value


def _tags(tags: Sequence[str], limits: Limits) -> tuple[str, ...]:
    if len(tags) > limits.max_tags:
        raise InvalidArgument("tags", f"has {len(tags)} tags; at most {limits.max_tags} allowed")
    return tuple(_short_text(t, limits, "tags") for t in tags)


def _importance(value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidArgument("importance", f"must be between 0 and 1; got {value}")
    return value


def _ttl_ms(ttl_seconds: int, settings: Settings) -> int:
    """The TTL in ms: the request's, else the server default; 0 = never expires."""
    limits = settings.limits
    if ttl_seconds < 0:
        raise InvalidArgument(
            "ttl_seconds", f"must be >= 0 (0 = server default); got {ttl_seconds}"
        )
    if ttl_seconds > limits.max_ttl_seconds:
        raise InvalidArgument(
            "ttl_seconds", f"is {ttl_seconds}; at most {limits.max_ttl_seconds} is allowed"
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
            "(send several smaller batches)",
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
    total = sum(e.stored_bytes for e in entries)
    if total > limits.max_batch_bytes:
        raise LimitExceeded(
            "max_batch_bytes",
            f"the batch holds {total} bytes of content; the limit is {limits.max_batch_bytes}",
        )
    return entries


def _entry(req: pb.PutRequest, settings: Settings) -> NewEntry:
    """One entry with the caller's metadata (token counts and forms are derived later)."""
    limits = settings.limits
    if req.embed not in _EMBED_MODES:
        raise InvalidArgument("embed", f"unknown value {req.embed}")
    entry_key = key(req.key, limits)
    size = content_size(req.content, limits)
    if looks_binary(req.content):
        raise InvalidArgument(
            "content",
            "looks binary (NUL bytes or mostly control characters); store text, "
            "e.g. base64-encode binary data",
        )
    compressed = req.compressed if req.HasField("compressed") else None
    comp_size = 0 if compressed is None else content_size(compressed, limits, "compressed")
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
    size = req.page_size or limits.default_page_size
    if size < 0:
        raise InvalidArgument("page_size", f"must be >= 0 (0 = default); got {size}")
    return KeysPage(ns, req.prefix, min(size, limits.max_page_size), req.page_token)


def namespaces(req: pb.NamespacesRequest, limits: Limits) -> NamespacesPage:
    """A Namespaces page: the prefix is namespace-shaped, the page size capped."""
    if req.prefix:
        if len(req.prefix) > limits.max_namespace_chars or not _NAMESPACE_RE.fullmatch(req.prefix):
            raise InvalidArgument(
                "prefix",
                f"must be at most {limits.max_namespace_chars} characters of [A-Za-z0-9._:/-]",
            )
    size = req.page_size or limits.default_page_size
    if size < 0:
        raise InvalidArgument("page_size", f"must be >= 0 (0 = default); got {size}")
    return NamespacesPage(req.prefix, min(size, limits.max_page_size), req.page_token)


def delete(req: pb.DeleteRequest, limits: Limits) -> Removal:
    """A Delete, conditional when if_version is given."""
    ns = namespace(req.namespace, limits)
    entry_key = key(req.key, limits)
    return Removal(
        ns, entry_key, _if_version(req.if_version if req.HasField("if_version") else None)
    )


# --- Fit ------------------------------------------------------------------------------------


def _enum(value: int, table: Mapping[int, object], name: str) -> object:
    if value not in table:
        raise InvalidArgument(name, f"unknown value {value}")
    return table[value]


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
            f"{limits.max_budget_tokens}",
        )
    content_size(req.query, limits, "query")
    strategy = _enum(req.strategy, _STRATEGIES, "strategy")
    if req.form == pb.FORM_EXCERPT:
        raise InvalidArgument(
            "form",
            "FORM_EXCERPT is a reply form: ask for compressed, full or auto "
            "(excerpts come back on their own unless excerpts is false)",
        )
    overrides = {f: getattr(req.weights, f) for f in FACTORS if req.weights.HasField(f)}
    weights = resolve_weights(req.preset or "default", overrides)
    if strategy is Strategy.SCORED and not weights.any():
        raise InvalidArgument("weights", "every weight is 0; give at least one factor a weight > 0")
    decay = req.recency_decay_rate if req.HasField("recency_decay_rate") else 1e-4
    if not math.isfinite(decay) or decay < 0:
        raise InvalidArgument("recency_decay_rate", f"must be a finite number >= 0; got {decay}")
    min_score = req.min_score if req.HasField("min_score") else 0.0
    if math.isnan(min_score):
        raise InvalidArgument("min_score", "must be a number")
    adaptive = _enum(req.adaptive, _ADAPTIVE, "adaptive")
    selection = SelectionOptions(
        budget_tokens=int(req.budget_tokens),
        keep_recent=req.keep_recent if req.HasField("keep_recent") else 2,
        fill=_enum(req.fill, _FILLS, "fill"),  # type: ignore[arg-type]
        max_entries=req.max_entries if req.HasField("max_entries") else None,
        adaptive=sizer_profile(str(adaptive)) if adaptive else None,
        form=_enum(req.form, _FORMS, "form"),  # type: ignore[arg-type]
        compress_threshold=(
            int(req.compress_threshold) if req.HasField("compress_threshold") else None
        ),
        min_score=min_score,
    )
    scoring = ScoringOptions(
        weights=tuple(float(w) for w in weights),
        recency_decay_rate=decay,
        expand_neighbours=req.expand_neighbours if req.HasField("expand_neighbours") else True,
    )
    return FitQuery(
        namespace=ns,
        query=req.query,
        strategy=strategy,  # type: ignore[arg-type]
        weights=weights,
        scoring=scoring,
        selection=selection,
        filters=_filters(req.filters),
        include_content=req.include_content,
        explain=req.explain,
        excerpts=settings.excerpts and (req.excerpts if req.HasField("excerpts") else True),
    )


def _filters(msg: pb.Filters) -> Filters:
    for kind in (*msg.include_kinds, *msg.exclude_kinds):
        if kind not in Kind._value2member_map_:
            raise InvalidArgument("filters", f"unknown kind {kind}")
    return Filters(
        include_kinds=frozenset(Kind(k) for k in msg.include_kinds),
        exclude_kinds=frozenset(Kind(k) for k in msg.exclude_kinds),
        include_tags=frozenset(msg.include_tags),
        exclude_tags=frozenset(msg.exclude_tags),
        include_agent_ids=frozenset(msg.include_agent_ids),
        exclude_agent_ids=frozenset(msg.exclude_agent_ids),
        threads=frozenset(msg.threads),
    )
