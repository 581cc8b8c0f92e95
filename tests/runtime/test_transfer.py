"""Agent transfer: to sub-agents, parent and peers; routing of the next turn; unknown targets."""

from __future__ import annotations

import pytest

from runtime.agents import LlmAgent, SequentialAgent
from runtime.errors import AgentNotFoundError, InvalidAgentTreeError
from runtime.models import ScriptedLlm, call
from runtime.runners import InMemoryRunner

from .helpers import new_session, run, summaries, user_text


def tree(child_turns, root_turns=None, **child_kwargs):
    child = LlmAgent(name="billing", description="Handles bills.", model=ScriptedLlm(turns=child_turns),
                     **child_kwargs)
    root = LlmAgent(name="root", model=ScriptedLlm(turns=root_turns or [call("transfer_to_agent",
                                                                              agent_name="billing")]),
                    sub_agents=[child])
    return InMemoryRunner(agent=root, app_name="app")


async def test_transfer_hands_the_turn_to_the_sub_agent():
    runner = tree(["Your bill is 10."])
    session = await new_session(runner)
    events = await run(runner, session, user_text("my bill?"))
    assert summaries(events) == [
        ("root", [("call", "transfer_to_agent", {"agent_name": "billing"})]),
        ("root", [("response", "transfer_to_agent", {"result": None})]),
        ("billing", ["Your bill is 10."]),
    ]
    assert events[1].actions.transfer_to_agent == "billing"


async def test_the_next_turn_goes_straight_to_the_agent_that_last_answered():
    runner = tree(["Your bill is 10.", "Paid."])
    session = await new_session(runner)
    await run(runner, session, user_text("my bill?"))
    events = await run(runner, session, user_text("pay it"))
    assert summaries(events) == [("billing", ["Paid."])]


async def test_the_next_turn_returns_to_root_when_the_agent_may_not_transfer_back():
    runner = tree(["Your bill is 10."], root_turns=[call("transfer_to_agent", agent_name="billing"), "root again"],
                  disallow_transfer_to_parent=True)
    session = await new_session(runner)
    await run(runner, session, user_text("my bill?"))
    events = await run(runner, session, user_text("hello"))
    assert [e.author for e in events] == ["root"]


async def test_transfer_to_an_unknown_agent_is_an_error_naming_it():
    runner = tree(["x"], root_turns=[call("transfer_to_agent", agent_name="ghost")])
    session = await new_session(runner)
    with pytest.raises(AgentNotFoundError, match="'ghost'"):
        await run(runner, session, user_text("q"))


async def test_transfer_tool_is_offered_only_when_there_is_somewhere_to_go():
    lone = LlmAgent(name="lone", model=ScriptedLlm(turns=["x"]))
    child = LlmAgent(name="child", model=ScriptedLlm(turns=["x"]))
    LlmAgent(name="parent", model=ScriptedLlm(turns=["x"]), sub_agents=[child])
    in_workflow = LlmAgent(name="step", model=ScriptedLlm(turns=["x"]))
    SequentialAgent(name="seq", sub_agents=[in_workflow])
    assert ("transfer_to_agent" in lone.tools_dict(), "transfer_to_agent" in child.tools_dict(),
            "transfer_to_agent" in in_workflow.tools_dict()) == (False, True, False)


async def test_a_peer_can_be_reached_and_transfer_targets_are_listed_in_the_instruction():
    requests = []

    def responder(request):
        requests.append(request)
        return "hi from b"

    a = LlmAgent(name="a", description="A things.", model=ScriptedLlm(turns=[call("transfer_to_agent",
                                                                                   agent_name="b")]))
    b = LlmAgent(name="b", description="B things.", model=ScriptedLlm(responder=responder))
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[call("transfer_to_agent", agent_name="a")]),
                    sub_agents=[a, b])
    runner = InMemoryRunner(agent=root, app_name="app")
    session = await new_session(runner)
    events = await run(runner, session, user_text("q"))
    assert [e.author for e in events] == ["root", "root", "a", "a", "b"]
    instruction = requests[0].config.system_instruction
    assert "Agent name: root" in instruction and "Agent name: a" in instruction
    # b sees a's and root's turns as context from other agents, not as its own model turns
    assert [c.role for c in requests[0].contents] == ["user", "user", "user", "user", "user"]
    assert requests[0].contents[1].parts[1].text == (
        "[root] called tool `transfer_to_agent` with parameters: {'agent_name': 'a'}"
    )


def test_an_agent_cannot_have_two_parents():
    child = LlmAgent(name="child")
    LlmAgent(name="p1", sub_agents=[child])
    with pytest.raises(InvalidAgentTreeError, match="'child'"):
        LlmAgent(name="p2", sub_agents=[child])


def test_duplicate_agent_names_in_a_tree_are_refused_by_the_runner():
    root = LlmAgent(name="root", model=ScriptedLlm(turns=[]), sub_agents=[
        LlmAgent(name="x"), SequentialAgent(name="s", sub_agents=[LlmAgent(name="x")])])
    with pytest.raises(InvalidAgentTreeError, match="'x'"):
        InMemoryRunner(agent=root, app_name="app")
