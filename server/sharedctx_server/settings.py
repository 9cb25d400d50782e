"""One settings object for the server, built from flags and SHAREDCTX_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ENV_PREFIX = "SHAREDCTX_"


def default_data_dir() -> Path:
    """Where the embedded Redis keeps its files when --data-dir is not given."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sharedctx"


def default_cache_dir() -> Path:
    """Where derived files (the assembled embedding model folder) live."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sharedctx"


@dataclass(frozen=True)
class Limits:
    """Every size and count the server enforces; each one is configurable."""

    max_namespace_chars: int = 128
    max_key_bytes: int = 512
    max_content_bytes: int = 1024 * 1024
    max_batch_entries: int = 1000
    max_batch_bytes: int = 16 * 1024 * 1024
    max_tags: int = 64
    max_tag_bytes: int = 256
    max_field_bytes: int = 256  # role, agent_id, tool_name, thread
    max_page_size: int = 1000
    default_page_size: int = 100
    max_ttl_seconds: int = 10 * 365 * 24 * 3600
    max_budget_tokens: int = 1_000_000


@dataclass(frozen=True)
class Settings:
    """Server configuration; a field maps to a flag (--redis-url) and SHAREDCTX_REDIS_URL."""

    listen: str = "127.0.0.1:50051"
    redis_url: str | None = None
    redis_cluster: bool = False
    data_dir: Path = field(default_factory=default_data_dir)
    cache_dir: Path = field(default_factory=default_cache_dir)
    # 0 means entries never expire unless a Put asks for a TTL.
    default_ttl_seconds: int = 0
    token_encoding: str = "o200k_base"
    # Change-log stream length (approximate, MAXLEN ~): how far Watch can resume.
    change_log_max: int = 10_000
    # Expired index members removed per write (bounded so a write never does unbounded work).
    sweep_batch: int = 100
    # Per-namespace quotas (state/quotas.py): defaults for every namespace (0 = unlimited), what a
    # full namespace does ("reject" or "evict_oldest"), and a JSON file of per-prefix overrides.
    namespace_max_entries: int = 0
    namespace_max_bytes: int = 0
    quota_policy: str = "reject"
    quotas: Path | None = None
    grace_seconds: float = 10.0
    health_interval_seconds: float = 1.0
    # Prometheus /metrics on its own HTTP port (HOST:PORT); no metrics endpoint when unset.
    metrics_listen: str | None = None
    # Log lines as "text" or "json" (one object per line, with the request id); see logs.py.
    log_format: str = "text"
    redis_timeout_seconds: float = 5.0
    max_concurrent_rpcs: int = 1000
    # Embeddings: the offline default model unless a fastembed model name (or a local folder
    # with embedding_model_path) is given.
    embedding_model: str = "all-MiniLM-L6-v2-int8"
    embedding_model_path: Path | None = None
    embedding_dim: int = 0  # only for a local model fastembed does not know
    embedding_threads: int = 0  # onnxruntime threads; 0 = all cores
    # The default model's arithmetic: "int8" (fast) or "fp32" (see embedding/default_model.py).
    embedding_compute: str = "int8"
    embed_batch: int = 32
    embed_wait_ms: float = 2.0
    embed_queue: int = 1024
    # Longest model run the batcher forms (ms of measured work): bounds how long a Fit's query
    # waits behind Put texts already running.
    embed_run_ms: float = 50.0
    query_cache_entries: int = 4096
    # Excerpts (docs/excerpts.md): entries of at least excerpt_min_tokens (messages aside) are
    # cut into segments at Put, and Fit may return the part of one that answers. Off: Puts
    # cut nothing and Fit returns whole entries only.
    excerpts: bool = True
    excerpt_min_tokens: int = 256
    # Namespace cache for Fit: most entries held in memory across namespaces.
    cache_max_entries: int = 1_000_000
    # Security (see sharedctx_server.security.auth and .tls). Without auth_tokens or jwt_key, every
    # caller may do everything, so `serve` only allows that on loopback unless `insecure`.
    auth_tokens: Path | None = None
    # How often, at most, the token file is checked for changes (0 = read once at start).
    auth_reload_seconds: float = 5.0
    insecure: bool = False
    # JWT bearer tokens: jwt_key is an HS256 secret file or an RS256/ES256 public key (PEM).
    jwt_key: Path | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # When set, clients must present a certificate signed by this CA (mTLS).
    tls_client_ca: Path | None = None
    limits: Limits = field(default_factory=Limits)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from SHAREDCTX_* variables, then explicit overrides (flags) on top."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        limit_values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "limits":
                continue
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = _parse(raw, f.type, f.name)
        for f in fields(Limits):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                limit_values[f.name] = _parse(raw, f.type, f.name)
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


def _parse(raw: str, type_name: Any, name: str) -> Any:
    t = str(type_name)
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
        raise SystemExit(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a valid {t}") from None
    return raw
