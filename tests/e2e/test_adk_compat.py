"""ADK's /run and /run_sse over real HTTP: the frames and bodies an ADK client reads."""

from __future__ import annotations

import uuid

from runtime.events import Event

from .conftest import ALICE_KEY, client, user_message


async def _session(http) -> str:
    session_id = "adk-" + uuid.uuid4().hex[:8]
    response = await http.post(f"/apps/weather/users/alice/sessions/{session_id}", json={"unit": "C"})
    assert response.status_code == 200, response.text
    return session_id


async def test_run_sse_sends_data_frames_that_parse_as_events(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = await _session(http)
        body = {"appName": "weather", "userId": "alice", "sessionId": session_id,
                "newMessage": user_message("What is the weather in Paris?"), "streaming": False}
        async with http.stream("POST", "/run_sse", json=body) as response:
            raw = (await response.aread()).decode()
    frames = [chunk for chunk in raw.split("\n\n") if chunk and not chunk.startswith(":")]
    assert all(frame.startswith("data: ") and "\n" not in frame for frame in frames)
    events = [Event.model_validate_json(frame[len("data: "):]) for frame in frames]
    said = [e for e in events if e.content]  # the runtime may close with an actions-only end_of_agent event
    assert all(e.actions.end_of_agent for e in events if not e.content)
    assert [e.author for e in said] == ["weather_agent", "weather_agent", "weather_agent"]
    assert [c.name for c in said[0].get_function_calls()] == ["get_weather"]
    assert [r.name for r in said[1].get_function_responses()] == ["get_weather"]
    assert said[-1].is_final_response() and said[-1].text() == "The weather in Paris is sunny, 21°C."


async def test_run_returns_the_committed_events_and_the_session_holds_them(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = await _session(http)
        body = {"app_name": "weather", "user_id": "alice", "session_id": session_id,
                "new_message": user_message("What is the weather in London?")}
        response = await http.post("/run", json=body)
        session = (await http.get(f"/apps/weather/users/alice/sessions/{session_id}")).json()
    events = [Event.model_validate(item) for item in response.json()]
    assert response.status_code == 200
    assert [e.text() for e in events if e.content][-1] == "The weather in London is light rain, 14°C."
    assert [e["id"] for e in session["events"]][1:] == [e.id for e in events]
    assert session["events"][0]["author"] == "user" and session["state"] == {"unit": "C"}


async def test_run_on_a_missing_session_is_a_404(stack):
    async with client(stack, ALICE_KEY) as http:
        body = {"appName": "weather", "userId": "alice", "sessionId": "missing",
                "newMessage": user_message("hi")}
        response = await http.post("/run", json=body)
    assert (response.status_code, response.json()["error"]) == (404, "SessionNotFoundError")


async def test_an_adk_client_resumes_a_parked_call_by_sending_the_function_response_to_run_sse(stack):
    async with client(stack, ALICE_KEY) as http:
        session_id = "adk-" + uuid.uuid4().hex[:8]
        await http.post(f"/apps/reimbursement/users/alice/sessions/{session_id}")
        base = {"appName": "reimbursement", "userId": "alice", "sessionId": session_id}
        first = await http.post("/run", json={**base, "newMessage": user_message("Reimburse $500 for a laptop.")})
        call = next(c for e in first.json() for c in Event.model_validate(e).get_function_calls())
        answer = {"role": "user", "parts": [{"functionResponse": {
            "id": call.id, "name": call.name, "response": {"status": "approved"}}}]}
        async with http.stream("POST", "/run_sse", json={**base, "newMessage": answer}) as response:
            resumed_id = response.headers["x-invocation-id"]
            raw = (await response.aread()).decode()
    frames = [chunk for chunk in raw.split("\n\n") if chunk.startswith("data: ")]
    events = [Event.model_validate_json(frame[len("data: "):]) for frame in frames]
    said = [e for e in events if e.content]
    assert call.name == "ask_for_approval"
    assert resumed_id == Event.model_validate(first.json()[0]).invocation_id
    assert {e.invocation_id for e in events} == {resumed_id}
    assert [c.name for c in said[0].get_function_calls()] == ["reimburse"]
    assert said[-1].text() == "Paid $500.00 for a laptop."
