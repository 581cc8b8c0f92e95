"""LlmAgent(mode=...): chat, task and single_turn sub-agents, as google-adk 2.13 runs them.

The event sequences asserted here were observed on google-adk 2.13 with scripted models (see the report of
issue 17 item 2). Where agentq differs on purpose it is said next to the assertion.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field, RootModel, ValidationError

from runtime.agents import LlmAgent
from runtime.errors import InvalidAgentConfigError
from runtime.models import LlmRequest, ScriptedLlm, call
from runtime.runners import InMemoryRunner, Runner

from .helpers import USER, new_session, run, stored, summaries, user_text

FINISH_INSTRUCTION = (
    "Only call `finish_task` once the task you were given is entirely done: use your\ntools for every part of it "
    "first, and ask the user whenever something about the\ntask is unclear. When it is done, call `finish_task` "
    "alone, without any text."
)


class RecordingLlm(ScriptedLlm):
    """A ScriptedLlm that keeps every request it was sent."""

    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(self, llm_request, stream=False):
        self.requests.append(llm_request)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


def seen(request: LlmRequest) -> list[tuple[str, list[Any]]]:
    """The request's contents as (role, parts) with texts, calls and responses."""
    view = []
    for content in request.contents:
        parts: list[Any] = []
        for part in content.parts:
            if part.text is not None:
                parts.append(part.text)
            elif part.function_call:
                parts.append(("call", part.function_call.name, part.function_call.args))
            elif part.function_response:
                parts.append(("response", part.function_response.name, part.function_response.response))
        view.append((content.role, parts))
    return view


def declarations(request: LlmRequest) -> dict[str, Any]:
    """Tool name -> declaration sent in the request."""
    return {d.name: d for tool in request.config.tools or [] for d in tool.function_declarations}


def booking_tree(task_turns, coordinator_turns, **task_kwargs):
    booker = LlmAgent(name="booker", description="Books flights", instruction="You book flights.", mode="task",
                      model=RecordingLlm(turns=task_turns), **task_kwargs)
    coordinator = LlmAgent(name="coord", instruction="You coordinate.", sub_agents=[booker],
                           model=RecordingLlm(turns=coordinator_turns))
    return coordinator, booker


async def test_a_task_talks_with_the_user_over_two_turns_and_hands_its_result_back_to_the_coordinator():
    coordinator, booker = booking_tree(
        ["Which date?", call("finish_task", result="booked Paris May 3")],
        [call("booker", request="book a flight to Paris"), "Your flight is booked.", "You're welcome"])
    runner = InMemoryRunner(agent=coordinator, app_name="app")
    session = await new_session(runner)

    first = await run(runner, session, user_text("I want to fly to Paris"))
    assert summaries(first) == [
        ("coord", [("call", "booker", {"request": "book a flight to Paris"})]),
        ("booker", ["Which date?"]),
    ]
    call_id = first[0].get_function_calls()[0].id
    task_branch = f"booker@{call_id}"
    assert [event.branch for event in first] == [None, task_branch]

    second = await run(runner, session, user_text("May 3"))
    assert summaries(second) == [
        ("booker", [("call", "finish_task", {"result": "booked Paris May 3"})]),
        ("booker", [("response", "finish_task", {"result": "Task completed."})]),
        ("user", [("response", "booker", {"result": "booked Paris May 3"})]),
        ("coord", ["Your flight is booked."]),
    ]
    assert [event.branch for event in second] == [task_branch, task_branch, None, None]
    assert second[2].get_function_responses()[0].id == call_id

    third = await run(runner, session, user_text("thanks"))
    assert summaries(third) == [("coord", ["You're welcome"])]

    history = await stored(runner, session)
    # ADK stamps the reply with the task's isolation_scope (branch None); agentq puts it on the task's branch
    assert [(event.author, event.branch) for event in history if event.author == "user" and event.content.parts[0].text] == [
        ("user", None), ("user", task_branch), ("user", None)]


async def test_the_coordinators_model_sees_its_call_and_the_tasks_output_but_not_the_tasks_conversation():
    coordinator, booker = booking_tree(
        ["Which date?", call("finish_task", result="booked")],
        [call("booker", request="book Paris"), "Booked.", "Bye"])
    runner = InMemoryRunner(agent=coordinator, app_name="app")
    session = await new_session(runner)
    for text in ("Paris please", "May 3", "thanks"):
        await run(runner, session, user_text(text))

    assert [seen(request) for request in coordinator.model.requests] == [
        [("user", ["Paris please"])],
        [("user", ["Paris please"]), ("model", [("call", "booker", {"request": "book Paris"})]),
         ("user", [("response", "booker", {"result": "booked"})])],
        [("user", ["Paris please"]), ("model", [("call", "booker", {"request": "book Paris"})]),
         ("user", [("response", "booker", {"result": "booked"})]), ("model", ["Booked."]), ("user", ["thanks"])],
    ]


async def test_the_task_agents_model_sees_the_call_arguments_as_json_then_only_its_own_conversation():
    coordinator, booker = booking_tree(["Which date?", call("finish_task", result="ok")],
                                       [call("booker", request="book Paris"), "Done."])
    runner = InMemoryRunner(agent=coordinator, app_name="app")
    session = await new_session(runner)
    await run(runner, session, user_text("Paris please"))
    await run(runner, session, user_text("May 3"))

    assert [seen(request) for request in booker.model.requests] == [
        [("user", ['{"request": "book Paris"}'])],
        [("user", ['{"request": "book Paris"}']), ("model", ["Which date?"]), ("user", ["May 3"])],
    ]
    request = booker.model.requests[0]
    assert request.config.system_instruction == (
        'You book flights.\n\nYou are an agent. Your internal name is "booker". The description about you is '
        f'"Books flights".\n\n{FINISH_INSTRUCTION}')


async def test_the_coordinator_is_offered_the_task_as_a_tool_and_the_task_is_offered_finish_task():
    coordinator, booker = booking_tree(["Which date?"], [call("booker", request="x")])
    runner = InMemoryRunner(agent=coordinator, app_name="app")
    await run(runner, await new_session(runner), user_text("hi"))

    offered = declarations(coordinator.model.requests[0])
    assert list(offered) == ["booker"]  # a task agent is never a transfer target: no transfer_to_agent
    assert offered["booker"].description == (
        "Books flights\nNote: calling this tool hands the work to another agent; call it on its own, never "
        "together with other tools in one turn.")
    assert offered["booker"].parameters_json_schema == {
        "properties": {"request": {"description": "What the sub-agent should do, with every detail and bit of "
                                                  "context it needs.",
                                   "title": "Request", "type": "string"}},
        "required": ["request"], "title": "_DefaultTaskInput", "type": "object"}
    assert coordinator.model.requests[0].config.system_instruction == (
        'You coordinate.\n\nYou are an agent. Your internal name is "coord".')

    task_tools = declarations(booker.model.requests[0])
    # ADK lists transfer_to_agent first; agentq appends it after the agent's tools, as for every agent
    assert sorted(task_tools) == ["finish_task", "transfer_to_agent"]
    assert task_tools["finish_task"].description == (
        "Report that the task handed to this agent is done; call it once the task is finished.")
    assert task_tools["finish_task"].parameters_json_schema == {
        "additionalProperties": False, "properties": {"result": {"title": "Result", "type": "string"}},
        "required": ["result"], "title": "_DefaultTaskOutput", "type": "object"}


class TripIn(BaseModel):
    city: str


class Booking(BaseModel):
    city: str
    date: str


async def test_finish_task_checks_the_output_schema_lets_the_model_retry_and_stores_the_output_under_output_key():
    coordinator, booker = booking_tree(
        [call("finish_task", city="Paris"), call("finish_task", city="Paris", date="May 3")],
        [call("booker", city="Paris"), "Booked."],
        input_schema=TripIn, output_schema=Booking, output_key="booking")
    runner = InMemoryRunner(agent=coordinator, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("Paris please"))

    error = events[2].get_function_responses()[0].response["error"]
    assert error.startswith("Invoking `finish_task()` failed due to validation errors:\n1 validation error for "
                            "Booking\ndate\n  Field required")
    assert error.endswith("You could retry calling this tool, but it is IMPORTANT for you to provide all the "
                          "mandatory parameters with correct types.")
    assert summaries(events) == [
        ("coord", [("call", "booker", {"city": "Paris"})]),
        ("booker", [("call", "finish_task", {"city": "Paris"})]),
        ("booker", [("response", "finish_task", {"error": error})]),
        ("booker", [("call", "finish_task", {"city": "Paris", "date": "May 3"})]),
        ("booker", [("response", "finish_task", {"result": "Task completed."})]),
        ("user", [("response", "booker", {"city": "Paris", "date": "May 3"})]),
        ("coord", ["Booked."]),
    ]
    assert events[4].actions.state_delta == {"booking": {"city": "Paris", "date": "May 3"}}
    assert [seen(request)[0] for request in booker.model.requests] == [("user", ['{"city": "Paris"}'])] * 2
    assert declarations(coordinator.model.requests[0])["booker"].parameters_json_schema == {
        "properties": {"city": {"title": "City", "type": "string"}}, "required": ["city"], "title": "TripIn",
        "type": "object"}
    # a task's structured output comes through finish_task: its model is not asked for JSON
    assert booker.model.requests[0].config.response_schema is None


class Count(RootModel[int]):
    pass


async def test_a_task_output_that_is_not_an_object_is_wrapped_as_result_and_answered_as_output():
    coordinator, booker = booking_tree([call("finish_task", result=42)], [call("booker", request="count"), "42."],
                                       output_schema=Count)
    runner = InMemoryRunner(agent=coordinator, app_name="app")
    events = await run(runner, await new_session(runner), user_text("count"))

    assert summaries(events)[-2:] == [("user", [("response", "booker", {"output": 42})]), ("coord", ["42."])]
    assert declarations(booker.model.requests[0])["finish_task"].parameters_json_schema == {
        "type": "object", "properties": {"result": {"title": "Count", "type": "integer"}}, "required": ["result"]}


def summarizing_tree(**summarizer_kwargs):
    summarizer = LlmAgent(name="summarizer", description="Summarizes text", instruction="You summarize.",
                          mode="single_turn", model=RecordingLlm(turns=["Cats: great."]), **summarizer_kwargs)
    coordinator = LlmAgent(name="coord", instruction="You coordinate.", sub_agents=[summarizer],
                           model=RecordingLlm(turns=[call("summarizer", request="summarize: cats are great"),
                                                     "Summary ready.", "bye"]))
    return coordinator, summarizer


async def test_a_single_turn_agent_answers_from_its_request_and_the_coordinator_goes_on_in_the_same_turn():
    coordinator, summarizer = summarizing_tree(output_key="summary")
    runner = InMemoryRunner(agent=coordinator, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("Summarize cats"))

    assert summaries(events) == [
        ("coord", [("call", "summarizer", {"request": "summarize: cats are great"})]),
        ("summarizer", ["Cats: great."]),
        ("coord", [("response", "summarizer", {"result": "Cats: great."})]),
        ("coord", ["Summary ready."]),
    ]
    call_id = events[0].get_function_calls()[0].id
    assert [event.branch for event in events] == [None, f"summarizer@{call_id}", None, None]
    assert events[1].actions.state_delta == {"summary": "Cats: great."}

    assert seen(summarizer.model.requests[0]) == [("user", ["summarize: cats are great"])]
    # no identity and no transfer instruction for a single_turn agent (the transfer tool is still offered)
    assert summarizer.model.requests[0].config.system_instruction == "You summarize."
    assert list(declarations(summarizer.model.requests[0])) == ["transfer_to_agent"]
    offered = declarations(coordinator.model.requests[0])["summarizer"]
    assert (offered.description, offered.parameters.model_dump(exclude_none=True)) == (
        "Summarizes text", {"type": "OBJECT", "properties": {"request": {"type": "STRING"}}, "required": ["request"]})
    assert seen(coordinator.model.requests[1]) == [
        ("user", ["Summarize cats"]),
        ("model", [("call", "summarizer", {"request": "summarize: cats are great"})]),
        ("user", [("response", "summarizer", {"result": "Cats: great."})]),
    ]

    await run(runner, session, user_text("ok"))
    assert seen(coordinator.model.requests[2])[-2:] == [("model", ["Summary ready."]), ("user", ["ok"])]


def test_a_mode_adk_does_not_know_is_refused_by_validation():
    with pytest.raises(ValidationError) as refused:
        LlmAgent(name="a", model=ScriptedLlm(), mode="bogus")
    assert "Input should be 'chat', 'task' or 'single_turn'" in str(refused.value)


def test_sub_agents_without_a_mode_become_chat_agents_and_only_they_are_transfer_targets():
    chat = LlmAgent(name="chat", model=ScriptedLlm())
    task = LlmAgent(name="task", model=ScriptedLlm(), mode="task")
    single = LlmAgent(name="single", model=ScriptedLlm(), mode="single_turn")
    coordinator = LlmAgent(name="coord", model=ScriptedLlm(), sub_agents=[chat, task, single])

    assert (coordinator.mode, chat.mode, task.mode, single.mode) == (None, "chat", "task", "single_turn")
    assert [target.name for target in coordinator.transfer_targets()] == ["chat"]
    assert [target.name for target in chat.transfer_targets()] == ["coord"]
    # transfer_to_agent first, as google-adk 2.13 declares it (issue 24)
    assert list(coordinator.tools_dict()) == ["transfer_to_agent", "task", "single"]
    assert [tool.name for tool in task.tools] == ["finish_task"]


async def test_a_single_turn_root_agent_is_refused_before_anything_is_committed():
    runner = InMemoryRunner(agent=LlmAgent(name="root", model=ScriptedLlm(turns=["hi"]), mode="single_turn"),
                            app_name="app")
    session = await new_session(runner)
    with pytest.raises(InvalidAgentConfigError) as refused:
        await run(runner, session, user_text("hello"))
    assert str(refused.value) == "LlmAgent as root agent must have mode='chat' or 'task', but got mode='single_turn'."
    assert await stored(runner, session) == []


async def test_a_task_opened_on_one_runner_is_finished_on_another_over_redis(redis_url):
    from runtime.sessions import RedisSessionService

    def build():
        coordinator, _ = booking_tree(["Which date?", call("finish_task", result="booked May 3")],
                                      [call("booker", request="book Paris"), "Booked for May 3."])
        service = RedisSessionService(redis_url)
        return Runner(app_name="app", agent=coordinator, session_service=service), service

    first_runner, first_service = build()
    session = await first_service.create_session(app_name="app", user_id=USER)
    first = await run(first_runner, session, user_text("Paris please"))
    await first_service.aclose()

    second_runner, second_service = build()  # a fresh worker: nothing but what Redis committed
    second = await run(second_runner, session, user_text("May 3"))
    assert summaries(first) + summaries(second) == [
        ("coord", [("call", "booker", {"request": "book Paris"})]),
        ("booker", ["Which date?"]),
        ("booker", [("call", "finish_task", {"result": "booked May 3"})]),
        ("booker", [("response", "finish_task", {"result": "Task completed."})]),
        ("user", [("response", "booker", {"result": "booked May 3"})]),
        ("coord", ["Booked for May 3."]),
    ]
    history = await second_service.get_session(app_name="app", user_id=USER, session_id=session.id)
    assert [event.branch for event in history.events if event.author == "user"][1] == first[1].branch
    await second_service.aclose()
