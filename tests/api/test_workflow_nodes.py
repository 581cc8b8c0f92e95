"""api.views.workflow_nodes: node statuses of a workflow invocation, from its committed events."""

from __future__ import annotations

from google.genai import types

from api.views.workflow_nodes import node_runs
from runtime.events import Event, EventActions, NodeInfo
from runtime.workflow.history import ATTEMPT_KEY

WF = "wf@1"


def _output(path: str, output, *, terminal: bool = False) -> Event:
    output_for = [path, WF] if terminal else [path]
    return Event(author="wf", node_info=NodeInfo(path=path, output_for=output_for), output=output)


def _marker(path: str, attempt: int) -> Event:
    return Event(author="wf", node_info=NodeInfo(path=path), actions=EventActions(agent_state={ATTEMPT_KEY: attempt}))


def _error(path: str, message: str) -> Event:
    return Event(author="wf", node_info=NodeInfo(path=path), error_code="ValueError", error_message=message)


def _ask(path: str, call_id: str) -> Event:
    call = types.FunctionCall(id=call_id, name="adk_request_input", args={"interruptId": call_id, "message": "ok?"})
    return Event(author="wf", node_info=NodeInfo(path=path), content=types.Content(role="model", parts=[
        types.Part(function_call=call)]), long_running_tool_ids={call_id})


def _answer(call_id: str) -> Event:
    response = types.FunctionResponse(id=call_id, name="adk_request_input", response={"approved": True})
    return Event(author="user", content=types.Content(role="user", parts=[types.Part(function_response=response)]))


def _user(text: str) -> Event:
    return Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]))


def _statuses(events: list[Event], invocation_status: str) -> list[tuple[str, str, int]]:
    return [(n.path, n.status, n.attempts) for n in node_runs(events, invocation_status)]


PARKED = [
    _user("memo"),
    _output("wf@1/fetch@1", {"doc": "text"}),
    _marker("wf@1/flaky@1", 1), _error("wf@1/flaky@1", "first attempt fails"), _marker("wf@1/flaky@1", 2),
    _output("wf@1/flaky@1", "ok"),
    _ask("wf@1/review@1", "review"),
]


def test_a_workflow_parked_on_a_request_input_shows_done_nodes_and_the_waiting_one():
    nodes = node_runs(PARKED, "parked")
    assert [(n.path, n.name, n.run, n.parent, n.status, n.attempts, n.waiting_on, n.output) for n in nodes] == [
        (WF, "wf", "1", None, "waiting", 1, [], None),
        ("wf@1/fetch@1", "fetch", "1", WF, "done", 1, [], '{"doc": "text"}'),
        ("wf@1/flaky@1", "flaky", "1", WF, "done", 2, [], "ok"),
        ("wf@1/review@1", "review", "1", WF, "waiting", 1, ["review"], None),
    ]
    assert nodes[2].error.model_dump() == {"type": "ValueError", "message": "first attempt fails"}


def test_an_answered_request_completes_its_node_and_the_completed_invocation_shows_every_node_done():
    resumed = [*PARKED, _answer("review"), _output("wf@1/publish@1", {"published": True}, terminal=True)]
    assert _statuses(resumed, "running") == [
        (WF, "done", 1), ("wf@1/fetch@1", "done", 1), ("wf@1/flaky@1", "done", 2), ("wf@1/review@1", "done", 1),
        ("wf@1/publish@1", "done", 1)]
    assert {n.status for n in node_runs(resumed[:-1], "completed")} == {"done"}
    assert node_runs(resumed, "running")[3].output == '{"approved": true}'  # the answer is its output


def test_a_failed_attempt_then_another_attempt_is_retrying_and_a_last_failure_is_failed():
    failed_once = [_output("wf@1/fetch@1", 1), _marker("wf@1/flaky@1", 1), _error("wf@1/flaky@1", "boom")]
    assert _statuses(failed_once, "running") == [(WF, "running", 1), ("wf@1/fetch@1", "done", 1),
                                                 ("wf@1/flaky@1", "failed", 1)]
    retrying = [*failed_once, _marker("wf@1/flaky@1", 2)]
    assert _statuses(retrying, "running")[-1] == ("wf@1/flaky@1", "retrying", 2)
    out_of_attempts = [*retrying, _error("wf@1/flaky@1", "boom again")]
    assert _statuses(out_of_attempts, "failed") == [(WF, "failed", 1), ("wf@1/fetch@1", "done", 1),
                                                    ("wf@1/flaky@1", "failed", 2)]
    assert node_runs(out_of_attempts, "failed")[-1].error.message == "boom again"


def test_without_attempt_markers_an_event_after_a_failure_is_a_retry():
    events = [_error("wf@1/agent@1", "model down"), Event(author="wf", node_info=NodeInfo(path="wf@1/agent@1"),
                                                          content=types.Content(parts=[types.Part(text="hi")]))]
    assert _statuses(events, "running")[-1] == ("wf@1/agent@1", "retrying", 2)
    assert _statuses([*events, _output("wf@1/agent@1", "hi")], "running")[-1] == ("wf@1/agent@1", "done", 2)


def test_a_nested_workflow_stands_where_its_nodes_stand_and_an_agent_message_is_its_output():
    message = Event(author="wf", node_info=NodeInfo(path="wf@1/sub@1/writer@1", output_for=["wf@1/sub@1/writer@1"],
                                                    message_as_output=True),
                    content=types.Content(role="model", parts=[types.Part(text="a draft")]))
    events = [message, _ask("wf@1/sub@1/check@1", "c1"), _output("wf@1/side@1", "x")]
    nodes = node_runs(events, "parked")
    assert [(n.path, n.parent, n.status, n.output) for n in nodes] == [
        (WF, None, "waiting", None),
        ("wf@1/sub@1", WF, "waiting", None),
        ("wf@1/sub@1/writer@1", "wf@1/sub@1", "done", "a draft"),
        ("wf@1/sub@1/check@1", "wf@1/sub@1", "waiting", None),
        ("wf@1/side@1", WF, "done", "x"),
    ]
    running = [*events[:1], Event(author="wf", node_info=NodeInfo(path="wf@1/sub@1/check@1"),
                                  actions=EventActions(state_delta={"k": 1}))]
    assert _statuses(running, "running")[:2] == [(WF, "running", 1), ("wf@1/sub@1", "running", 1)]


def test_a_cancelled_invocation_stops_the_runs_under_way_and_a_plain_agent_has_no_nodes():
    events = [_output("wf@1/a@1", 1), _marker("wf@1/b@1", 1)]
    assert _statuses(events, "cancelled") == [(WF, "stopped", 1), ("wf@1/a@1", "done", 1), ("wf@1/b@1", "stopped", 1)]
    assert node_runs([_user("hi"), Event(author="agent", content=types.Content(parts=[types.Part(text="yo")]))],
                     "completed") == []


def test_a_long_output_is_cut_and_checkpoint_events_are_not_nodes():
    checkpoint = Event(author="wf", node_info=NodeInfo(path=""), actions=EventActions(agent_state={"nodes": {}}))
    [node, leaf] = node_runs([checkpoint, _output("wf@1/big@1", "x" * 500)], "running")
    assert (node.path, len(leaf.output), leaf.output[-1]) == (WF, 200, "…")
