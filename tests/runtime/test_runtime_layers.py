"""The runtime's layers: no import cycle inside ``runtime/``, and every import points down this order.

Bottom to top (a module may import from its own layer and the layers below it, never from one above):

1. foundations: ``runtime`` itself, ``ids`` (every id agentq makes), ``errors``, ``statuses``, ``_lent``, ``_sync``
2. ``models``: the BaseLlm seam and its request/response (an Event is an LlmResponse)
3. ``events``
3b. ``auth``: credentials a tool asks its user for (OAuth 2), the credential services, ``adk_request_credential``
4. storage: ``sessions``, ``artifacts``, ``tracing``, ``redis_store`` (the Redis store and the services on it)
5. ``plugins`` (the contexts carry the Runner's PluginManager)
6. ``contexts``: InvocationContext, ReadonlyContext, CallbackContext, ToolContext, RunConfig and the helpers
   that read a run (callback chains, failure events, checkpoints)
7. ``tools``: the tools a model calls, and the tool journal
8. ``flows``: how an LlmAgent runs (request building, the model loop, tool calls, resumption)
9. ``utils``: helpers ADK users import (instruction templating)
10. ``agents``: BaseAgent, LlmAgent and the workflow agents, which run the flows
11. ``apps``: App (it holds a root agent) and events compaction
12. ``routing``: which invocation and agent a message goes to
13. ``runners``: the Runner loop
14. ``tools.agent_tool``: AgentTool runs an agent with a Runner, so it sits on top; ``runtime.tools`` exports
    it lazily so that importing a tool does not import the Runner

The thin modules that keep ADK's paths (``runtime.agents.invocation_context``, ``runtime.tools.tool_context``
...) re-export from ``contexts``, which is below them. Imports under ``if TYPE_CHECKING:`` never run and are
not counted; imports inside functions are (see ``import_graph``). ``test_import_hygiene`` checks the other
arrow, that the runtime does not import the distributed stack.
"""

import textwrap
from pathlib import Path

from .import_graph import cycles, import_graph

LAYERS = [
    ["runtime", "runtime.ids", "runtime.errors", "runtime.statuses", "runtime._lent", "runtime._sync"],
    ["runtime.models"],
    ["runtime.events"],
    ["runtime.auth"],
    ["runtime.sessions", "runtime.artifacts", "runtime.tracing", "runtime.redis_store"],
    ["runtime.plugins"],
    ["runtime.contexts"],
    ["runtime.tools"],
    ["runtime.flows"],
    ["runtime.conformance"],
    ["runtime.utils"],
    ["runtime.agents"],
    ["runtime.workflow"],
    ["runtime.apps"],
    ["runtime.routing"],
    ["runtime.runners"],
    ["runtime.tools.agent_tool"],
]


def layer_of(module: str) -> int | None:
    """The index of the layer whose most specific entry names ``module`` or a package holding it."""
    best = None
    for index, entries in enumerate(LAYERS):
        for entry in entries:
            # the root package names only itself: a new top-level module must be placed explicitly
            holds = module == entry or (entry != "runtime" and module.startswith(entry + "."))
            if holds and (best is None or len(entry) > len(best[1])):
                best = (index, entry)
    return None if best is None else best[0]


def test_runtime_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_every_runtime_module_has_a_layer():
    assert [module for module in sorted(import_graph()) if layer_of(module) is None] == []


def test_no_runtime_import_points_up_the_layers():
    graph = import_graph()
    upward = [
        f"{module} (layer {layer_of(module) + 1}) imports {target} (layer {layer_of(target) + 1})"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def later():\n    from .a import x\n",
    })
    assert cycles(import_graph(root, "pkg")) == [["pkg.a", "pkg.b"]]


def test_imports_under_type_checking_are_not_edges(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n",
    })
    assert import_graph(root, "pkg") == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": set()}


def test_importing_a_submodule_runs_its_package_and_a_lazy_export_is_an_edge_of_its_reader(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "def __getattr__(name):\n    from .heavy import Heavy\n    return Heavy\n",
        "low/heavy.py": "",
        "low/light.py": "",
        "user.py": "from .low.light import x\nfrom .low import Heavy\n",
    })
    graph = import_graph(root, "pkg")
    assert graph["pkg.low"] == set()
    assert graph["pkg.user"] == {"pkg.low", "pkg.low.light", "pkg.low.heavy"}
