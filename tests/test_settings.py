"""Settings come from SHAREDCTX_* variables, with flags on top; `serve`'s flags and
docs/configuration.md are generated from the settings' own descriptions."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import fields, replace
from pathlib import Path

import pytest
from sharedctx_server.cli import SERVE, settings_from
from sharedctx_server.errors import ConfigError
from sharedctx_server.settings import Limits, Rule, Setting, Settings, reference

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


def test_a_value_that_does_not_parse_names_the_flag_and_variable_and_what_is_allowed() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"SHAREDCTX_DEFAULT_TTL_SECONDS": "soon"})
    assert str(caught.value) == (
        "--default-ttl-seconds / SHAREDCTX_DEFAULT_TTL_SECONDS must be an integer >= 0 "
        "(0 = never), got 'soon'"
    )
    with pytest.raises(ConfigError, match="SHAREDCTX_EXCERPTS must be true or false"):
        Settings.from_env({"SHAREDCTX_EXCERPTS": "maybe"})


def rule_of(setting: Setting) -> Rule | None:
    owner = Limits if setting.name in Limits.__dataclass_fields__ else Settings
    rule: Rule | None = owner.__dataclass_fields__[setting.name].metadata["rule"]
    return rule


CHECKED = [s for s in reference() if rule_of(s) is not None]
# A value each checked setting refuses: every number has a lower bound of 0 or more, and no
# string rule takes a bare word.
BAD = {"int": "-1", "float": "-1", "str": "bogus"}


def names(setting: Setting) -> str:
    return f"{setting.flag} / {setting.env}" if setting.flag else setting.env


def test_every_number_and_every_setting_with_choices_is_checked() -> None:
    checked = {s.name for s in CHECKED}
    assert {s.name for s in reference() if s.kind in ("int", "float") or s.choices} <= checked
    assert {"listen", "redis_url", "workers", "metrics_listen"} <= checked


@pytest.mark.parametrize("setting", CHECKED, ids=[s.name for s in CHECKED])
def test_a_bad_environment_value_is_refused_naming_the_flag_and_the_variable(
    setting: Setting,
) -> None:
    bad = BAD[setting.kind]
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({setting.env: bad})
    message = str(caught.value)
    assert message.startswith(f"{names(setting)} must be "), message
    assert (rule := rule_of(setting)) is not None
    assert re.search(f"must be {re.escape(rule.says)}, got (-1|-1.0|'bogus')$", message), message


FLAGGED = [s for s in CHECKED if s.flag]


@pytest.mark.parametrize("setting", FLAGGED, ids=[s.name for s in FLAGGED])
def test_a_bad_flag_value_is_refused_naming_the_flag_and_the_variable(setting: Setting) -> None:
    assert setting.flag is not None
    args = serve_parser().parse_args([setting.flag, BAD[setting.kind]])
    with pytest.raises(ConfigError, match=f"^{re.escape(names(setting))} must be "):
        settings_from(args, env={})


# The numbers where 0 means something (off, unlimited, never, all cores...); every other one
# must be above 0.
ZERO_ALLOWED = {
    "default_ttl_seconds",
    "namespace_max_entries",
    "namespace_max_bytes",
    "max_tags",
    "embedding_dim",
    "embedding_threads",
    "excerpt_min_tokens",
    "grace_seconds",
    "embed_wait_ms",
    "auth_reload_seconds",
}


@pytest.mark.parametrize(
    "setting",
    [s for s in reference() if s.kind in ("int", "float")],
    ids=lambda s: s.name,
)
def test_zero_is_allowed_only_where_it_means_something(setting: Setting) -> None:
    env = {setting.env: "0"}
    if setting.name in ZERO_ALLOWED:
        Settings.from_env(env)
    else:
        with pytest.raises(ConfigError, match=f"{setting.env} must be a"):
            Settings.from_env(env)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SHAREDCTX_QUOTA_POLICY": "bogus"}, "must be one of reject, evict_oldest, got 'bogus'"),
        ({"SHAREDCTX_LOG_FORMAT": "xml"}, "must be one of text, json, got 'xml'"),
        ({"SHAREDCTX_MAX_PAGE_SIZE": "-5"}, "must be a positive integer, got -5"),
        ({"SHAREDCTX_EMBED_BATCH": "0"}, "SHAREDCTX_EMBED_BATCH must be a positive integer"),
        ({"SHAREDCTX_GRACE_SECONDS": "nan"}, "must be a number >= 0, got nan"),
        ({"SHAREDCTX_EXPIRY_POLL_SECONDS": "inf"}, "must be a number > 0, got inf"),
        ({"SHAREDCTX_MAX_BATCH_BYTES": str(2**31)}, "must be an integer from 1 to 2146435071"),
        ({"SHAREDCTX_WORKERS": "0"}, "must be a positive integer or auto, got '0'"),
        (
            {"SHAREDCTX_LOG_LEVEL": "loud"},
            "DEBUG, INFO, WARNING, ERROR, CRITICAL, WARN, FATAL, NOTSET (any case)",
        ),
        ({"SHAREDCTX_REDIS_URL": "http://redis:6379"}, "a redis://, rediss:// or unix:// URL"),
        ({"SHAREDCTX_LISTEN": "localhost"}, "HOST:PORT (e.g. 127.0.0.1:50051) or unix:PATH"),
        ({"SHAREDCTX_METRICS_LISTEN": ":9090"}, "HOST:PORT (e.g. 127.0.0.1:9090), got ':9090'"),
        (
            {"SHAREDCTX_DEFAULT_PAGE_SIZE": "5000"},
            "--default-page-size / SHAREDCTX_DEFAULT_PAGE_SIZE (5000) must be at most "
            "--max-page-size / SHAREDCTX_MAX_PAGE_SIZE (1000)",
        ),
    ],
)
def test_refused_values_say_what_is_allowed(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Settings.from_env(env)


def test_values_people_write_are_accepted() -> None:
    s = Settings.from_env(
        {
            "SHAREDCTX_LOG_LEVEL": "debug",
            "SHAREDCTX_WORKERS": " AUTO ",
            "SHAREDCTX_LISTEN": "[::]:0",
            "SHAREDCTX_REDIS_URL": "rediss+cluster://:secret@redis-node-0:6379/0",
            "SHAREDCTX_METRICS_LISTEN": "[::1]:9090",
        }
    )
    assert (s.log_level, s.workers) == ("debug", " AUTO ")
    assert Settings(listen="unix:/run/sharedctx.sock").listen == "unix:/run/sharedctx.sock"
    # The other names Python's logging takes still work, as they did before the check.
    assert [Settings(log_level=name).log_level for name in ("warn", "FATAL")] == ["warn", "FATAL"]
    # An empty optional one is unset, as an empty variable is.
    assert Settings(redis_url="", metrics_listen="").redis_url == ""


def test_settings_built_any_way_are_checked() -> None:
    with pytest.raises(ConfigError, match="--embed-queue / SHAREDCTX_EMBED_QUEUE"):
        Settings(embed_queue=0)
    with pytest.raises(ConfigError, match="--max-tag-bytes / SHAREDCTX_MAX_TAG_BYTES"):
        replace(Settings(), limits=Limits(max_tag_bytes=0))


def test_the_choices_are_the_ones_the_server_implements() -> None:
    from sharedctx_server.edge.logs import FORMATS
    from sharedctx_server.embedding.spec import COMPUTE_MODES
    from sharedctx_server.state.quotas import POLICIES
    from sharedctx_server.tokens import SUPPORTED_ENCODINGS

    choices = {s.name: s.choices for s in reference()}
    assert choices["token_encoding"] == SUPPORTED_ENCODINGS
    assert choices["embedding_compute"] == COMPUTE_MODES
    assert choices["log_format"] == FORMATS
    assert choices["quota_policy"] == POLICIES


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (
            [],
            {"SHAREDCTX_MAX_PAGE_SIZE": "-5"},
            "--max-page-size / SHAREDCTX_MAX_PAGE_SIZE must be a positive integer, got -5",
        ),
        (
            ["--quota-policy", "bogus"],
            {},
            "--quota-policy / SHAREDCTX_QUOTA_POLICY must be one of reject, evict_oldest, "
            "got 'bogus'",
        ),
    ],
    ids=["env", "flag"],
)
def test_serve_refuses_a_bad_value_before_starting_anything(
    tmp_path: Path, argv: list[str], env: dict[str, str], message: str
) -> None:
    data_dir, cache_dir = tmp_path / "data", tmp_path / "cache"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SHAREDCTX_")}
    # Were the server to start, the embedded Valkey would create data_dir.
    clean.update(env, SHAREDCTX_DATA_DIR=str(data_dir), SHAREDCTX_CACHE_DIR=str(cache_dir))
    done = subprocess.run(
        [sys.executable, "-m", "sharedctx.cli", "serve", "--listen", "127.0.0.1:0", *argv],
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard: a refused value returns at once
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"sharedctx serve: error: {message}\n"
    assert not data_dir.exists() and not cache_dir.exists()


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
        "worker_stall_seconds",
        "max_workers",
    }
    assert all(s.meaning and s.default for s in settings)


def test_each_flag_sets_its_setting() -> None:
    defaults = Settings()
    argv: list[str] = []
    expected: dict[str, object] = {}
    samples = {"int": ("7", 7), "float": ("2.5", 2.5), "path": ("/srv/x", Path("/srv/x"))}
    # Strings with a form of their own.
    formed = {
        "listen": "127.0.0.1:7000",
        "redis_url": "redis://example:6379/0",
        "workers": "3",
        "metrics_listen": "127.0.0.1:9100",
    }
    for s in reference():
        if s.flag is None:
            continue
        if s.kind == "bool":
            default = getattr(defaults, s.name)
            argv.append(f"--no-{s.flag[2:]}" if default else s.flag)
            expected[s.name] = not default
        else:
            word = formed.get(s.name, s.choices[-1] if s.choices else "abc")
            text, value = samples.get(s.kind, (word, word))
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
    with pytest.raises(SystemExit):  # argparse: not a number at all
        serve_parser().parse_args(["--max-tags", "many"])
    for argv in (["--quota-policy", "drop"], ["--log-format", "xml"], ["--log-level", "loud"]):
        with pytest.raises(ConfigError, match=f"^{argv[0]} / SHAREDCTX_"):
            settings_from(serve_parser().parse_args(argv), env={})
    assert settings_from(serve_parser().parse_args(["--log-level", "debug"]), {}).log_level == (
        "debug"
    )


def test_serve_help_shows_the_choices() -> None:
    text = serve_parser().format_help()
    assert "--quota-policy {reject,evict_oldest}" in text
    assert "--log-format {text,json}" in text


def test_docs_configuration_is_what_the_script_generates() -> None:
    spec = importlib.util.spec_from_file_location("gen_settings_doc", SCRIPT)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = ROOT / "docs" / "configuration.md"
    assert committed.read_text() == gen.render(), (
        "docs/configuration.md drifted from the settings: run python scripts/gen_settings_doc.py"
    )
