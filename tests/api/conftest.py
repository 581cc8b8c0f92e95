"""In-process API fixtures: the FastAPI app over httpx's ASGI transport (real HTTP semantics, no socket)."""

from __future__ import annotations

import httpx
import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.deps import Services
from runtime.artifacts import InMemoryArtifactService
from runtime.sessions import InMemorySessionService

ALICE_KEY = "alice-key-0001"
BOB_KEY = "bob-key-000002"
KEYS = {ALICE_KEY: {"users": ["alice"], "apps": ["weather"]}, BOB_KEY: {"users": ["bob"], "apps": ["*"]}}


def make_client(app, *, host: str = "127.0.0.1", key: str | None = None) -> httpx.AsyncClient:
    """An AsyncClient talking to ``app`` in-process as if from ``host``."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    transport = httpx.ASGITransport(app=app, client=(host, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://agentq.test", headers=headers)


@pytest.fixture
def memory_services() -> Services:
    """In-memory session and artifact services, no queue."""
    return Services(session_service=InMemorySessionService(), artifact_service=InMemoryArtifactService())


@pytest.fixture
def open_app(memory_services):
    """An app with no keys (loopback only) serving 'weather' and 'reimbursement'."""
    return create_app(ApiSettings(app_names=["weather", "reimbursement"], max_body_bytes=10_000), memory_services)


@pytest.fixture
def keyed_app(memory_services):
    """An app with alice's and bob's keys."""
    settings = ApiSettings(app_names=["weather", "reimbursement"], keys=parse_keys(KEYS), max_body_bytes=10_000)
    return create_app(settings, memory_services)


class _NoBroker:
    """Run jobs go nowhere: the test plays the worker."""

    def send_task(self, *args, **kwargs) -> None:
        pass


@pytest.fixture
async def store(redis_url):
    """An invocation store on the test's redis-server whose run jobs go nowhere."""
    from worker.records.store import InvocationStore

    store = InvocationStore(redis_url, celery_app=_NoBroker())
    yield store
    await store.aclose()
