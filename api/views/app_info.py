"""ADK's AppInfo for ``GET /apps/{app}/app-info``: the root agent and every LlmAgent below it, with its tools.

Built once when the API starts, from the apps it serves (``agentq api --app module:attr``). The API never runs
an agent: it only reads names, descriptions, string instructions and tool declarations.
"""

from __future__ import annotations

from typing import Any

from runtime.agents import LlmAgent
from runtime.tools import BaseTool, FunctionTool


def describe_app(app: Any) -> dict[str, Any]:
    """The AppInfo JSON of an App (camelCase, as ADK's api server sends it)."""
    root = app.root_agent
    info: dict[str, Any] = {"name": app.name, "rootAgentName": root.name, "description": root.description,
                            "language": "python", "isComputerUse": False}
    if isinstance(root, LlmAgent):
        info["agents"] = _agents(root, {})
    return info


def name_only(app_name: str) -> dict[str, Any]:
    """The AppInfo of an app the API was given by name only (no agent tree to describe)."""
    return {"name": app_name, "language": "python", "isComputerUse": False}


def _agents(agent: LlmAgent, found: dict[str, Any]) -> dict[str, Any]:
    if agent.name in found:
        return found
    subs = [sub for sub in agent.sub_agents if isinstance(sub, LlmAgent)]
    for sub in subs:
        _agents(sub, found)
    found[agent.name] = {
        "name": agent.name,
        "description": agent.description,
        # An InstructionProvider may need session state: named, never called (as ADK does).
        "instruction": agent.instruction if isinstance(agent.instruction, str)
        else f"<InstructionProvider: {getattr(agent.instruction, '__name__', type(agent.instruction).__name__)}>",
        "tools": _tools(agent),
        "subAgents": [sub.name for sub in subs],
    }
    return found


def _tools(agent: LlmAgent) -> list[dict[str, Any]]:
    """The declarations of the tools the agent was given (as ADK: not the transfer tool agentq adds)."""
    tools = []
    for given in agent.tools:
        tool = given if isinstance(given, BaseTool) else FunctionTool(given) if callable(given) else None
        declaration = tool._get_declaration() if tool is not None else None
        if declaration is not None:
            tools.append({"functionDeclarations": [declaration.model_dump(mode="json", by_alias=True,
                                                                          exclude_none=True)]})
    return tools
