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
# joins the user's own; a test about the default sets XDG_DATA_HOME or AGENTQ_DATA_DIR itself. Under pytest-xdist
# each test process gets its own (the workers inherit the controller's environment, and two processes' tests
# must not start, stop or flush one embedded Redis between them); a directory the caller named is kept.
_OWN_DATA_DIR = "AGENTQ_TESTS_OWN_DATA_DIR"
if os.environ.get("AGENTQ_DATA_DIR", "") in ("", os.environ.get(_OWN_DATA_DIR)):
    _worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    os.environ["AGENTQ_DATA_DIR"] = os.environ[_OWN_DATA_DIR] = tempfile.mkdtemp(
        prefix=f"agentq-tests-data-{_worker}-")


SERIAL_FILES = (
    "tests/api/test_rate_limits.py",  # token buckets refilled by the clock: 5 requests within a refill
    "tests/e2e/test_adk_dev_ui.py",  # headless Chromium: page loads and waits under the whole machine's load
    "tests/e2e/test_approver_signin_ui.py",
    "tests/e2e/test_inbox_ui.py",
    "tests/e2e/test_quick_answers_ui.py",
    "tests/e2e/test_schedules_ui.py",
    "tests/e2e/test_workflow_ui.py",
    "tests/deploy/test_compose_stack.py",  # six containers; .ci/run runs it on its own before `make test`
)
"""Files whose tests are marked ``serial`` here (so their own files need no edit); a new test of that kind
takes ``@pytest.mark.serial`` itself."""

XDIST_GROUPS = {
    # google-adk's conformance client only talks to 127.0.0.1:8000: its two tests take turns on one process.
    "tests/conformance/": "adk-port-8000",
}
"""``--dist loadgroup`` runs the tests of one group on one process, one after another. Every test using a
module-scoped fixture is grouped with its module's tests besides; any other test goes wherever a process is free."""


SLOW_FIRST = (
    "tests/upgrade/test_upgrade_from_previous_release.py",  # ~5 min, mostly waiting for a retention to pass
    "tests/worker/test_exact_counts.py::test_counts_stay_exact_over_100000",  # ~3-4 min of CPU
    "tests/worker/test_kill_storm.py",
    "tests/docs/test_code_blocks.py",  # a page's every command: up to 2 min a page
    "tests/worker/test_schedules_e2e.py",
    "tests/worker/test_cli_first_hour.py",
)
"""Tests that take minutes, moved to the front of the collection so that ``--dist loadgroup`` hands them out
first (after the groups of many tests, which xdist puts first itself): started last, the slowest of them alone
made the suite's tail, one process busy while the others had nothing left."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serial: runs alone, after the parallel part of `make test` (timing-sensitive: it measures "
        "rates, waits, or drives a browser); plain `pytest` runs it with the rest")


def _uses_module_scoped_fixture(item) -> bool:
    fixture_info = getattr(item, "_fixtureinfo", None)
    definitions = fixture_info.name2fixturedefs.values() if fixture_info else ()
    return any(definition.scope in ("module", "class") for defs in definitions for definition in defs)


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the test ids it schedules by
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)
        group = next((group for prefix, group in XDIST_GROUPS.items() if path.startswith(prefix)), None)
        if group is None and _uses_module_scoped_fixture(item):
            # A module's processes (a stack, a cluster) start once, on the process that runs all its tests,
            # not once on every process that is handed one of them.
            group = path
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=_slowness_rank)  # stable: the rest keep their order


def _slowness_rank(item) -> int:
    return next((rank for rank, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)), len(SLOW_FIRST))


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
