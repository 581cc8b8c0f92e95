"""Apps for tests/worker/test_fairness.py: ``flood``, whose model holds every invocation until the test opens a
gate (a Redis key), so its invocations keep their slots; and ``quick``, which answers at once."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator

from google.genai import types

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import BaseLlm, LlmRequest, LlmResponse, ScriptedLlm

GATE_KEY = "test:fair:gate_open"
GATE_POLL_S = 0.02


class GatedLlm(BaseLlm):
    """Answers once ``GATE_KEY`` is set in the store (``AGENTQ_REDIS_URL``); until then it waits, off the CPU."""

    model: str = "gated"

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        from runtime.redis_store.redis_url import redis_client_from_url

        client = redis_client_from_url(os.environ["AGENTQ_REDIS_URL"])
        try:
            while not await client.exists(GATE_KEY):
                await asyncio.sleep(GATE_POLL_S)
        finally:
            await client.aclose()
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="flood done")]))


flood_app = App(name="flood", root_agent=LlmAgent(name="flooder", model=GatedLlm()))
quick_app = App(name="quick", root_agent=LlmAgent(name="quick_agent", model=ScriptedLlm(turns=["at once"])))
