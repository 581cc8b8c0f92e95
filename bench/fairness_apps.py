"""Apps the fairness benchmark runs in a real worker: ``bulk``, the app that floods (a model that thinks
``BENCH_BULK_LATENCY`` seconds, off the CPU, as a remote model does), and ``quick``, whose first event is timed."""

from __future__ import annotations

import os

from runtime.agents import LlmAgent
from runtime.apps import App
from runtime.models import ScriptedLlm

BULK_LATENCY = float(os.environ.get("BENCH_BULK_LATENCY", "0.2"))

bulk = App(name="bulk", root_agent=LlmAgent(name="bulk_agent", model=ScriptedLlm(turns=["report written"],
                                                                                 latency=BULK_LATENCY)))
quick = App(name="quick", root_agent=LlmAgent(name="quick_agent", model=ScriptedLlm(turns=["at once"])))
