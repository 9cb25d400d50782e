"""One settings object for the server, built from flags and SHAREDCTX_* environment variables.

Each field says here, once, what it means, its default as people read it, and its section;
`serve`'s flags (cli.py) and docs/configuration.md (scripts/gen_settings_doc.py) are generated
from that, so a new setting gets its flag, its variable and its documentation together.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError

ENV_PREFIX = "SHAREDCTX_"

# Sections of the reference, in order: key -> title.
SECTIONS = {
    "server": "Serving",
    "storage": "Redis and storage",
    "quotas": "Per-namespace quotas",
    "limits": "Request limits",
    "fit": "Fit and excerpts",
    "embeddings": "Embeddings",
    "security": "Security",
    "observability": "Metrics and logs",
}


def default_data_dir() -> Path:
    """Where the embedded Redis keeps its files when --data-dir is not given."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sharedctx"


def default_cache_dir() -> Path:
    """Where derived files (the assembled embedding model folder) live."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sharedctx"


@dataclass(frozen=True)
class Rule:
    """The values a setting allows: a test, and the words its error message uses for them."""

    allows: Callable[[Any], bool]
    says: str
    zero: str = ""  # what 0 means, if anything (the docs show it beside a default of 0)


POSITIVE = Rule(lambda v: v >= 1, "a positive integer")
# NaN and infinity parse as floats, but as a number of seconds they are typos.
POSITIVE_NUMBER = Rule(lambda v: math.isfinite(v) and v > 0, "a number > 0")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# What Python's logging takes besides (set the level as before: these still work).
_LOG_ALIASES = ("WARN", "FATAL", "NOTSET")


def _zero_or_more(zero_means: str = "", *, number: bool = False) -> Rule:
    """Integers (finite numbers if `number`) >= 0; `zero_means` says what 0 does, if not plain."""
    kind = "a number" if number else "an integer"
    note = f" (0 = {zero_means})" if zero_means else ""
    return Rule(lambda v: math.isfinite(v) and v >= 0, f"{kind} >= 0{note}", zero_means)


def _one_of(choices: tuple[str, ...], *, any_case: bool = False) -> Rule:
    if any_case:
        return Rule(lambda v: v.upper() in choices, f"one of {', '.join(choices)} (any case)")
    return Rule(lambda v: v in choices, f"one of {', '.join(choices)}")


def _host_port(value: str, *, host_required: bool) -> bool:
    host, sep, port = value.rpartition(":")
    return bool(sep) and port.isdigit() and int(port) <= 65535 and bool(host or not host_required)


def _workers(value: str) -> bool:
    text = value.strip()
    return text.lower() == "auto" or (text.isdigit() and int(text) >= 1)


def is_unix_socket(listen: str) -> bool:
    """Whether a gRPC listen address is a unix socket (`unix:PATH`), which has no port."""
    return listen.startswith(("unix:", "unix-abstract:"))


# gRPC addresses: HOST:PORT (an empty host is every interface; port 0 picks a free one), or a
# unix socket, which is always local.
LISTEN = Rule(
    lambda v: is_unix_socket(v) or _host_port(v, host_required=False),
    "HOST:PORT (e.g. 127.0.0.1:50051) or unix:PATH",
)
# gRPC's message size limits are C ints; server.py sizes its messages to hold a full batch,
# or one Put of a content and a compressed form of the largest size, plus 1 MiB of framing.
_MAX_BATCH_BYTES = 2**31 - 1 - 2**20
_MAX_CONTENT_BYTES = _MAX_BATCH_BYTES // 2
# What state/redis_conn.py can connect to (redis-py's schemes, and +cluster for a cluster).
REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")


def _setting(
    default: Any = MISSING,
    section: str = "",
    meaning: str = "",
    *,
    factory: Callable[[], Any] | None = None,
    shown: str | None = None,
    choices: tuple[str, ...] = (),
    rule: Rule | None = None,
    env_only: bool = False,
) -> Any:
    """A dataclass field with its documentation: section, meaning, the default as shown to
    people (when its value does not say it well), allowed values (`choices`, or any other
    `rule`), and whether it has a flag."""
    assert section in SECTIONS, section
    if rule is None and choices:
        rule = _one_of(choices)
    if shown is None and default == 0 and rule is not None and rule.zero:
        shown = f"0 ({rule.zero})"
    meta = dict(
        section=section,
        meaning=meaning,
        shown=shown,
        choices=choices,
        rule=rule,
        env_only=env_only,
    )
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Limits:
    """Every size and count the server enforces; each one is configurable."""

    max_namespace_chars: int = _setting(
        128, "limits", "longest namespace, in characters", rule=POSITIVE
    )
    max_key_bytes: int = _setting(512, "limits", "longest key, in UTF-8 bytes", rule=POSITIVE)
    max_content_bytes: int = _setting(
        1024 * 1024,
        "limits",
        "largest content (and compressed form) of an entry, in bytes",
        shown="1048576 (1 MiB)",
        rule=Rule(
            lambda v: 1 <= v <= _MAX_CONTENT_BYTES, f"an integer from 1 to {_MAX_CONTENT_BYTES}"
        ),
    )
    max_batch_entries: int = _setting(
        1000, "limits", "most entries per PutMany, keys per GetMany or Touch", rule=POSITIVE
    )
    max_batch_bytes: int = _setting(
        16 * 1024 * 1024,
        "limits",
        "most bytes per PutMany, content and compressed forms together",
        shown="16777216 (16 MiB)",
        rule=Rule(lambda v: 1 <= v <= _MAX_BATCH_BYTES, f"an integer from 1 to {_MAX_BATCH_BYTES}"),
    )
    max_tags: int = _setting(64, "limits", "most tags per entry", rule=_zero_or_more("no tags"))
    max_tag_bytes: int = _setting(256, "limits", "longest tag, in bytes", rule=POSITIVE)
    max_field_bytes: int = _setting(
        256, "limits", "longest role, agent_id, tool_name or thread, in bytes", rule=POSITIVE
    )
    max_page_size: int = _setting(
        1000,
        "limits",
        "largest Keys or Namespaces page (a larger page_size asked gets this many)",
        rule=POSITIVE,
    )
    default_page_size: int = _setting(
        100, "limits", "Keys or Namespaces page size when a request gives none", rule=POSITIVE
    )
    max_ttl_seconds: int = _setting(
        10 * 365 * 24 * 3600,
        "limits",
        "longest TTL, in seconds",
        shown="315360000 (10 years)",
        rule=POSITIVE,
    )
    max_budget_tokens: int = _setting(
        1_000_000, "limits", "largest Fit budget (RESOURCE_EXHAUSTED above)", rule=POSITIVE
    )

    def __post_init__(self) -> None:
        _validate(self)
        if self.default_page_size > self.max_page_size:
            # Every request that gives no page size would be refused as over the limit.
            names = {f.name: _names(f) for f in fields(self)}
            raise ConfigError(
                f"{names['default_page_size']} ({self.default_page_size}) must be at most "
                f"{names['max_page_size']} ({self.max_page_size})"
            )


@dataclass(frozen=True)
class Settings:
    """Server configuration; a field maps to a flag (--redis-url) and SHAREDCTX_REDIS_URL."""

    listen: str = _setting(
        "127.0.0.1:50051",
        "server",
        "HOST:PORT (or unix:PATH, a socket file) the gRPC server listens on (beyond loopback "
        "only with auth or --insecure)",
        rule=LISTEN,
    )
    redis_url: str | None = _setting(
        None,
        "storage",
        "redis:// or rediss:// (TLS) URL, password and TLS options in it; unset: an embedded "
        "Valkey server is started and supervised",
        shown="embedded",
        rule=Rule(
            lambda v: not v or v.startswith(REDIS_SCHEMES),  # empty: unset, as in from_env
            "a redis://, rediss:// or unix:// URL (redis+cluster://, rediss+cluster:// for a "
            "cluster)",
        ),
    )
    redis_cluster: bool = _setting(False, "storage", "the Redis URL points at a Redis Cluster")
    data_dir: Path = _setting(
        section="storage",
        meaning="the embedded server's data folder (append-only persistence; one server at a time)",
        factory=default_data_dir,
        shown="~/.local/share/sharedctx ($XDG_DATA_HOME/sharedctx)",
    )
    cache_dir: Path = _setting(
        section="embeddings",
        meaning="where the embedding model folder is assembled",
        factory=default_cache_dir,
        shown="~/.cache/sharedctx ($XDG_CACHE_HOME/sharedctx)",
    )
    default_ttl_seconds: int = _setting(
        0,
        "storage",
        "TTL of entries whose Put gives none, in seconds",
        rule=_zero_or_more("never"),
    )
    token_encoding: str = _setting(
        "o200k_base",
        "storage",
        "tiktoken encoding that counts tokens",
        choices=("o200k_base", "cl100k_base"),  # tokens.SUPPORTED_ENCODINGS
    )
    # Change-log stream length (approximate, MAXLEN ~): how far Watch can resume.
    change_log_max: int = _setting(
        10_000,
        "storage",
        "changes kept per namespace (approximately): how far Watch can resume",
        rule=POSITIVE,
    )
    # Expired index members removed per write (bounded so a write never does unbounded work).
    sweep_batch: int = _setting(
        100, "storage", "expired index members dropped per write", rule=POSITIVE, env_only=True
    )
    # Per-namespace quotas (see state/quotas.py): defaults for every namespace, what a full one
    # does, and a JSON file of per-prefix overrides.
    namespace_max_entries: int = _setting(
        0,
        "quotas",
        "most entries per namespace",
        rule=_zero_or_more("unlimited"),
    )
    namespace_max_bytes: int = _setting(
        0,
        "quotas",
        "most content bytes per namespace (full and compressed forms)",
        rule=_zero_or_more("unlimited"),
    )
    quota_policy: str = _setting(
        "reject",
        "quotas",
        "what a write that would go over a quota does: fail, or evict the oldest entries",
        choices=("reject", "evict_oldest"),  # state/quotas.py's POLICIES
    )
    quotas: Path | None = _setting(
        None,
        "quotas",
        "JSON file of quotas per namespace prefix (longest match wins; checked at start)",
        shown="none",
    )
    grace_seconds: float = _setting(
        10.0,
        "server",
        "seconds in-flight calls get to finish on SIGTERM/SIGINT",
        rule=_zero_or_more(number=True),
    )
    # See workers.py: a Python gRPC server runs its handlers on one core.
    workers: str = _setting(
        "1",
        "server",
        "server processes sharing the port (SO_REUSEPORT) under one supervisor; "
        "auto = the CPUs this process may use, cgroup limits included",
        rule=Rule(_workers, "a positive integer or auto"),
    )
    max_workers: int = _setting(
        32,
        "server",
        "the most workers --workers may start (auto included): each is a whole server, with "
        "its own model (about 265 MB) and a core",
        rule=POSITIVE,
        env_only=True,
    )
    worker_stall_seconds: float = _setting(
        30.0,
        "server",
        "with --workers: a worker whose event loop has not run for this long is killed and "
        "started again",
        rule=POSITIVE_NUMBER,
        env_only=True,
    )
    health_interval_seconds: float = _setting(
        1.0,
        "server",
        "seconds between the health service's Redis checks",
        rule=POSITIVE_NUMBER,
        env_only=True,
    )
    # See services/reaper.py: how soon after its TTL an entry's expiry reaches watchers.
    expiry_poll_seconds: float = _setting(
        0.25,
        "storage",
        "seconds between looks for entries due to expire (each is removed and reported then)",
        rule=POSITIVE_NUMBER,
    )
    metrics_listen: str | None = _setting(
        None,
        "observability",
        "HOST:PORT of a Prometheus /metrics endpoint (unauthenticated: keep it private)",
        shown="off",
        rule=Rule(
            lambda v: not v or _host_port(v, host_required=True), "HOST:PORT (e.g. 127.0.0.1:9090)"
        ),
    )
    # See edge/logs.py: JSON lines carry the request id.
    log_format: str = _setting(
        "text",
        "observability",
        "log lines as text, or as JSON objects (one per line)",
        choices=("text", "json"),  # edge/logs.py's FORMATS
    )
    log_level: str = _setting(
        "INFO",
        "observability",
        "log level, in any case; DEBUG adds a line per RPC (method, status code, "
        "milliseconds); libraries log from INFO",
        choices=LOG_LEVELS,
        rule=_one_of(LOG_LEVELS + _LOG_ALIASES, any_case=True),
    )
    redis_timeout_seconds: float = _setting(
        5.0, "storage", "Redis socket timeout, in seconds", rule=POSITIVE_NUMBER
    )
    max_concurrent_rpcs: int = _setting(
        1000,
        "server",
        "most calls handled at once, Watch streams aside (per worker)",
        rule=POSITIVE,
    )
    max_watches: int = _setting(
        1000, "server", "most Watch streams open at once (per worker)", rule=POSITIVE
    )
    embedding_model: str = _setting(
        "all-MiniLM-L6-v2-int8",
        "embeddings",
        "the offline default model, or any fastembed model name",
    )
    embedding_model_path: Path | None = _setting(
        None,
        "embeddings",
        "a local model folder (ONNX and tokenizer files) instead",
        shown="none",
    )
    embedding_dim: int = _setting(
        0,
        "embeddings",
        "vector size, only for a local model fastembed does not know",
        rule=_zero_or_more("the model's own"),
    )
    embedding_threads: int = _setting(
        0,
        "embeddings",
        "onnxruntime threads",
        rule=_zero_or_more("the CPUs the process may use, shared among --workers"),
    )
    embedding_compute: str = _setting(
        "int8",
        "embeddings",
        "the default model's arithmetic (int8 is fast)",
        choices=("int8", "fp32"),  # embedding/spec.py's COMPUTE_MODES
    )
    embed_batch: int = _setting(
        32, "embeddings", "most texts per model run (micro-batching)", rule=POSITIVE
    )
    embed_wait_ms: float = _setting(
        2.0,
        "embeddings",
        "milliseconds a model run waits for more texts",
        rule=_zero_or_more(number=True),
    )
    embed_queue: int = _setting(
        1024,
        "embeddings",
        "most texts waiting to be embedded; then RESOURCE_EXHAUSTED with a retry hint",
        rule=POSITIVE,
    )
    embed_run_ms: float = _setting(
        50.0,
        "embeddings",
        "longest model run formed, in milliseconds of work: a Fit's query waits at most for "
        "the run in progress",
        rule=POSITIVE_NUMBER,
    )
    query_cache_entries: int = _setting(
        4096, "embeddings", "query embeddings kept for reuse", rule=POSITIVE
    )
    # Excerpts (docs/excerpts.md): entries of at least excerpt_min_tokens (messages aside) are
    # cut into segments at Put, and Fit may return the part of one that answers. Off: Puts
    # cut nothing and Fit returns whole entries only.
    excerpts: bool = _setting(
        True,
        "fit",
        "cut large entries into segments at Put so Fit may return excerpts (docs/excerpts.md)",
    )
    excerpt_min_tokens: int = _setting(
        256, "fit", "smallest entry (full form, in tokens) cut into segments", rule=_zero_or_more()
    )
    cache_max_entries: int = _setting(
        1_000_000, "fit", "most entries Fit keeps in memory, across namespaces", rule=POSITIVE
    )
    # Security (see sharedctx_server.security.auth and .tls). Without auth_tokens or jwt_key, every
    # caller may do everything, so `serve` only allows that on loopback unless `insecure`.
    auth_tokens: Path | None = _setting(
        None,
        "security",
        "JSON file of bearer tokens and their scopes, re-read when it changes",
        shown="none",
    )
    auth_reload_seconds: float = _setting(
        5.0,
        "security",
        "seconds between checks of the token file for changes (0 = never)",
        rule=_zero_or_more("never", number=True),
    )
    insecure: bool = _setting(
        False, "security", "allow serving a non-loopback address without authentication"
    )
    jwt_key: Path | None = _setting(
        None,
        "security",
        "JWT key file: an HS256 secret (32+ bytes; whitespace around it is not part of it) or "
        "an RSA, EC or Ed25519 public key (PEM)",
        shown="none",
    )
    jwt_issuer: str | None = _setting(
        None, "security", "required `iss` of JWTs (needed with jwt_key)", shown="none"
    )
    jwt_audience: str | None = _setting(
        None, "security", "required `aud` of JWTs (needed with jwt_key)", shown="none"
    )
    tls_cert: Path | None = _setting(
        None, "security", "server certificate chain (PEM): serve TLS", shown="none"
    )
    tls_key: Path | None = _setting(
        None, "security", "private key (PEM) of the TLS certificate", shown="none"
    )
    tls_client_ca: Path | None = _setting(
        None, "security", "require client certificates signed by this CA (mTLS)", shown="none"
    )
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from SHAREDCTX_* variables, then explicit overrides (flags) on top;
        ConfigError naming the flag and the variable of a value that is not allowed."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        limit_values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "limits":
                continue
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = _parse(raw, f)
        for f in fields(Limits):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                limit_values[f.name] = _parse(raw, f)
        for name, value in overrides.items():
            if value is None:
                continue
            if name in Limits.__dataclass_fields__:
                limit_values[name] = value
            elif name in ("data_dir", "cache_dir"):
                values[name] = Path(value)
            else:
                values[name] = value
        if limit_values:
            values["limits"] = Limits(**limit_values)
        return cls(**values)


def _validate(settings: Settings | Limits) -> None:
    """ConfigError for the first field whose value its rule refuses. Run by __post_init__, so
    every Settings (flags, environment, replace()) is checked before anything uses it."""
    for f in fields(settings):
        rule = f.metadata.get("rule")
        value = getattr(settings, f.name)
        if rule is not None and value is not None and not rule.allows(value):
            raise ConfigError(f"{_names(f)} must be {rule.says}, got {value!r}")


# What a value that does not parse should have been, for settings without a rule of their own.
_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false (or 1/0, yes/no, on/off)",
}


def _parse(raw: str, f: Field[Any]) -> Any:
    t = str(f.type)
    try:
        if t == "bool":
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if t == "int":
            return int(raw)
        if t == "float":
            return float(raw)
        if t in ("Path", "Path | None"):
            return Path(raw)
    except ValueError:
        rule = f.metadata["rule"]
        says = rule.says if rule is not None and t != "bool" else _TYPE_WORDS[t]
        raise ConfigError(f"{_names(f)} must be {says}, got {raw!r}") from None
    return raw


def how_to_set(name: str) -> str:
    """How an operator changes the setting `name` of Settings or Limits, for messages that name
    a limit: "--max-tags / SHAREDCTX_MAX_TAGS" (only the variable for an env-only setting)."""
    found = next(f for cls in (Settings, Limits) for f in fields(cls) if f.name == name)
    return _names(found)


def _names(f: Field[Any]) -> str:
    """How people set this field: "--max-tags / SHAREDCTX_MAX_TAGS" (only the variable for an
    env-only setting)."""
    env = ENV_PREFIX + f.name.upper()
    return env if f.metadata["env_only"] else f"--{f.name.replace('_', '-')} / {env}"


@dataclass(frozen=True)
class Setting:
    """One setting as documented and offered as a flag."""

    name: str  # the field of Settings or Limits
    kind: str  # how a value is read: "bool", "int", "float", "path" or "str"
    flag: str | None  # None: environment only
    env: str
    default: str  # as shown to people
    meaning: str
    section: str  # a key of SECTIONS
    choices: tuple[str, ...]


def reference() -> list[Setting]:
    """Every setting of Settings and Limits, by section (in SECTIONS' order), then field order."""
    out = [_describe(f) for cls in (Settings, Limits) for f in fields(cls) if f.name != "limits"]
    order = list(SECTIONS)
    return sorted(out, key=lambda s: order.index(s.section))


def _describe(f: Field[Any]) -> Setting:
    meta = f.metadata
    t = str(f.type)
    kind = {"bool": "bool", "int": "int", "float": "float", "Path": "path"}.get(
        t.removesuffix(" | None"), "str"
    )
    # A computed default (a path under $HOME) is machine-specific: such fields say how to show it.
    assert meta["shown"] is not None or f.default is not MISSING, f.name
    return Setting(
        name=f.name,
        kind=kind,
        flag=None if meta["env_only"] else "--" + f.name.replace("_", "-"),
        env=ENV_PREFIX + f.name.upper(),
        default=meta["shown"] if meta["shown"] is not None else _show(f.default),
        meaning=meta["meaning"],
        section=meta["section"],
        choices=meta["choices"],
    )


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return "unset" if value is None else str(value)
