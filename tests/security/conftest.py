"""Fixtures for the security tests: a token file, a throwaway PKI, authenticated clients."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sharedctx import AsyncClient
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from ..support.servers import serving
from .certs import Pki, make_pki

# Token -> scope; each test picks the caller by token.
WRITER = "tok-agent-a-0123456789"  # team-a/: read + write
READER = "tok-auditor-0123456789"  # team-a/: read
LOGGER = "tok-logger-01234567890"  # team-a/logs/: write only
ADMIN = "tok-ops-admin-0123456789"  # every namespace: admin
HASHED = "tok-hashed-b-0123456789"  # team-b/: read + write, stored as its sha256 only

TOKEN_FILE: dict[str, Any] = {
    "tokens": [
        {"token": WRITER, "principal": "agent-a", "namespaces": ["team-a/"],
         "permissions": ["read", "write"]},
        {"token": READER, "principal": "auditor", "namespaces": ["team-a/"],
         "permissions": ["read"]},
        {"token": LOGGER, "principal": "logger", "namespaces": ["team-a/logs/"],
         "permissions": ["write"]},
        {"token": ADMIN, "principal": "ops", "namespaces": ["*"], "permissions": ["admin"]},
        {"token_sha256": hashlib.sha256(HASHED.encode()).hexdigest(), "principal": "agent-b",
         "namespaces": ["team-b/"], "permissions": ["read", "write"]},
    ]
}  # fmt: skip


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A CA with server and client certificates, and a rogue CA with its own client."""
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    """The auth token file of TOKEN_FILE."""
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(TOKEN_FILE))
    return path


ClientFor = Callable[[str | None], AbstractAsyncContextManager[AsyncClient]]


@pytest.fixture
async def auth_server(
    settings: Settings, token_counter: TokenCounter, token_file: Path
) -> AsyncIterator[RunningServer]:
    """A server with the token file's auth on."""
    async with serving(settings, token_counter, auth_tokens=token_file) as (running, _):
        yield running


@pytest.fixture
def client_for(auth_server: RunningServer) -> ClientFor:
    """`async with client_for(token) as c`: a client of `auth_server` sending `token`."""

    @asynccontextmanager
    async def make(token: str | None) -> AsyncIterator[AsyncClient]:
        async with AsyncClient(
            f"127.0.0.1:{auth_server.port}", timeout=10, retries=0, token=token
        ) as client:
            yield client

    return make
