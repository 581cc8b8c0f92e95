"""google-adk's Runner.rewind_async, observed: the reference for agentq's tests/runtime/test_rewind.py.

Runs only with bench/.adk-venv's python:  bench/.adk-venv/bin/python bench/adk_side/rewind_scenario.py
Prints one JSON document: state, artifacts, the rewind event's wire form, who answers next and what the
model is shown then. tests/runtime/test_rewind.py runs the same scenario on agentq and expects these values.

The scenario: invocation 1 (root calls `note`: session, app: and user: state, a session and a user:
artifact); invocation 2 (root transfers to helper, which calls `note` again and saves a new artifact);
then a rewind to before invocation 2, and invocation 3.
"""

import asyncio
import json

from google.adk.agents import LlmAgent
from google.adk.errors.not_found_error import NotFoundError
from google.adk.models import BaseLlm, LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools import ToolContext
from google.genai import types

SEEN: list[tuple[str, list[str]]] = []  # (agent's model, what each content of its request says)


def said(content: types.Content) -> str:
    part = content.parts[0]
    if part.text is not None:
        return f"{content.role}: {part.text}"
    if part.function_call:
        return f"{content.role}: call {part.function_call.name}"
    return f"{content.role}: response {part.function_response.name}"


class QueueLlm(BaseLlm):
    """Answers each model call with the next of ``answers`` and notes what the request showed."""

    answers: list

    async def generate_content_async(self, llm_request, stream=False):
        SEEN.append((self.model, [said(c) for c in llm_request.contents]))
        answer = self.answers.pop(0)
        if isinstance(answer, str):
            part = types.Part(text=answer)
        else:
            part = types.Part(function_call=types.FunctionCall(name=answer[0], args=answer[1]))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


async def note(value: str, tool_context: ToolContext) -> dict:
    """Writes state of every scope and saves artifacts."""
    state = tool_context.state
    state["count"] = state.get("count", 0) + 1
    state["app:hits"] = state.get("app:hits", 0) + 1
    state["user:seen"] = state.get("user:seen", 0) + 1
    if value == "two":
        state["extra"] = "added in two"
        await tool_context.save_artifact("later.txt", types.Part(text="later"))
    await tool_context.save_artifact("notes.txt", types.Part(text=f"notes {value}"))
    await tool_context.save_artifact("user:profile.txt", types.Part(text=f"profile {value}"))
    return {"ok": value}


async def main() -> None:
    helper = LlmAgent(name="helper", model=QueueLlm(model="helper-model", answers=[
        ("note", {"value": "two"}), "helper done two", "helper three"]), tools=[note])
    root = LlmAgent(name="root", model=QueueLlm(model="root-model", answers=[
        ("note", {"value": "one"}), "root done one", ("transfer_to_agent", {"agent_name": "helper"}),
        "root three"]), tools=[note], sub_agents=[helper])
    runner = InMemoryRunner(agent=root, app_name="app")
    service = runner.session_service
    session = await service.create_session(app_name="app", user_id="u", state={"base": 1})

    async def turn(text):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)]

    first = await turn("one")
    second = await turn("two")
    before = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    await runner.rewind_async(user_id="u", session_id=session.id,
                              rewind_before_invocation_id=second[0].invocation_id)
    after = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    rewind = after.events[-1]
    seen_before_three = len(SEEN)
    third = await turn("three")
    try:
        await runner.rewind_async(user_id="u", session_id=session.id, rewind_before_invocation_id="e-nope")
        unknown = None
    except NotFoundError as exc:
        unknown = [type(exc).__name__, isinstance(exc, ValueError), str(exc)]

    artifacts = runner.artifact_service

    async def load(name, version=None):
        part = await artifacts.load_artifact(app_name="app", user_id="u", session_id=session.id,
                                             filename=name, version=version)
        return None if part is None else (part.text if part.text is not None else repr(part.inline_data))

    async def versions(name):
        return await artifacts.list_versions(app_name="app", user_id="u", session_id=session.id, filename=name)

    print(json.dumps({
        "invocations": [first[0].invocation_id == e.invocation_id for e in first].count(True),
        "state_before_rewind": dict(before.state),
        "state_after_rewind": dict(after.state),
        "rewind_event": json.loads(rewind.model_dump_json(by_alias=True, exclude_none=True,
                                                          exclude={"id", "timestamp", "invocation_id"})),
        "rewind_event_invocation_is_new": rewind.invocation_id not in (first[0].invocation_id,
                                                                       second[0].invocation_id),
        "events_after_rewind": len(after.events),
        "third_authors": [e.author for e in third],
        "model_calls_of_three": SEEN[seen_before_three:],
        "artifact_keys": await artifacts.list_artifact_keys(app_name="app", user_id="u", session_id=session.id),
        "notes_latest": await load("notes.txt"),
        "notes_versions": await versions("notes.txt"),
        "notes_v1": await load("notes.txt", 1),
        "later_latest": await load("later.txt"),
        "later_versions": await versions("later.txt"),
        "later_v0": await load("later.txt", 0),
        "later_v1": await load("later.txt", 1),
        "profile_latest": await load("user:profile.txt"),
        "state_after_three": dict((await service.get_session(app_name="app", user_id="u",
                                                             session_id=session.id)).state),
        "unknown_invocation": unknown,
    }, indent=1, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
