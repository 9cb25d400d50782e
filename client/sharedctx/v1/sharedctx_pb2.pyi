import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KIND_UNSPECIFIED: _ClassVar[Kind]
    KIND_MESSAGE: _ClassVar[Kind]
    KIND_TOOL_OUTPUT: _ClassVar[Kind]
    KIND_LOG: _ClassVar[Kind]
    KIND_DOCUMENT: _ClassVar[Kind]
    KIND_NOTE: _ClassVar[Kind]

class EmbedMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EMBED_UNSPECIFIED: _ClassVar[EmbedMode]
    EMBED_SYNC: _ClassVar[EmbedMode]
    EMBED_ASYNC: _ClassVar[EmbedMode]

class Strategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRATEGY_UNSPECIFIED: _ClassVar[Strategy]
    STRATEGY_SCORED: _ClassVar[Strategy]
    STRATEGY_RELEVANT: _ClassVar[Strategy]
    STRATEGY_RECENT: _ClassVar[Strategy]

class Form(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FORM_UNSPECIFIED: _ClassVar[Form]
    FORM_COMPRESSED: _ClassVar[Form]
    FORM_FULL: _ClassVar[Form]
    FORM_AUTO: _ClassVar[Form]
    FORM_EXCERPT: _ClassVar[Form]

class Fill(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FILL_UNSPECIFIED: _ClassVar[Fill]
    FILL_SKIP: _ClassVar[Fill]
    FILL_STOP: _ClassVar[Fill]

class Adaptive(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ADAPTIVE_UNSPECIFIED: _ClassVar[Adaptive]
    ADAPTIVE_NONE: _ClassVar[Adaptive]
    ADAPTIVE_CONSERVATIVE: _ClassVar[Adaptive]
    ADAPTIVE_MODERATE: _ClassVar[Adaptive]
    ADAPTIVE_AGGRESSIVE: _ClassVar[Adaptive]
KIND_UNSPECIFIED: Kind
KIND_MESSAGE: Kind
KIND_TOOL_OUTPUT: Kind
KIND_LOG: Kind
KIND_DOCUMENT: Kind
KIND_NOTE: Kind
EMBED_UNSPECIFIED: EmbedMode
EMBED_SYNC: EmbedMode
EMBED_ASYNC: EmbedMode
STRATEGY_UNSPECIFIED: Strategy
STRATEGY_SCORED: Strategy
STRATEGY_RELEVANT: Strategy
STRATEGY_RECENT: Strategy
FORM_UNSPECIFIED: Form
FORM_COMPRESSED: Form
FORM_FULL: Form
FORM_AUTO: Form
FORM_EXCERPT: Form
FILL_UNSPECIFIED: Fill
FILL_SKIP: Fill
FILL_STOP: Fill
ADAPTIVE_UNSPECIFIED: Adaptive
ADAPTIVE_NONE: Adaptive
ADAPTIVE_CONSERVATIVE: Adaptive
ADAPTIVE_MODERATE: Adaptive
ADAPTIVE_AGGRESSIVE: Adaptive

class Entry(_message.Message):
    __slots__ = ("key", "content", "full", "kind", "role", "agent_id", "tool_name", "tags", "importance", "thread", "version", "created_at", "updated_at", "event_time", "expires_at", "original_tokens", "compressed_tokens", "original_bytes", "compressed_bytes", "compressor")
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    THREAD_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_BYTES_FIELD_NUMBER: _ClassVar[int]
    COMPRESSOR_FIELD_NUMBER: _ClassVar[int]
    key: str
    content: str
    full: bool
    kind: Kind
    role: str
    agent_id: str
    tool_name: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    importance: float
    thread: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    event_time: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    original_tokens: int
    compressed_tokens: int
    original_bytes: int
    compressed_bytes: int
    compressor: str
    def __init__(self, key: _Optional[str] = ..., content: _Optional[str] = ..., full: _Optional[bool] = ..., kind: _Optional[_Union[Kind, str]] = ..., role: _Optional[str] = ..., agent_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., importance: _Optional[float] = ..., thread: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., original_tokens: _Optional[int] = ..., compressed_tokens: _Optional[int] = ..., original_bytes: _Optional[int] = ..., compressed_bytes: _Optional[int] = ..., compressor: _Optional[str] = ...) -> None: ...

class PutRequest(_message.Message):
    __slots__ = ("namespace", "key", "content", "ttl_seconds", "compressed", "kind", "role", "agent_id", "tool_name", "tags", "importance", "event_time", "thread", "if_version", "embed")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    THREAD_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    EMBED_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    key: str
    content: str
    ttl_seconds: int
    compressed: str
    kind: Kind
    role: str
    agent_id: str
    tool_name: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    importance: float
    event_time: _timestamp_pb2.Timestamp
    thread: str
    if_version: int
    embed: EmbedMode
    def __init__(self, namespace: _Optional[str] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., ttl_seconds: _Optional[int] = ..., compressed: _Optional[str] = ..., kind: _Optional[_Union[Kind, str]] = ..., role: _Optional[str] = ..., agent_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., importance: _Optional[float] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., thread: _Optional[str] = ..., if_version: _Optional[int] = ..., embed: _Optional[_Union[EmbedMode, str]] = ...) -> None: ...

class PutResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class PutManyRequest(_message.Message):
    __slots__ = ("namespace", "entries")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    entries: _containers.RepeatedCompositeFieldContainer[PutRequest]
    def __init__(self, namespace: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[PutRequest, _Mapping]]] = ...) -> None: ...

class PutManyResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[Entry]
    def __init__(self, entries: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ...) -> None: ...

class GetRequest(_message.Message):
    __slots__ = ("namespace", "key", "full")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    key: str
    full: bool
    def __init__(self, namespace: _Optional[str] = ..., key: _Optional[str] = ..., full: _Optional[bool] = ...) -> None: ...

class GetResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class GetManyRequest(_message.Message):
    __slots__ = ("namespace", "keys", "full")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    keys: _containers.RepeatedScalarFieldContainer[str]
    full: bool
    def __init__(self, namespace: _Optional[str] = ..., keys: _Optional[_Iterable[str]] = ..., full: _Optional[bool] = ...) -> None: ...

class GetManyResponse(_message.Message):
    __slots__ = ("entries", "missing")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[Entry]
    missing: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, entries: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ..., missing: _Optional[_Iterable[str]] = ...) -> None: ...

class KeysRequest(_message.Message):
    __slots__ = ("namespace", "prefix", "page_size", "page_token")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    prefix: str
    page_size: int
    page_token: str
    def __init__(self, namespace: _Optional[str] = ..., prefix: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class KeysResponse(_message.Message):
    __slots__ = ("keys", "next_page_token")
    KEYS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedScalarFieldContainer[str]
    next_page_token: str
    def __init__(self, keys: _Optional[_Iterable[str]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("namespace", "key", "if_version")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    key: str
    if_version: int
    def __init__(self, namespace: _Optional[str] = ..., key: _Optional[str] = ..., if_version: _Optional[int] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class TouchRequest(_message.Message):
    __slots__ = ("namespace", "keys")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., keys: _Optional[_Iterable[str]] = ...) -> None: ...

class TouchedEntry(_message.Message):
    __slots__ = ("key", "expires_at", "version")
    KEY_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    key: str
    expires_at: _timestamp_pb2.Timestamp
    version: int
    def __init__(self, key: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...

class TouchResponse(_message.Message):
    __slots__ = ("entries", "missing")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[TouchedEntry]
    missing: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, entries: _Optional[_Iterable[_Union[TouchedEntry, _Mapping]]] = ..., missing: _Optional[_Iterable[str]] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ("namespace",)
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    def __init__(self, namespace: _Optional[str] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("entries", "original_tokens", "compressed_tokens", "tokens_saved", "savings_percent", "bytes_stored")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_SAVED_FIELD_NUMBER: _ClassVar[int]
    SAVINGS_PERCENT_FIELD_NUMBER: _ClassVar[int]
    BYTES_STORED_FIELD_NUMBER: _ClassVar[int]
    entries: int
    original_tokens: int
    compressed_tokens: int
    tokens_saved: int
    savings_percent: float
    bytes_stored: int
    def __init__(self, entries: _Optional[int] = ..., original_tokens: _Optional[int] = ..., compressed_tokens: _Optional[int] = ..., tokens_saved: _Optional[int] = ..., savings_percent: _Optional[float] = ..., bytes_stored: _Optional[int] = ...) -> None: ...

class ClearRequest(_message.Message):
    __slots__ = ("namespace",)
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    def __init__(self, namespace: _Optional[str] = ...) -> None: ...

class ClearResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class Weights(_message.Message):
    __slots__ = ("recency", "semantic_similarity", "toin_importance", "error_indicator", "forward_reference", "token_density", "lexical_relevance")
    RECENCY_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    TOIN_IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    ERROR_INDICATOR_FIELD_NUMBER: _ClassVar[int]
    FORWARD_REFERENCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_DENSITY_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    recency: float
    semantic_similarity: float
    toin_importance: float
    error_indicator: float
    forward_reference: float
    token_density: float
    lexical_relevance: float
    def __init__(self, recency: _Optional[float] = ..., semantic_similarity: _Optional[float] = ..., toin_importance: _Optional[float] = ..., error_indicator: _Optional[float] = ..., forward_reference: _Optional[float] = ..., token_density: _Optional[float] = ..., lexical_relevance: _Optional[float] = ...) -> None: ...

class Filters(_message.Message):
    __slots__ = ("include_kinds", "exclude_kinds", "include_tags", "exclude_tags", "include_agent_ids", "exclude_agent_ids", "threads")
    INCLUDE_KINDS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_KINDS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TAGS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_TAGS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    include_kinds: _containers.RepeatedScalarFieldContainer[Kind]
    exclude_kinds: _containers.RepeatedScalarFieldContainer[Kind]
    include_tags: _containers.RepeatedScalarFieldContainer[str]
    exclude_tags: _containers.RepeatedScalarFieldContainer[str]
    include_agent_ids: _containers.RepeatedScalarFieldContainer[str]
    exclude_agent_ids: _containers.RepeatedScalarFieldContainer[str]
    threads: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, include_kinds: _Optional[_Iterable[_Union[Kind, str]]] = ..., exclude_kinds: _Optional[_Iterable[_Union[Kind, str]]] = ..., include_tags: _Optional[_Iterable[str]] = ..., exclude_tags: _Optional[_Iterable[str]] = ..., include_agent_ids: _Optional[_Iterable[str]] = ..., exclude_agent_ids: _Optional[_Iterable[str]] = ..., threads: _Optional[_Iterable[str]] = ...) -> None: ...

class FitRequest(_message.Message):
    __slots__ = ("namespace", "query", "budget_tokens", "strategy", "preset", "weights", "recency_decay_rate", "keep_recent", "max_entries", "adaptive", "form", "compress_threshold", "fill", "filters", "min_score", "include_content", "explain", "expand_neighbours", "excerpts")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    PRESET_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    RECENCY_DECAY_RATE_FIELD_NUMBER: _ClassVar[int]
    KEEP_RECENT_FIELD_NUMBER: _ClassVar[int]
    MAX_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    ADAPTIVE_FIELD_NUMBER: _ClassVar[int]
    FORM_FIELD_NUMBER: _ClassVar[int]
    COMPRESS_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    FILL_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    EXPAND_NEIGHBOURS_FIELD_NUMBER: _ClassVar[int]
    EXCERPTS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    query: str
    budget_tokens: int
    strategy: Strategy
    preset: str
    weights: Weights
    recency_decay_rate: float
    keep_recent: int
    max_entries: int
    adaptive: Adaptive
    form: Form
    compress_threshold: int
    fill: Fill
    filters: Filters
    min_score: float
    include_content: bool
    explain: bool
    expand_neighbours: bool
    excerpts: bool
    def __init__(self, namespace: _Optional[str] = ..., query: _Optional[str] = ..., budget_tokens: _Optional[int] = ..., strategy: _Optional[_Union[Strategy, str]] = ..., preset: _Optional[str] = ..., weights: _Optional[_Union[Weights, _Mapping]] = ..., recency_decay_rate: _Optional[float] = ..., keep_recent: _Optional[int] = ..., max_entries: _Optional[int] = ..., adaptive: _Optional[_Union[Adaptive, str]] = ..., form: _Optional[_Union[Form, str]] = ..., compress_threshold: _Optional[int] = ..., fill: _Optional[_Union[Fill, str]] = ..., filters: _Optional[_Union[Filters, _Mapping]] = ..., min_score: _Optional[float] = ..., include_content: _Optional[bool] = ..., explain: _Optional[bool] = ..., expand_neighbours: _Optional[bool] = ..., excerpts: _Optional[bool] = ...) -> None: ...

class LineRange(_message.Message):
    __slots__ = ("first", "last")
    FIRST_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    first: int
    last: int
    def __init__(self, first: _Optional[int] = ..., last: _Optional[int] = ...) -> None: ...

class FitEntry(_message.Message):
    __slots__ = ("key", "rank", "score", "form", "tokens", "content", "event_time", "kind", "thread", "line_ranges", "total_lines", "repeats")
    KEY_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    FORM_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    THREAD_FIELD_NUMBER: _ClassVar[int]
    LINE_RANGES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    REPEATS_FIELD_NUMBER: _ClassVar[int]
    key: str
    rank: int
    score: float
    form: Form
    tokens: int
    content: str
    event_time: _timestamp_pb2.Timestamp
    kind: Kind
    thread: str
    line_ranges: _containers.RepeatedCompositeFieldContainer[LineRange]
    total_lines: int
    repeats: _containers.RepeatedCompositeFieldContainer[Repeat]
    def __init__(self, key: _Optional[str] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ..., form: _Optional[_Union[Form, str]] = ..., tokens: _Optional[int] = ..., content: _Optional[str] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., kind: _Optional[_Union[Kind, str]] = ..., thread: _Optional[str] = ..., line_ranges: _Optional[_Iterable[_Union[LineRange, _Mapping]]] = ..., total_lines: _Optional[int] = ..., repeats: _Optional[_Iterable[_Union[Repeat, _Mapping]]] = ...) -> None: ...

class Repeat(_message.Message):
    __slots__ = ("line", "count")
    LINE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    line: int
    count: int
    def __init__(self, line: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class SegmentScore(_message.Message):
    __slots__ = ("first_line", "last_line", "tokens", "relevance", "chosen")
    FIRST_LINE_FIELD_NUMBER: _ClassVar[int]
    LAST_LINE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_FIELD_NUMBER: _ClassVar[int]
    first_line: int
    last_line: int
    tokens: int
    relevance: float
    chosen: bool
    def __init__(self, first_line: _Optional[int] = ..., last_line: _Optional[int] = ..., tokens: _Optional[int] = ..., relevance: _Optional[float] = ..., chosen: _Optional[bool] = ...) -> None: ...

class FitCandidate(_message.Message):
    __slots__ = ("key", "score", "reason", "factors", "neighbour_gain", "embedded", "original_tokens", "compressed_tokens", "segments")
    class FactorsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    KEY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FACTORS_FIELD_NUMBER: _ClassVar[int]
    NEIGHBOUR_GAIN_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SEGMENTS_FIELD_NUMBER: _ClassVar[int]
    key: str
    score: float
    reason: str
    factors: _containers.ScalarMap[str, float]
    neighbour_gain: float
    embedded: bool
    original_tokens: int
    compressed_tokens: int
    segments: _containers.RepeatedCompositeFieldContainer[SegmentScore]
    def __init__(self, key: _Optional[str] = ..., score: _Optional[float] = ..., reason: _Optional[str] = ..., factors: _Optional[_Mapping[str, float]] = ..., neighbour_gain: _Optional[float] = ..., embedded: _Optional[bool] = ..., original_tokens: _Optional[int] = ..., compressed_tokens: _Optional[int] = ..., segments: _Optional[_Iterable[_Union[SegmentScore, _Mapping]]] = ...) -> None: ...

class FitResponse(_message.Message):
    __slots__ = ("entries", "total_tokens", "candidates", "left_out", "explain", "left_out_by_reason", "weights", "server_ms")
    class LeftOutByReasonEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class WeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_BY_REASON_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    SERVER_MS_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[FitEntry]
    total_tokens: int
    candidates: int
    left_out: int
    explain: _containers.RepeatedCompositeFieldContainer[FitCandidate]
    left_out_by_reason: _containers.ScalarMap[str, int]
    weights: _containers.ScalarMap[str, float]
    server_ms: float
    def __init__(self, entries: _Optional[_Iterable[_Union[FitEntry, _Mapping]]] = ..., total_tokens: _Optional[int] = ..., candidates: _Optional[int] = ..., left_out: _Optional[int] = ..., explain: _Optional[_Iterable[_Union[FitCandidate, _Mapping]]] = ..., left_out_by_reason: _Optional[_Mapping[str, int]] = ..., weights: _Optional[_Mapping[str, float]] = ..., server_ms: _Optional[float] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("namespace", "resume_token", "include_touches")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TOUCHES_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    resume_token: str
    include_touches: bool
    def __init__(self, namespace: _Optional[str] = ..., resume_token: _Optional[str] = ..., include_touches: _Optional[bool] = ...) -> None: ...

class ChangeEvent(_message.Message):
    __slots__ = ("op", "key", "version", "namespace_version", "time", "resume_token")
    class Op(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OP_UNSPECIFIED: _ClassVar[ChangeEvent.Op]
        OP_PUT: _ClassVar[ChangeEvent.Op]
        OP_DELETE: _ClassVar[ChangeEvent.Op]
        OP_EXPIRE: _ClassVar[ChangeEvent.Op]
        OP_CLEAR: _ClassVar[ChangeEvent.Op]
        OP_EMBED: _ClassVar[ChangeEvent.Op]
        OP_EVICT: _ClassVar[ChangeEvent.Op]
        OP_TOUCH: _ClassVar[ChangeEvent.Op]
    OP_UNSPECIFIED: ChangeEvent.Op
    OP_PUT: ChangeEvent.Op
    OP_DELETE: ChangeEvent.Op
    OP_EXPIRE: ChangeEvent.Op
    OP_CLEAR: ChangeEvent.Op
    OP_EMBED: ChangeEvent.Op
    OP_EVICT: ChangeEvent.Op
    OP_TOUCH: ChangeEvent.Op
    OP_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_VERSION_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    op: ChangeEvent.Op
    key: str
    version: int
    namespace_version: int
    time: _timestamp_pb2.Timestamp
    resume_token: str
    def __init__(self, op: _Optional[_Union[ChangeEvent.Op, str]] = ..., key: _Optional[str] = ..., version: _Optional[int] = ..., namespace_version: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resume_token: _Optional[str] = ...) -> None: ...

class NamespacesRequest(_message.Message):
    __slots__ = ("prefix", "page_size", "page_token")
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    prefix: str
    page_size: int
    page_token: str
    def __init__(self, prefix: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class NamespaceInfo(_message.Message):
    __slots__ = ("namespace", "entries", "original_tokens", "compressed_tokens")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    entries: int
    original_tokens: int
    compressed_tokens: int
    def __init__(self, namespace: _Optional[str] = ..., entries: _Optional[int] = ..., original_tokens: _Optional[int] = ..., compressed_tokens: _Optional[int] = ...) -> None: ...

class NamespacesResponse(_message.Message):
    __slots__ = ("namespaces", "next_page_token")
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedCompositeFieldContainer[NamespaceInfo]
    next_page_token: str
    def __init__(self, namespaces: _Optional[_Iterable[_Union[NamespaceInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ReembedRequest(_message.Message):
    __slots__ = ("namespace", "force")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    force: bool
    def __init__(self, namespace: _Optional[str] = ..., force: _Optional[bool] = ...) -> None: ...

class ReembedProgress(_message.Message):
    __slots__ = ("done", "total", "computed")
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPUTED_FIELD_NUMBER: _ClassVar[int]
    done: int
    total: int
    computed: int
    def __init__(self, done: _Optional[int] = ..., total: _Optional[int] = ..., computed: _Optional[int] = ...) -> None: ...

class VersionConflict(_message.Message):
    __slots__ = ("key", "expected_version", "current_version")
    KEY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    CURRENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    key: str
    expected_version: int
    current_version: int
    def __init__(self, key: _Optional[str] = ..., expected_version: _Optional[int] = ..., current_version: _Optional[int] = ...) -> None: ...
