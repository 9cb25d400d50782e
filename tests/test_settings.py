"""Settings come from SHAREDCTX_* variables, with flags on top."""

from __future__ import annotations

from pathlib import Path

import pytest
from sharedctx_server.settings import Settings


def test_environment_then_flags() -> None:
    env = {
        "SHAREDCTX_LISTEN": "0.0.0.0:6000",
        "SHAREDCTX_REDIS_URL": "redis://example:6379/0",
        "SHAREDCTX_REDIS_CLUSTER": "true",
        "SHAREDCTX_DEFAULT_TTL_SECONDS": "60",
        "SHAREDCTX_MAX_CONTENT_BYTES": "2048",
        "SHAREDCTX_DATA_DIR": "/srv/sharedctx",
    }
    s = Settings.from_env(env, listen="127.0.0.1:7000", max_batch_entries=5)
    assert s.listen == "127.0.0.1:7000"
    assert s.redis_url == "redis://example:6379/0"
    assert s.redis_cluster is True
    assert s.default_ttl_seconds == 60
    assert s.data_dir == Path("/srv/sharedctx")
    assert (s.limits.max_content_bytes, s.limits.max_batch_entries) == (2048, 5)


def test_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(SystemExit, match="SHAREDCTX_DEFAULT_TTL_SECONDS"):
        Settings.from_env({"SHAREDCTX_DEFAULT_TTL_SECONDS": "soon"})


async def test_an_unknown_embedding_compute_mode_stops_the_start_naming_the_choices(
    tmp_path: Path,
) -> None:
    from sharedctx_server.errors import ConfigError
    from sharedctx_server.server import start

    settings = Settings.from_env(
        {"SHAREDCTX_EMBEDDING_COMPUTE": "fp16"}, data_dir=tmp_path / "never-created"
    )
    with pytest.raises(ConfigError, match="int8, fp32; got 'fp16'"):
        await start(settings)
    assert not (tmp_path / "never-created").exists()


async def test_a_negative_excerpt_minimum_stops_the_start() -> None:
    from sharedctx_server.errors import ConfigError
    from sharedctx_server.server import start

    with pytest.raises(ConfigError, match="excerpt_min_tokens"):
        await start(Settings.from_env({"SHAREDCTX_EXCERPT_MIN_TOKENS": "-1"}))


def test_excerpt_settings_come_from_the_environment_and_flags() -> None:
    s = Settings.from_env({"SHAREDCTX_EXCERPTS": "false"}, excerpt_min_tokens=64)
    assert (s.excerpts, s.excerpt_min_tokens) == (False, 64)
