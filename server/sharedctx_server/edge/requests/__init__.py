"""Request messages in, validated domain values out: every check of every RPC, in one place.

Each error names the field it is about (`entries[3].ttl_seconds` inside a PutMany) and the
rule, as InvalidArgument, or the limit, as LimitExceeded; nothing reaches a service or Redis
before the whole request passed.
"""

from .fit import fit
from .reads import clear, delete, get, get_many, keys, namespaces, reembed, stats, touch, watch
from .writes import put, put_many

__all__ = [
    "clear",
    "delete",
    "fit",
    "get",
    "get_many",
    "keys",
    "namespaces",
    "put",
    "put_many",
    "reembed",
    "stats",
    "touch",
    "watch",
]
