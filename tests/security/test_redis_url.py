"""Redis's password and TLS go through the Redis URL (redis://:password@..., rediss://...)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sharedctx import UnavailableError
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from ..support.redis_servers import LocalRedis, free_port, server_binary
from ..support.servers import serving
from .certs import Pki

NS = "team-a/session-42"
PASSWORD = "s3cret-redis-password"


@pytest.fixture
def password_redis(tmp_path: Path) -> Iterator[LocalRedis]:
    server = LocalRedis(data_dir=tmp_path / "redis", password=PASSWORD).start()
    yield server
    server.stop()


async def test_a_password_protected_redis_works_through_the_url(
    settings: Settings, token_counter: TokenCounter, password_redis: LocalRedis
) -> None:
    assert f":{PASSWORD}@" in password_redis.url
    async with serving(settings, token_counter, redis_url=password_redis.url) as (_, client):
        await client.put(NS, "k", "behind a password")
        assert (await client.get(NS, "k", full=True)).content == "behind a password"


async def test_a_wrong_redis_password_is_unavailable_not_a_crash(
    settings: Settings, token_counter: TokenCounter, password_redis: LocalRedis
) -> None:
    url = f"redis://:wrong@127.0.0.1:{password_redis.port}/0"
    async with serving(settings, token_counter, redis_url=url) as (_, client):
        with pytest.raises(UnavailableError, match="Redis is unavailable"):
            await client.put(NS, "k", "v", timeout=8)


@pytest.fixture
def tls_redis(tmp_path: Path, pki: Pki) -> Iterator[int]:
    """A Redis serving TLS only (with a password), or a skip when the binary lacks TLS."""
    port = free_port()
    proc = subprocess.Popen(
        [server_binary(), "--bind", "127.0.0.1", "--port", "0", "--tls-port", str(port),
         "--tls-cert-file", str(pki.server.cert), "--tls-key-file", str(pki.server.key),
         "--tls-ca-cert-file", str(pki.ca), "--tls-auth-clients", "no",
         "--requirepass", PASSWORD, "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"rediss://:{PASSWORD}@127.0.0.1:{port}/0?ssl_ca_certs={pki.ca}"
    deadline = time.monotonic() + 20
    try:
        while True:
            if proc.poll() is not None:
                pytest.skip(
                    "this Redis binary was built without TLS (Debian's redis-server has it)"
                )
            try:
                if redis.Redis.from_url(url, socket_timeout=0.5).ping():
                    break
            except redis.exceptions.RedisError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(20)


async def test_a_tls_redis_works_through_a_rediss_url(
    settings: Settings, token_counter: TokenCounter, tls_redis: int, pki: Pki
) -> None:
    url = f"rediss://:{PASSWORD}@127.0.0.1:{tls_redis}/0?ssl_ca_certs={pki.ca}"
    async with serving(settings, token_counter, redis_url=url) as (_, client):
        await client.put(NS, "k", "over TLS to Redis")
        assert (await client.get(NS, "k", full=True)).content == "over TLS to Redis"
