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


def _random_history(rng, length):
    """Histories with in-order answers, late and repeated answers, duplicate and client-made call ids."""
    events, open_calls = [], []
    for _ in range(length):
        author = rng.choice(["user", "me", "me", "other"])
        branch = rng.choice([None, None, "par", "par.me", "par.sib"])
        kind = rng.random()
        if kind < 0.35:
            call_id = rng.choice(["adk-", "c"]) + str(rng.randrange(12))
            open_calls.append(call_id)
            parts = [fcall("f", call_id)] + ([fcall("g", call_id + "b")] if rng.random() < 0.3 else [])
            if rng.random() < 0.1:
                parts.append(fresp("f", rng.choice(open_calls), {"r": 0}))
        elif kind < 0.7 and open_calls:
            chosen = open_calls[-1] if rng.random() < 0.7 else rng.choice(open_calls)
            parts = [fresp("f", chosen, {"r": rng.randrange(3)})]
            if rng.random() < 0.2:
                parts.append(fresp("g", chosen + "b", {"r": 1}))
        elif kind < 0.8:
            parts = [text("")]
        else:
            parts = [text(f"t{rng.randrange(100)}")]
        events.append(ev(author, *parts, role="user" if parts[0].function_response else None, branch=branch))
    return events


def test_incrementally_built_contents_equal_contents_built_from_scratch():
    import random

    from runtime.flows.contents_cache import ContentsCache

    rng = random.Random(7)
    for _ in range(300):
        events = _random_history(rng, rng.randrange(1, 14))
        agent, branch = rng.choice([("me", None), ("me", "par.me"), ("other", "par")])
        cache = ContentsCache(agent, branch)
        history: list[Event] = []
        for event in events:
            if rng.random() < 0.1:  # a rewind or a reload: the history is no longer an extension
                history = history[: rng.randrange(len(history) + 1)] if rng.random() < 0.5 else list(history)
            history.append(event)
            assert dump(cache.build(history)) == dump(build_contents(history, agent, branch))


def test_contents_lent_to_requests_stay_what_each_request_was_shown_whatever_the_requests_do_with_them():
    """The cache lends its own list to each request (no copy per model call); a request that keeps its list,
    appends to it (a model adding a turn) or edits it in place neither changes what later requests are shown
    nor is changed by them."""
    import random

    from runtime.flows.contents_cache import ContentsCache

    rng = random.Random(11)
    for _ in range(300):
        events = _random_history(rng, rng.randrange(1, 14))
        agent, branch = rng.choice([("me", None), ("me", "par.me"), ("other", "par")])
        cache = ContentsCache(agent, branch)
        kept: list[tuple[list, list]] = []  # lists a request kept, and what they held when built
        for index in range(len(events)):
            history = events[: index + 1]
            contents = cache.build(history)
            assert dump(contents) == dump(build_contents(history, agent, branch))
            action = rng.random()
            if action < 0.3:
                kept.append((contents, dump(contents)))
            elif action < 0.5:
                contents.append(types.Content(role="user", parts=[text("continue")]))
            elif action < 0.6 and contents:
                contents[rng.randrange(len(contents))] = types.Content(role="user", parts=[text("edited")])
            elif action < 0.7 and contents:
                del contents[0]
            del contents
        for contents, built in kept:
            assert dump(contents) == built


def test_the_next_request_gets_the_list_the_last_one_let_go_of_grown_by_the_new_events():
    import weakref

    from runtime.flows.contents_cache import ContentsCache

    history = [ev("user", text("hi")), ev("me", text("hello"))]
    cache = ContentsCache("me", None)
    first = cache.build(history[:1])
    lent = weakref.ref(first)
    del first
    second = cache.build(history)
    assert (second is lent(), dump(second)) == (True, dump(build_contents(history, "me", None)))
