"""The app catalog: what an API needs to serve an app it never imported, written by the workers that run it.

A worker announces the apps it serves (``worker.fleet.workers_alive``); that list is all an API needs to accept
an app's requests. Two things the API shows or applies come from the app's code: ADK's AppInfo (the agent tree with
its instructions and tool declarations, for ``GET /apps/{app}/app-info`` and the dev UI) and the approval rules
its tools declare (``FunctionTool(..., approval=Approval(...))``, applied to every answer). Each worker writes them
here, one JSON entry per app, when it announces itself; the API reads the entries of the apps alive workers
announce. They live beside the announcement, not in it: a worker's announcement is read every second and an
AppInfo can be kilobytes. Workers of one app running different code (a rolling deploy) overwrite each other's
entry; the last one started wins.
"""

from __future__ import annotations

import json
from typing import Any

from runtime.agents import LlmAgent
from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.tools import BaseTool, FunctionTool


def describe_app(app: Any) -> dict[str, Any]:
    """ADK's AppInfo JSON of an App (camelCase, as ADK's api server sends it): the root agent and every LlmAgent
    below it, with its tools. Nothing is run: an InstructionProvider is named, never called (as ADK does)."""
    root = app.root_agent
    info: dict[str, Any] = {"name": app.name, "rootAgentName": root.name, "description": root.description,
                            "language": "python", "isComputerUse": False}
    if isinstance(root, LlmAgent):
        info["agents"] = _agents(root, {})
    graph = describe_graph(root)
    if graph is not None:  # agentq's own key (ADK clients ignore it): the dev UI's graph routes draw it
        info["workflowGraph"] = graph
    return info


def describe_graph(agent: Any) -> dict[str, Any] | None:
    """A Workflow's nodes and edges, nested workflows inside their node: ``{"name", "nodes": [{"name", "kind",
    "graph"?}], "edges": [{"from", "to", "route"?}]}`` (``__START__`` is the entry); None for anything else."""
    from runtime.workflow import Workflow
    from runtime.workflow.graph import Graph

    if not isinstance(agent, Workflow):
        return None
    graph = agent.graph if agent.graph is not None else Graph.from_edge_items(agent.edges)
    nodes = []
    for node in graph.nodes:
        described: dict[str, Any] = {"name": node.name, "kind": type(node).__name__}
        inner = describe_graph(node)
        if inner is not None:
            described["graph"] = inner
        nodes.append(described)
    edges = []
    for edge in graph.edges:
        described = {"from": edge.from_node.name, "to": edge.to_node.name}
        if edge.route is not None:
            described["route"] = [str(r) for r in edge.route] if isinstance(edge.route, list) else str(edge.route)
        edges.append(described)
    return {"name": agent.name, "nodes": nodes, "edges": edges}


def declared_approvals(app: Any) -> dict[str, dict[str, Any]]:
    """``{tool: {roles, principals, separation_of_duties, quorum}}`` from the ``approval=`` of each tool in the
    app's agent tree (the API turns each into its ApprovalRule)."""
    rules: dict[str, dict[str, Any]] = {}
    for tool in _all_tools(app.root_agent, set()):
        approval = getattr(tool, "approval", None)
        if approval is not None:
            rules[tool.name] = {"roles": list(approval.roles),
                                "principals": None if approval.principals is None else list(approval.principals),
                                "separation_of_duties": approval.separation_of_duties, "quorum": approval.quorum}
    return rules


def catalog_entry(app: Any) -> dict[str, Any]:
    """One app's entry: its AppInfo and its declared approval rules."""
    return {"info": describe_app(app), "approval": declared_approvals(app)}


def publish(client: Any, apps: dict[str, Any]) -> None:
    """Write the entry of each app in ``apps`` (name -> App) to ``keys.app_catalog()`` (``client``: a sync
    redis-py client), in one HSET."""
    if apps:
        client.hset(keys.app_catalog(), mapping={name: json.dumps(catalog_entry(app)) for name, app in apps.items()})


async def read_entries(redis: Any, app_names: list[str] | None) -> dict[str, dict[str, Any]]:
    """The entries of ``app_names`` (None: every app) that a worker wrote, by name (``redis``: any
    redis.asyncio client)."""
    if app_names is None:
        found = await redis.hgetall(keys.app_catalog())
        pairs = [(text(name), raw) for name, raw in found.items()]
    elif not app_names:
        return {}
    else:
        pairs = list(zip(app_names, await redis.hmget(keys.app_catalog(), app_names), strict=True))
    entries = {}
    for name, raw in pairs:
        try:
            entry = json.loads(raw) if raw else None
        except ValueError:
            entry = None
        if isinstance(entry, dict):
            entries[name] = entry
    return entries


def _all_tools(agent: Any, seen: set[int]) -> list[Any]:
    if id(agent) in seen:
        return []
    seen.add(id(agent))
    found = list(getattr(agent, "tools", None) or [])
    for sub in getattr(agent, "sub_agents", None) or []:
        found += _all_tools(sub, seen)
    return found


def _agents(agent: LlmAgent, found: dict[str, Any]) -> dict[str, Any]:
    if agent.name in found:
        return found
    subs = [sub for sub in agent.sub_agents if isinstance(sub, LlmAgent)]
    for sub in subs:
        _agents(sub, found)
    found[agent.name] = {
        "name": agent.name,
        "description": agent.description,
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
