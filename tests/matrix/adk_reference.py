"""Runs every matrix flow on google-adk 2.13's in-memory Runner and prints each session as JSON.

Run in bench/.adk-venv (``python tests/matrix/adk_reference.py``): it imports ``tests.matrix.flows`` with
``MATRIX_LIB=google.adk``, sends each flow's first message, answers every long-running call the run leaves
unanswered by the user with the flow's answer for that call's name (a new message, as a client of ADK's Runner does), and
prints ``{flow: {"events": [...], "state": {...}}}`` normalised by ``tests.matrix.normalise``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_TURNS = 6


async def run_flow(flows, name: str) -> dict:
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from tests.matrix.normalise import session_view

    spec = flows.FLOWS[name]
    runner = InMemoryRunner(app=spec.app)
    session = await runner.session_service.create_session(app_name=spec.app.name, user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=spec.message)])
    for _ in range(MAX_TURNS):
        asked, answered = {}, set()
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            for call in event.get_function_calls():
                if call.id in (event.long_running_tool_ids or ()):
                    asked[call.id] = call.name
            if event.author == "user":  # a long-running tool's own first response is not the person's answer
                answered.update(response.id for response in event.get_function_responses())
        waiting = {call_id: call_name for call_id, call_name in asked.items() if call_id not in answered}
        if not waiting:
            break
        message = types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(id=call_id, name=call_name,
                                                                response=spec.answers[call_name]))
            for call_id, call_name in waiting.items()])
    stored = await runner.session_service.get_session(app_name=spec.app.name, user_id="u", session_id=session.id)
    events = [event.model_dump(mode="json", by_alias=True, exclude_none=True) for event in stored.events]
    return session_view(events, dict(stored.state))


async def main() -> None:
    os.environ["MATRIX_LIB"] = "google.adk"
    sys.path.insert(0, str(ROOT))
    from tests.matrix import flows

    results = {}
    for name in flows.FLOWS:
        try:
            results[name] = await run_flow(flows, name)
        except Exception as exc:  # noqa: BLE001 - a flow google-adk refuses is compared as its error
            results[name] = {"raised": type(exc).__name__, "message": str(exc)}
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main())
