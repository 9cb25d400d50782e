"""Per-namespace quotas: how many entries and bytes a namespace may hold; what a full one does.

Defaults come from settings (`--namespace-max-entries`, `--namespace-max-bytes`,
`--quota-policy`; 0 = unlimited). An optional JSON file (`--quotas FILE`) overrides them per
namespace PREFIX; the longest matching prefix wins and fields it leaves out keep the defaults:

    {"namespaces": {"team-a/": {"max_entries": 1000, "max_bytes": 10485760,
                                "policy": "evict_oldest"},
                    "": {"max_bytes": 104857600}}}

Policies when a write would go over: `reject` (RESOURCE_EXHAUSTED naming the limit, nothing
written) or `evict_oldest` (expired entries go first, then the least recently written ones).
The check is part of the write's atomic script (lua/put_many.lua); this module only resolves
the numbers and words the errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from ..errors import ConfigError, LimitExceeded
from ..model import NAMESPACE_CHARS
from ..settings import Settings

Policy = Literal["reject", "evict_oldest"]
POLICIES: tuple[Policy, ...] = ("reject", "evict_oldest")
MAX_ENTRIES, MAX_BYTES = "max_entries", "max_bytes"
# Prefixes use the namespace alphabet; "" covers every namespace.
_PREFIX_RE = re.compile(f"{NAMESPACE_CHARS}*")
_FIELDS = (MAX_ENTRIES, MAX_BYTES, "policy")


@dataclass(frozen=True)
class Quota:
    """The limits of one namespace; 0 means unlimited."""

    max_entries: int = 0
    max_bytes: int = 0
    policy: Policy = "reject"

    @property
    def limited(self) -> bool:
        """True when any limit is set."""
        return self.max_entries > 0 or self.max_bytes > 0

    @property
    def evicts(self) -> bool:
        """True when a full namespace makes room by evicting its oldest entries."""
        return self.limited and self.policy == "evict_oldest"

    def limit(self, name: str) -> int:
        """The value of limit `name` (max_entries or max_bytes)."""
        return self.max_entries if name == MAX_ENTRIES else self.max_bytes


class QuotaTable:
    """Resolves a namespace to its quota: the longest matching prefix, else the defaults."""

    def __init__(self, default: Quota, overrides: dict[str, Quota] | None = None) -> None:
        self._default = default
        self._overrides = dict(overrides or {})
        # Longest first, so the first match is the most specific one.
        self._prefixes = sorted(self._overrides, key=len, reverse=True)

    def for_namespace(self, namespace: str) -> Quota:
        """The quota that applies to `namespace`."""
        prefix = self._match(namespace)
        return self._default if prefix is None else self._overrides[prefix]

    def _match(self, namespace: str) -> str | None:
        return next((p for p in self._prefixes if namespace.startswith(p)), None)

    def check_batch(self, namespace: str, sizes: Sequence[int]) -> None:
        """LimitExceeded for a batch (entry sizes in bytes) that cannot fit even when alone."""
        quota = self.for_namespace(namespace)
        if quota.max_entries and len(sizes) > quota.max_entries:
            raise self.too_large(namespace, MAX_ENTRIES, "this batch", len(sizes))
        if quota.max_bytes:
            largest = max(sizes, default=0)
            if largest > quota.max_bytes:
                what = "this entry" if len(sizes) == 1 else "the largest entry of this batch"
                raise self.too_large(namespace, MAX_BYTES, what, largest)
            if sum(sizes) > quota.max_bytes:
                raise self.too_large(namespace, MAX_BYTES, "this batch", sum(sizes))

    def exceeded(self, namespace: str, limit: str, projected: int) -> LimitExceeded:
        """The error for a write that would take `namespace` to `projected` on `limit`."""
        quota = self.for_namespace(namespace)
        cap, unit = quota.limit(limit), _unit(limit)
        if quota.evicts:
            outcome = f"leave it holding {projected} {unit} even after evicting every older entry"
            remedy = f"Write less at once, or {self._how_to_raise(namespace, limit)}"
        else:
            outcome = f"make it hold {projected} {unit}"
            remedy = (
                f"Delete entries, {self._how_to_raise(namespace, limit)}, or set its policy to "
                "evict_oldest to make room by dropping the oldest entries"
            )
        return LimitExceeded(
            limit,
            f"namespace {namespace!r} is full: this write would {outcome}, {projected - cap} over "
            f"its {limit} quota of {cap}. {remedy}.",
        )

    def too_large(self, namespace: str, limit: str, what: str, size: int) -> LimitExceeded:
        """The error for a write that cannot fit even in an empty namespace."""
        cap = self.for_namespace(namespace).limit(limit)
        return LimitExceeded(
            limit,
            f"{what} alone is {size} {_unit(limit)}, {size - cap} over namespace {namespace!r}'s "
            f"{limit} quota of {cap}, so no eviction can make room for it. Write less at once, "
            f"or {self._how_to_raise(namespace, limit)}.",
        )

    def eviction_failed(self, namespace: str, examined: int) -> LimitExceeded:
        """The error for an evict_oldest write that could not free enough room."""
        quota = self.for_namespace(namespace)
        limit = MAX_BYTES if quota.max_bytes > 0 else MAX_ENTRIES
        return LimitExceeded(
            limit,
            f"namespace {namespace!r} is full and evict_oldest could not free enough room for "
            f"this write after examining its {examined} oldest entries (other writers kept "
            "changing it, or the write needs more evictions than one write may make). Retry, "
            f"write less at once, or {self._how_to_raise(namespace, limit)}.",
        )

    def _how_to_raise(self, namespace: str, limit: str) -> str:
        prefix = self._match(namespace)
        if prefix is not None:
            return f'raise "{limit}" for prefix {prefix!r} in the --quotas file'
        flag = "--namespace-" + limit.replace("_", "-")
        return (
            f"raise the server default ({flag} / SHAREDCTX_NAMESPACE_{limit.upper()}), "
            "or give this namespace's prefix its own quota in a --quotas file"
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> QuotaTable:
        """The defaults from settings (checked by Settings), overridden by the --quotas file;
        ConfigError if the file is bad."""
        default = Quota(
            settings.namespace_max_entries,
            settings.namespace_max_bytes,
            cast(Policy, settings.quota_policy),
        )
        if settings.quotas is None:
            return cls(default)
        return cls(default, load_overrides(settings.quotas, default))


def _unit(limit: str) -> str:
    return "entries" if limit == MAX_ENTRIES else "bytes"


def load_overrides(path: Path, default: Quota) -> dict[str, Quota]:
    """Per-prefix quotas from the JSON file; ConfigError naming the file and entry at fault."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the quotas file {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"the quotas file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or set(data) != {"namespaces"}:
        raise ConfigError(f'the quotas file {path} must hold exactly {{"namespaces": {{...}}}}')
    items = data["namespaces"]
    if not isinstance(items, dict):
        raise ConfigError(
            f'{path}: "namespaces" must map namespace prefixes to quotas, '
            'e.g. {"team-a/": {"max_entries": 1000}}'
        )
    out = {}
    for prefix, item in items.items():
        where = f"{path}: namespaces[{prefix!r}]"
        if not _PREFIX_RE.fullmatch(prefix):
            raise ConfigError(
                f"{where}: a prefix may only hold characters of {NAMESPACE_CHARS} "
                '(prefixes, not globs: "team-a/" not "team-a/*"; "" for every namespace)'
            )
        if not isinstance(item, dict):
            raise ConfigError(f"{where} must be an object with max_entries, max_bytes, policy")
        out[prefix] = _quota(item, default, where)
    return out


def _quota(values: dict[str, Any], base: Quota, where: str) -> Quota:
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{where}: unknown field {unknown[0]!r}; use {', '.join(_FIELDS)}")
    for name in (MAX_ENTRIES, MAX_BYTES):
        value = values.get(name, 0)
        # bool is an int in Python; `true` as a limit is a mistake, not 1.
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{where}: {name} must be an integer >= 0 (0 = unlimited)")
    policy = values.get("policy", base.policy)
    if policy not in POLICIES:
        raise ConfigError(f"{where}: policy must be one of {', '.join(POLICIES)}; got {policy!r}")
    given = {k: v for k, v in values.items() if k in _FIELDS}
    given["policy"] = cast(Policy, policy)
    return replace(base, **given)
