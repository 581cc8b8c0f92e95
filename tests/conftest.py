"""Shared fixtures: one real redis-server per test session, flushed before every test that asks for it."""

from __future__ import annotations

import os
import tempfile

import pytest

from runtime.redis_store.launcher import EmbeddedRedis

# Workers refuse to start without a webhook secret (signed webhooks by default): every worker process a test
# starts inherits this one unless the test sets its own.
os.environ.setdefault("AGENTQ_WEBHOOK_SECRET", "whsec_dGVzdC1zdWl0ZS13ZWJob29rLXNlY3JldA==")
# The embedded redis-server lives in the user's data directory (~/.local/share/agentq): a test never starts or
# joins the user's own; a test about the default sets XDG_DATA_HOME or AGENTQ_DATA_DIR itself.
os.environ.setdefault("AGENTQ_DATA_DIR", tempfile.mkdtemp(prefix="agentq-tests-data-"))


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """An EmbeddedRedis (AOF on) on a free port, running for the whole test session."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server) -> str:
    """The URL of the shared redis-server, FLUSHALLed so each test starts from an empty database."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server.url


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory):
    """A real three-master Redis Cluster (tests.redis_cluster), running for the whole test session."""
    from tests.redis_cluster import LocalRedisCluster

    with LocalRedisCluster(tmp_path_factory.mktemp("redis-cluster")) as cluster:
        yield cluster


@pytest.fixture
def redis_cluster_url(redis_cluster) -> str:
    """The ``redis+cluster://`` URL of the shared cluster, every master flushed so each test starts empty."""
    redis_cluster.flush()
    return redis_cluster.url
