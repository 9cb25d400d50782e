"""Every Redis key this project uses is built here, and nowhere else.

Layout (all keys of a namespace share the hash tag `{<ns>}`, so a namespace lives on one
Redis Cluster slot and its multi-key scripts stay atomic there):

  sc:v1:{<ns>}:e:<key>     hash   one entry: v (version), c/u/t/x (created, updated, event,
                                  expiry ms), q (write sequence), m (msgpack metadata),
                                  f and z (full and compressed text) when the two differ,
                                  else o (the one text, which is both; earlier versions
                                  wrote it as f): either form is one HMGET of v c u t x m q
                                  and f o (full) or z o (compressed)
  sc:v1:{<ns>}:idx         zset   live keys, all score 0 (lexicographic paging for Keys)
  sc:v1:{<ns>}:exp         zset   key -> expiry time in ms, for entries with a TTL
  sc:v1:{<ns>}:sizes       hash   key -> "orig_tokens comp_tokens bytes content_hash version",
                                  for exact stats and embedding reference counts
  sc:v1:{<ns>}:stats       hash   entries, orig_tokens, comp_tokens, bytes
  sc:v1:{<ns>}:meta        hash   version (namespace write counter)
  sc:v1:{<ns>}:log         stream change log: op, key, v (entry version), ns (namespace version),
                                  t (an expiry's time), x (a touch's new expiry)
  sc:v1:{<ns>}:embref      hash   content hash -> how many live entries embed that text
  sc:v1:{<ns>}:emb:<model> hash   content hash -> float32 embedding bytes of that model
  sc:v1:{<ns>}:age         zset   key -> write sequence (q) of its last put: oldest first, for
                                  the evict_oldest quota policy; holds exactly the keys of sizes

Keys outside every namespace:

  sc:v1:namespaces         zset   every namespace ever written, score 0 (lexicographic paging
                                  for the Namespaces RPC, which skips those with no live entry)
  sc:v1:namespaces:filled  string set once the registry was filled from existing namespaces
  sc:v1:expiries           zset   namespace -> when its next entry expires (ms): the expiry
                                  reapers' schedule
  sc:v1:expiries:filled    string set once the schedule was filled from existing namespaces

Embeddings live inside the namespace's hash tag (tenants share nothing, a namespace stays on
one slot) and are keyed by content hash + model id: unchanged content is never embedded twice,
and vectors of two models never mix.

Namespaces are restricted to [A-Za-z0-9._:/-] (model.NAMESPACE_CHARS), so they can never
hold the braces that would move the hash tag; entry keys come after the tag and may hold any
UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "sc:v1:"


def _ns_root(namespace: str) -> str:
    return f"{PREFIX}{{{namespace}}}:"


NAMESPACES = f"{PREFIX}namespaces"
NAMESPACES_FILLED = f"{PREFIX}namespaces:filled"
EXPIRIES = f"{PREFIX}expiries"
EXPIRIES_FILLED = f"{PREFIX}expiries:filled"
# SCAN pattern of one fixed key per namespace, to fill the registry from namespaces written
# before it existed.
NAMESPACE_META_PATTERN = f"{PREFIX}{{*}}:meta"


def namespace_of_meta(key: str) -> str | None:
    """The namespace whose `meta` key this is, or None for any other key."""
    head, tail = f"{PREFIX}{{", "}:meta"
    if key.startswith(head) and key.endswith(tail):
        return key[len(head) : -len(tail)]
    return None


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
    embref: str
    emb: str
    age: str

    def as_list(self) -> list[str]:
        """KEYS[1..9] for every write script."""
        return [
            self.idx, self.exp, self.sizes, self.stats, self.meta, self.log, self.embref, self.emb,
            self.age,
        ]  # fmt: skip


def namespace(namespace: str, model_id: str) -> NamespaceKeys:
    """The fixed per-namespace keys; `emb` is the embedding hash of `model_id`."""
    root = _ns_root(namespace)
    return NamespaceKeys(
        idx=f"{root}idx",
        exp=f"{root}exp",
        sizes=f"{root}sizes",
        stats=f"{root}stats",
        meta=f"{root}meta",
        log=f"{root}log",
        embref=f"{root}embref",
        emb=f"{root}emb:{model_id}",
        age=f"{root}age",
    )
