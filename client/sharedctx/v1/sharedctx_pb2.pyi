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
KIND_UNSPECIFIED: Kind
KIND_MESSAGE: Kind
KIND_TOOL_OUTPUT: Kind
KIND_LOG: Kind
KIND_DOCUMENT: Kind
KIND_NOTE: Kind

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
    __slots__ = ("namespace", "key", "content", "ttl_seconds", "compressed", "kind", "role", "agent_id", "tool_name", "tags", "importance", "event_time", "thread", "if_version")
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
    def __init__(self, namespace: _Optional[str] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., ttl_seconds: _Optional[int] = ..., compressed: _Optional[str] = ..., kind: _Optional[_Union[Kind, str]] = ..., role: _Optional[str] = ..., agent_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., importance: _Optional[float] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., thread: _Optional[str] = ..., if_version: _Optional[int] = ...) -> None: ...

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

class VersionConflict(_message.Message):
    __slots__ = ("key", "expected_version", "current_version")
    KEY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    CURRENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    key: str
    expected_version: int
    current_version: int
    def __init__(self, key: _Optional[str] = ..., expected_version: _Optional[int] = ..., current_version: _Optional[int] = ...) -> None: ...
