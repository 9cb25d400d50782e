"""Fixtures that point the store tests at a real local Redis Cluster instead of a single Redis.

They override the root conftest's `redis_url`, `clean_redis` and `settings`, so the root's
`server`, `client` and `threaded_server` fixtures, and test functions imported from the
single-Redis test modules, run unchanged against the cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sharedctx_server.settings import Settings

from ..support.redis_cluster import LocalCluster, require_binaries


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """Three masters on loopback ports, for the whole session."""
    reason = require_binaries()
    if reason is not None:
        pytest.skip(reason)
    cluster = LocalCluster().start()
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def redis_url(redis_cluster: LocalCluster) -> str:
    """The cluster as a redis+cluster:// URL (what a server started by URL alone is given)."""
    return redis_cluster.cluster_url


@pytest.fixture
def clean_redis(redis_cluster: LocalCluster, redis_url: str) -> str:
    """The cluster, every master emptied before the test."""
    redis_cluster.flushall()
    return redis_url


@pytest.fixture
def settings(redis_cluster: LocalCluster, clean_redis: str, tmp_path: Path) -> Settings:
    """Settings for an in-process server on the cluster: a plain node URL plus redis_cluster."""
    return Settings(
        listen="127.0.0.1:0",
        redis_url=redis_cluster.url,
        redis_cluster=True,
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
        health_interval_seconds=0.1,
        grace_seconds=1.0,
    )
