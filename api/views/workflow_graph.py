"""A workflow's graph in Graphviz DOT, as google-adk's dev UI draws it (its graph routes, ``api.routes.adk_dev``).

The dev UI renders DOT itself (viz.js) and marks the nodes an invocation went through from each event's node
path; it asks ``/dev/apps/{app}/build_graph_image`` for ``{path: {dotSrc}}`` (the workflow, and each nested
workflow by its path below the root) and, for a selected event, ``.../events/{event_id}/graph`` for ``{dotSrc}``.
The graph comes from the app's description (``worker.fleet.app_catalog.describe_graph``: nodes and edges, no code
is imported); the state drawn on each node at an event comes from agentq's records: the invocation's committed
events up to that one, read as ``api.views.workflow_nodes`` reads them for /ui.

Node ids are the node names, so the dev UI's own marking (it matches ``<title>`` in the SVG against the node
paths of the events) works on them; the entry is ``__START__``, as ADK names it.
"""

from __future__ import annotations

from typing import Any

from api.views.workflow_nodes import NodeRunOut

STATE_COLORS = {  # fill, border: the colors /ui's node pills use
    "done": ("#e3f4ea", "#1d7a46"), "running": ("#e4ecfb", "#2456c7"), "waiting": ("#efe7fb", "#7a4cc2"),
    "failed": ("#fde8e6", "#b42318"), "retrying": ("#fff4d6", "#9a6700"), "stopped": ("#e8ebf0", "#5d6878"),
}
START = "__START__"


def graph_images(info: dict[str, Any], *, dark_mode: bool = False) -> dict[str, dict[str, str]]:
    """ADK's ``build_graph_image`` answer: ``{"": root's DOT, "<root>/<sub>": a nested workflow's}`` for a workflow
    app; for an agent app, its agent tree; {} when the description has neither."""
    graph = info.get("workflowGraph")
    if graph is None:
        tree = agent_tree_dot(info, dark_mode=dark_mode)
        return {"": {"dotSrc": tree}} if tree else {}
    images = {"": {"dotSrc": workflow_dot(graph, dark_mode=dark_mode)}}
    for path, inner in _nested(graph, graph["name"]):
        images[path] = {"dotSrc": workflow_dot(inner, dark_mode=dark_mode)}
    return images


def states_at(runs: list[NodeRunOut]) -> dict[str, str]:
    """Each root-level node's state (its latest run's), by node name, from a workflow invocation's node runs."""
    roots = {run.path for run in runs if run.parent is None}
    return {run.name: run.status for run in runs if run.parent in roots}


def workflow_dot(graph: dict[str, Any], *, states: dict[str, str] | None = None, dark_mode: bool = False) -> str:
    """The DOT of one workflow: its nodes (a state's colors when ``states`` names it) and its edges, labelled
    with their routes."""
    states = states or {}
    ink, paper = ("#e7ecf4", "#1f1f1f") if dark_mode else ("#1d2430", "#ffffff")
    lines = [f"digraph {_id(graph['name'])} {{", "  rankdir=TB;", f'  bgcolor="{paper}";',
             f'  node [shape=box, style="rounded,filled", fillcolor="{paper}", color="{ink}", fontcolor="{ink}"];',
             f'  edge [color="{ink}", fontcolor="{ink}"];']
    for node in graph["nodes"]:
        name = node["name"]
        if name == START:
            lines.append(f'  {_id(START)} [label="START", shape=ellipse];')
            continue
        attributes = [f"label={_id(name + (' (workflow)' if node.get('graph') else ''))}"]
        if name in states:
            fill, border = STATE_COLORS.get(states[name], STATE_COLORS["stopped"])
            attributes += [f'fillcolor="{fill}"', f'color="{border}"', 'fontcolor="#1d2430"', "penwidth=2",
                           f"xlabel={_id(states[name])}"]
        lines.append(f"  {_id(name)} [{', '.join(attributes)}];")
    for edge in graph["edges"]:
        route = edge.get("route")
        label = f" [label={_id(', '.join(route) if isinstance(route, list) else route)}]" if route is not None else ""
        lines.append(f"  {_id(edge['from'])} -> {_id(edge['to'])}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def agent_tree_dot(info: dict[str, Any], *, dark_mode: bool = False) -> str | None:
    """An agent app's tree as DOT: each agent to its sub-agents and its tools (from its AppInfo)."""
    agents = info.get("agents") or {}
    if not agents:
        return None
    ink, paper = ("#e7ecf4", "#1f1f1f") if dark_mode else ("#1d2430", "#ffffff")
    lines = [f"digraph {_id(info.get('rootAgentName') or info['name'])} {{", "  rankdir=LR;", f'  bgcolor="{paper}";',
             f'  node [shape=box, style="rounded,filled", fillcolor="{paper}", color="{ink}", fontcolor="{ink}"];',
             f'  edge [color="{ink}"];']
    for name, agent in agents.items():
        lines.append(f"  {_id(name)};")
        for sub in agent.get("subAgents", []):
            lines.append(f"  {_id(name)} -> {_id(sub)};")
        for tool in agent.get("tools", []):
            for declaration in tool.get("functionDeclarations", []):
                tool_name = declaration.get("name", "?")
                lines.append(f"  {_id(tool_name)} [shape=ellipse];")
                lines.append(f"  {_id(name)} -> {_id(tool_name)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _nested(graph: dict[str, Any], path: str):
    for node in graph["nodes"]:
        inner = node.get("graph")
        if inner is not None:
            inner_path = f"{path}/{node['name']}"
            yield inner_path, inner
            yield from _nested(inner, inner_path)


def _id(text: Any) -> str:
    """A DOT quoted id (quotes and backslashes escaped)."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'
