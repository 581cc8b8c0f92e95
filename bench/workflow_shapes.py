"""The workflows of bench/workflow_bench.py, written once against the API google-adk 2.13 and agentq share.

Imports neither library at module level: ``build_apps(root)`` takes the package root (``"google.adk"`` in
bench/.adk-venv, ``"runtime"`` in agentq) and builds the apps from there, so both sides run the very same graphs
(as tests/workflow_parity/scenarios.py does for the parity tests). Runs as a plain module on either side:
bench/workflow_apps.py imports it as ``bench.workflow_shapes``, bench/adk_side/workflow_inmemory.py by path.

- ``wf_chain10``: ten function nodes in a chain, each passing its input on;
- ``wf_chain1``: the same with one node (what a workflow costs apart from its nodes);
- ``wf_agent3``: fetch -> an LlmAgent whose model answers at once -> publish.
"""

from __future__ import annotations

import importlib
from typing import Any

CHAIN_NODES = 10
APP_NODES = {"wf_chain10": CHAIN_NODES, "wf_chain1": 1, "wf_agent3": 3}
"""Each app's name and how many nodes one invocation runs."""
ANSWER = "A fine draft."


def message(index: int) -> str:
    """The user message of invocation ``index``."""
    return f"Invocation #{index}"


def passthrough(node_input: str) -> str:
    """A chain step: its output is its input."""
    return node_input


def fetch(node_input: str) -> str:
    """First node of wf_agent3."""
    return f"facts about {node_input}"


def publish(node_input: Any) -> str:
    """Last node of wf_agent3."""
    return f"published: {node_input}"


def instant_model(root: str) -> Any:
    """A BaseLlm subclass of ``root``'s that answers every request with ANSWER at once (no state, no network)."""
    from google.genai import types

    models = importlib.import_module(f"{root}.models")

    class Instant(models.BaseLlm):
        """Answers ANSWER, reporting token usage as a real model does (without it ADK warns on every call)."""

        async def generate_content_async(self, llm_request, stream: bool = False):
            yield models.LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=ANSWER)]),
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=10, candidates_token_count=5, total_token_count=15))

    return Instant(model="instant")


def build_apps(root: str) -> dict[str, Any]:
    """The benchmark's apps by name, built from ``root``'s ``workflow``, ``agents`` and ``apps`` packages."""
    workflow = importlib.import_module(f"{root}.workflow")
    App = importlib.import_module(f"{root}.apps").App
    LlmAgent = importlib.import_module(f"{root}.agents").LlmAgent
    Workflow, START, node = workflow.Workflow, workflow.START, workflow.node

    def chain(name: str, length: int) -> Any:
        steps = [node(passthrough, name=f"step_{index}") for index in range(1, length + 1)]
        return App(name=name, root_agent=Workflow(name=name, edges=[(START, *steps)]))

    writer = LlmAgent(name="writer", model=instant_model(root), instruction="Write it.")
    agent3 = Workflow(name="wf_agent3", edges=[(START, fetch, writer, publish)])
    return {"wf_chain10": chain("wf_chain10", CHAIN_NODES), "wf_chain1": chain("wf_chain1", 1),
            "wf_agent3": App(name="wf_agent3", root_agent=agent3)}
