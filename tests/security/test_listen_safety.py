"""An open server (no auth) only on loopback, unless explicitly told the network is trusted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sharedctx_server.errors import ConfigError
from sharedctx_server.security.auth import check_listen_is_safe, is_loopback
from sharedctx_server.server import start
from sharedctx_server.settings import Settings


@pytest.mark.parametrize(
    ("listen", "loopback"),
    [
        ("127.0.0.1:50051", True),
        ("127.0.0.2:0", True),
        ("localhost:50051", True),
        ("[::1]:50051", True),
        ("unix:/run/sharedctx.sock", True),
        ("0.0.0.0:50051", False),
        ("[::]:50051", False),
        (":50051", False),
        ("10.1.2.3:50051", False),
        ("myhost.internal:50051", False),
    ],
)
def test_loopback_addresses_are_recognised(listen: str, loopback: bool) -> None:
    assert is_loopback(listen) is loopback


def test_a_network_address_without_auth_is_refused_with_how_to_fix() -> None:
    with pytest.raises(ConfigError) as info:
        check_listen_is_safe(Settings(listen="0.0.0.0:50051"))
    message = str(info.value)
    for hint in ("--auth-tokens", "SHAREDCTX_AUTH_TOKENS", "--jwt-key", "--insecure"):
        assert hint in message


@pytest.mark.parametrize(
    "extra",
    [
        {"insecure": True},
        {"auth_tokens": Path("/run/secrets/tokens.json")},
        {"jwt_key": Path("/run/secrets/jwt.pub")},
        {"tls_client_ca": Path("/tls/ca.crt")},
    ],
    ids=["insecure", "tokens", "jwt", "mtls"],
)
def test_a_network_address_is_allowed_with_auth_or_insecure(extra: dict[str, Any]) -> None:
    check_listen_is_safe(Settings(listen="0.0.0.0:50051", **extra))


async def test_start_refuses_before_starting_anything(tmp_path: Path) -> None:
    data_dir = tmp_path / "never-created"
    with pytest.raises(ConfigError, match="refusing to listen on 0.0.0.0:0"):
        await start(Settings(listen="0.0.0.0:0", data_dir=data_dir))
    # The embedded Redis was never started: the check comes first.
    assert not data_dir.exists()


def test_serve_exits_non_zero_at_once_with_the_message(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHAREDCTX_")}
    result = subprocess.run(
        [sys.executable, "-m", "sharedctx.cli", "serve", "--listen", "0.0.0.0:0",
         "--data-dir", str(tmp_path / "data")],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0:0 without authentication" in result.stderr
    assert "--insecure" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "data").exists()
