"""One real stack for the e2e tests: redis-server, an ``agentq worker`` and an ``agentq api`` process."""

from __future__ import annotations

import json

import httpx
import pytest

from agentq.demo import EXAMPLE_APPS
from agentq.local_stack import LocalStack

ALICE_KEY = "e2e-alice-key"
BOB_KEY = "e2e-bob-key-2"
ADMIN_KEY = "e2e-admin-key"
ANSWER_ONLY_KEY = "e2e-answer-only-key"
"""Holds ``read`` and ``answer`` only: answers parked calls, starts nothing."""
KEYS = {
    ALICE_KEY: {"users": ["alice"], "apps": ["reimbursement", "weather"]},
    BOB_KEY: {"users": ["bob"], "apps": ["*"]},
    ADMIN_KEY: {"users": ["*"], "apps": ["*"]},
    ANSWER_ONLY_KEY: {"users": ["*"], "apps": ["*"], "roles": ["read", "answer"]},
}


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    """The running stack (keys configured, so every request needs a bearer key)."""
    local = LocalStack(tmp_path_factory.mktemp("e2e"), apps=EXAMPLE_APPS, api_keys_json=json.dumps(KEYS),
                       extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


def client(stack: LocalStack, key: str) -> httpx.AsyncClient:
    """An HTTP client of the stack's API with ``key``."""
    return httpx.AsyncClient(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def user_message(text: str) -> dict:
    """A user Content as JSON."""
    return {"role": "user", "parts": [{"text": text}]}
