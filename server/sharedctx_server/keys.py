"""Every Redis key this project uses is built here, and nowhere else.

Layout (all keys of a namespace share the hash tag `{<ns>}`, so a namespace lives on one
Redis Cluster slot and its multi-key scripts stay atomic there):

  sc:v1:{<ns>}:e:<key>     hash   one entry: v, c, u, x, m (msgpack metadata), f (full), z (compressed)
  sc:v1:{<ns>}:idx         zset   live keys, all score 0 (lexicographic paging for Keys)
  sc:v1:{<ns>}:exp         zset   key -> expiry time in ms, for entries with a TTL
  sc:v1:{<ns>}:sizes       hash   key -> "orig_tokens comp_tokens bytes", to keep stats exact
  sc:v1:{<ns>}:stats       hash   entries, orig_tokens, comp_tokens, bytes
  sc:v1:{<ns>}:meta        hash   version (namespace write counter)
  sc:v1:{<ns>}:log         stream change log: op, key, version (capped)

Namespaces are restricted to [A-Za-z0-9._:/-], so they can never contain the braces that
would move the hash tag; entry keys come after the tag and may hold any UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "sc:v1:"


def _ns_root(namespace: str) -> str:
    return f"{PREFIX}{{{namespace}}}:"


def entry(namespace: str, key: str) -> str:
    """The hash holding one entry."""
    return f"{_ns_root(namespace)}e:{key}"


@dataclass(frozen=True)
class NamespaceKeys:
    """The fixed keys of one namespace, in the order the Lua scripts expect them."""

    idx: str
    exp: str
    sizes: str
    stats: str
    meta: str
    log: str

    def as_list(self) -> list[str]:
        """KEYS[1..6] for every write script."""
        return [self.idx, self.exp, self.sizes, self.stats, self.meta, self.log]


def namespace(namespace: str) -> NamespaceKeys:
    """The fixed per-namespace keys."""
    root = _ns_root(namespace)
    return NamespaceKeys(
        idx=f"{root}idx",
        exp=f"{root}exp",
        sizes=f"{root}sizes",
        stats=f"{root}stats",
        meta=f"{root}meta",
        log=f"{root}log",
    )
