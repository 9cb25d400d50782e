"""Settings come from SHAREDCTX_* variables, with flags on top; `serve`'s flags and
docs/configuration.md are generated from the settings' own descriptions."""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import fields
from pathlib import Path

import pytest
from sharedctx_server.cli import SERVE, settings_from
from sharedctx_server.settings import Limits, Settings, reference

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gen_settings_doc.py"


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


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sharedctx serve")
    SERVE.add_arguments(parser)
    return parser


def test_every_setting_has_a_serve_flag_unless_it_is_marked_env_only() -> None:
    flags = {opt for action in serve_parser()._actions for opt in action.option_strings}
    settings = reference()
    assert {s.name for s in settings} == (
        {f.name for f in fields(Settings)} - {"limits"} | {f.name for f in fields(Limits)}
    )
    assert {s.flag for s in settings if s.flag} <= flags
    assert {s.name for s in settings if s.flag is None} == {
        "sweep_batch",
        "health_interval_seconds",
    }
    assert all(s.meaning and s.default for s in settings)


def test_each_flag_sets_its_setting() -> None:
    defaults = Settings()
    argv: list[str] = []
    expected: dict[str, object] = {}
    samples = {"int": ("7", 7), "float": ("2.5", 2.5), "path": ("/srv/x", Path("/srv/x"))}
    for s in reference():
        if s.flag is None:
            continue
        if s.kind == "bool":
            default = getattr(defaults, s.name)
            argv.append(f"--no-{s.flag[2:]}" if default else s.flag)
            expected[s.name] = not default
        else:
            text, value = samples.get(s.kind, (s.choices[-1] if s.choices else "abc",) * 2)
            argv += [s.flag, text]
            expected[s.name] = value
    got = settings_from(serve_parser().parse_args(argv), env={})
    for name, value in expected.items():
        where = got.limits if name in Limits.__dataclass_fields__ else got
        assert getattr(where, name) == value, name


def test_serve_flags_win_over_the_environment_which_wins_over_defaults() -> None:
    args = serve_parser().parse_args(["--listen", "127.0.0.1:7000", "--max-tags", "5"])
    env = {
        "SHAREDCTX_LISTEN": "0.0.0.0:6000",
        "SHAREDCTX_MAX_TAGS": "9",
        "SHAREDCTX_EMBED_BATCH": "8",
        "SHAREDCTX_LOG_LEVEL": "DEBUG",
        "SHAREDCTX_SWEEP_BATCH": "3",
    }
    s = settings_from(args, env)
    assert (s.listen, s.limits.max_tags) == ("127.0.0.1:7000", 5)
    assert (s.embed_batch, s.log_level, s.sweep_batch) == (8, "DEBUG", 3)
    assert s.limits.max_key_bytes == Limits().max_key_bytes
    assert settings_from(serve_parser().parse_args([]), {}).log_level == "INFO"


def test_serve_flags_check_their_values() -> None:
    for argv in (["--max-tags", "many"], ["--quota-policy", "drop"], ["--log-format", "xml"]):
        with pytest.raises(SystemExit):
            serve_parser().parse_args(argv)


def test_docs_configuration_is_what_the_script_generates() -> None:
    spec = importlib.util.spec_from_file_location("gen_settings_doc", SCRIPT)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = ROOT / "docs" / "configuration.md"
    assert committed.read_text() == gen.render(), (
        "docs/configuration.md drifted from the settings: run python scripts/gen_settings_doc.py"
    )
