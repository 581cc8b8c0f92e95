"""The apps bench/workflow_bench.py runs in real worker processes: bench/workflow_shapes.py's, built on agentq."""

from __future__ import annotations

from .workflow_shapes import build_apps

_apps = build_apps("runtime")
wf_chain10 = _apps["wf_chain10"]
wf_chain1 = _apps["wf_chain1"]
wf_agent3 = _apps["wf_agent3"]
