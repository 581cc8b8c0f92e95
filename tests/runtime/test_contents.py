"""What the model is shown: branch filtering, other agents as context, answers next to their calls."""

from __future__ import annotations

from google.genai import types

from runtime.events import Event
from runtime.flows.contents import build_contents


def ev(author, *parts, role=None, branch=None):
    return Event(author=author, branch=branch,
                 content=types.Content(role=role or ("user" if author == "user" else "model"), parts=list(parts)))


def text(t):
    return types.Part(text=t)


def fcall(name, call_id):
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args={"x": 1}))


def fresp(name, call_id, response):
    return types.Part(function_response=types.FunctionResponse(id=call_id, name=name, response=response))


def dump(contents):
    return [c.model_dump(exclude_none=True) for c in contents]


def test_another_agents_words_and_tools_are_retold_as_user_context():
    events = [ev("user", text("hi")), ev("other", text("hello"), fcall("look", "c1")),
              ev("other", fresp("look", "c1", {"ok": True}), role="user")]
    assert dump(build_contents(events, "me", None)) == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "user", "parts": [{"text": "For context:"}, {"text": "[other] said: hello"},
                                   {"text": "[other] called tool `look` with parameters: {'x': 1}"}]},
        {"role": "user", "parts": [{"text": "For context:"},
                                   {"text": "[other] `look` tool returned result: {'ok': True}"}]},
    ]


def test_sibling_branches_are_hidden_and_ancestor_branches_shown():
    events = [ev("user", text("q")), ev("me", text("mine"), branch="par.me"),
              ev("sib", text("theirs"), branch="par.sib"), ev("me", text("root said"), branch="par")]
    assert [c.parts[0].text for c in build_contents(events, "me", "par.me")] == ["q", "mine", "root said"]


def test_client_made_call_ids_are_not_sent_to_the_model():
    events = [ev("user", text("q")), ev("me", fcall("f", "adk-123")),
              ev("me", fresp("f", "adk-123", {"r": 1}), role="user")]
    contents = build_contents(events, "me", None)
    assert (contents[1].parts[0].function_call.id, contents[2].parts[0].function_response.id) == (None, None)
    assert events[1].content.parts[0].function_call.id == "adk-123"  # the committed event is untouched


def test_a_late_answer_is_moved_next_to_its_call_replacing_the_interim_one():
    events = [ev("user", text("q")), ev("me", fcall("slow", "c1")),
              ev("me", fresp("slow", "c1", {"status": "pending"}), role="user"),
              ev("me", text("waiting")),
              ev("user", fresp("slow", "c1", {"status": "done"}))]
    assert dump(build_contents(events, "me", None)) == [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"function_call": {"id": "c1", "name": "slow", "args": {"x": 1}}}]},
        {"role": "user", "parts": [{"function_response": {"id": "c1", "name": "slow",
                                                          "response": {"status": "done"}}}]},
    ]


def test_events_without_content_and_empty_text_are_left_out():
    events = [ev("user", text("q")), Event(author="me"), ev("me", text(""))]
    assert [c.parts[0].text for c in build_contents(events, "me", None)] == ["q"]
