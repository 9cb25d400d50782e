"""The token file is re-read when it changes: tokens come and go without a restart."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from sharedctx import AsyncClient
from sharedctx.errors import UnauthenticatedError
from sharedctx_server.security.tokens import TokenFile
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from ..support.servers import serving, wait_until
from .conftest import TOKEN_FILE, WRITER

NEW = "tok-rotated-in-0123456789"


def write_tokens(path: Path, tokens: list[dict[str, Any]]) -> None:
    # Written beside and renamed into place, as a Secret update or a careful operator does.
    staging = path.with_suffix(".tmp")
    staging.write_text(json.dumps({"tokens": tokens}))
    os.replace(staging, path)


def rotated() -> list[dict[str, Any]]:
    """TOKEN_FILE without WRITER, plus NEW with WRITER's scope."""
    kept = [t for t in TOKEN_FILE["tokens"] if t.get("token") != WRITER]
    return [*kept, {"token": NEW, "principal": "agent-a", "namespaces": ["team-a/"],
                    "permissions": ["read", "write"]}]  # fmt: skip


async def test_a_rotated_token_file_takes_effect_without_a_restart(
    settings: Settings, token_counter: TokenCounter, token_file: Path
) -> None:
    async with serving(
        settings, token_counter, auth_tokens=token_file, auth_reload_seconds=0.05
    ) as (running, _):
        target = f"127.0.0.1:{running.port}"
        async with (
            AsyncClient(target, timeout=10, retries=0, token=WRITER) as old,
            AsyncClient(target, timeout=10, retries=0, token=NEW) as new,
        ):
            await old.put("team-a/s1", "k", "before the rotation")
            write_tokens(token_file, rotated())

            async def revoked() -> bool:
                try:
                    await old.get("team-a/s1", "k")
                except UnauthenticatedError:
                    return True
                return False

            await wait_until(revoked)
            assert (await new.get("team-a/s1", "k")).content == "before the rotation"

            # A broken edit keeps the last good tokens in force instead of locking agents out.
            token_file.write_text("{not json")
            await asyncio.sleep(0.2)
            assert (await new.get("team-a/s1", "k")).content == "before the rotation"
            with pytest.raises(UnauthenticatedError):
                await old.get("team-a/s1", "k")


def test_the_file_is_checked_at_most_once_per_interval(token_file: Path) -> None:
    now = [100.0]
    tokens = TokenFile(token_file, reload_seconds=5.0, clock=lambda: now[0])
    assert tokens.lookup(WRITER) is not None
    write_tokens(token_file, rotated())
    now[0] += 4.9
    assert tokens.lookup(WRITER) is not None  # not checked yet
    now[0] += 0.2
    assert tokens.lookup(WRITER) is None
    assert tokens.lookup(NEW) is not None


def test_reload_seconds_zero_reads_the_file_once(token_file: Path) -> None:
    now = [0.0]
    tokens = TokenFile(token_file, reload_seconds=0, clock=lambda: now[0])
    write_tokens(token_file, rotated())
    now[0] += 3600
    assert tokens.lookup(WRITER) is not None


def test_an_unreadable_file_keeps_the_last_good_tokens(
    token_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tokens = TokenFile(token_file, reload_seconds=1.0)
    token_file.write_text(json.dumps({"tokens": [{"token": "short", "principal": "x"}]}))
    assert tokens.refresh() is False
    assert tokens.lookup(WRITER) is not None
    assert "NOT reloaded" in caplog.text and "tokens[0]" in caplog.text


def test_unchanged_file_is_not_re_read(token_file: Path) -> None:
    tokens = TokenFile(token_file, reload_seconds=1.0)
    table = tokens.table
    assert tokens.refresh() is False
    assert tokens.table is table


def test_a_failed_reload_is_retried_at_the_next_interval(
    token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sharedctx_server.errors import ConfigError
    from sharedctx_server.security.tokens import TokenTable

    now = [0.0]
    tokens = TokenFile(token_file, reload_seconds=1.0, clock=lambda: now[0])
    write_tokens(token_file, rotated())
    real_load = TokenTable.load

    def too_many_open_files(path: Path, allow_empty: bool = False) -> TokenTable:
        raise ConfigError(f"cannot read the auth token file {path}: Too many open files")

    monkeypatch.setattr(TokenTable, "load", too_many_open_files)
    now[0] += 1.5
    assert tokens.lookup(NEW) is None  # the read failed: the old tokens stay in force
    monkeypatch.setattr(TokenTable, "load", real_load)
    now[0] += 1.5
    assert tokens.lookup(NEW) is not None  # same file, tried again, and now read
    assert tokens.lookup(WRITER) is None


def test_an_empty_token_list_on_reload_revokes_every_token(token_file: Path) -> None:
    now = [0.0]
    tokens = TokenFile(token_file, reload_seconds=1.0, clock=lambda: now[0])
    write_tokens(token_file, [])
    now[0] += 1.5
    assert tokens.lookup(WRITER) is None
    assert len(tokens) == 0


@pytest.mark.parametrize("verified", [False, True])
def test_client_cert_entries_reloaded_without_mtls_are_flagged(
    token_file: Path, caplog: pytest.LogCaptureFixture, verified: bool
) -> None:
    """At start such a file is refused; on reload it can only be warned about, loudly."""
    tokens = TokenFile(token_file, reload_seconds=1.0, certs_verified=verified)
    cert = {"client_cert": "uri:spiffe://team-a/agent", "principal": "agent-c",
            "namespaces": ["team-a/"], "permissions": ["read"]}  # fmt: skip
    write_tokens(token_file, [*rotated(), cert])
    assert tokens.refresh() is True
    assert ("does not verify client certificates" in caplog.text) is not verified
