"""Rewinding a session over HTTP (``POST .../sessions/{sid}/rewind``) on the real stack (redis-server, an
``agentq worker``, an ``agentq api``) gives what ``Runner.rewind_async`` gives on the in-memory runner for the
same conversation: the same state, the same live history and the same artifacts."""

from __future__ import annotations

import httpx
import pytest
from google.genai import types

from agentq.local_stack import LocalStack
from runtime.events import Event
from runtime.events.rewinds import live_events
from runtime.runners import InMemoryRunner
from tests.e2e.rewind_apps import notes_app

pytestmark = pytest.mark.timeout(180)
NOTES = ["alpha", "beta", "gamma"]
INITIAL_STATE = {"tier": "gold"}
SESSIONS = "/apps/notes/users/ann/sessions"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    local = LocalStack(tmp_path_factory.mktemp("rewind"), apps=["tests.e2e.rewind_apps:notes_app"],
                       extra_env={"GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    with local:
        yield local


def _shape(events: list[Event]) -> list[tuple]:
    """What a rewind decides about each event: who said it, and what (text, calls, responses)."""
    return [(event.author, [(p.text, p.function_call and p.function_call.args,
                             p.function_response and p.function_response.response)
                            for p in (event.content.parts if event.content else [])]) for event in events]


async def _in_memory_rewound() -> tuple[dict, list[tuple], dict]:
    runner = InMemoryRunner(app=notes_app)
    session = await runner.session_service.create_session(app_name="notes", user_id="ann", state=INITIAL_STATE)
    invocations = []
    for note in NOTES:
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.UserContent(parts=[types.Part(text=note)])):
            invocations.append(event.invocation_id)
    await runner.rewind_async(user_id="ann", session_id=session.id,
                              rewind_before_invocation_id=list(dict.fromkeys(invocations))[1])
    session = await runner.session_service.get_session(app_name="notes", user_id="ann", session_id=session.id)
    artifacts = {}
    for name in ("notes.txt", "second.txt"):
        part = await runner.artifact_service.load_artifact(app_name="notes", user_id="ann", session_id=session.id,
                                                           filename=name)
        artifacts[name] = None if part is None else part.text
    return session.state, _shape(live_events(session.events)), artifacts


async def test_a_rewind_over_http_puts_back_state_history_and_artifacts_as_rewind_async_does(stack):
    async with httpx.AsyncClient(base_url=stack.base_url, timeout=60) as http:
        session_id = (await http.post(SESSIONS, json={"state": INITIAL_STATE})).json()["id"]
        invocations = []
        for note in NOTES:
            events = (await http.post("/run", json={"appName": "notes", "userId": "ann", "sessionId": session_id,
                                                    "newMessage": {"role": "user", "parts": [{"text": note}]}})).json()
            invocations.append(events[0]["invocationId"])
        before = (await http.get(f"{SESSIONS}/{session_id}")).json()
        rewound = await http.post(f"{SESSIONS}/{session_id}/rewind",
                                  json={"rewindBeforeInvocationId": invocations[1]})
        stored = (await http.get(f"{SESSIONS}/{session_id}")).json()
        artifacts = {}
        for name in ("notes.txt", "second.txt"):
            answer = await http.get(f"{SESSIONS}/{session_id}/artifacts/{name}")
            artifacts[name] = answer.json()["text"] if answer.status_code == 200 else answer.status_code
        again = (await http.post("/run", json={"appName": "notes", "userId": "ann", "sessionId": session_id,
                                               "newMessage": {"role": "user", "parts": [{"text": "delta"}]}})).json()
        after_run = (await http.get(f"{SESSIONS}/{session_id}")).json()
    assert rewound.status_code == 200 and rewound.json()["state"] == stored["state"]
    assert before["state"] == {"tier": "gold", "notes": 3, "last_note": "gamma"}
    state, shape, in_memory_artifacts = await _in_memory_rewound()
    assert stored["state"] == state == {"tier": None, "notes": 1, "last_note": "alpha"}
    assert _shape(live_events([Event.model_validate(event) for event in stored["events"]])) == shape
    assert in_memory_artifacts == {"notes.txt": "alpha", "second.txt": None}
    assert artifacts == {"notes.txt": "alpha", "second.txt": 404}
    # the next turn runs on the rewound session: its counter goes on from the first note
    assert again[-1]["content"]["parts"][0]["text"] == "Saved 'delta'."
    assert (after_run["state"]["notes"], after_run["state"]["last_note"]) == (2, "delta")
