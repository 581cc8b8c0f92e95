"""``AGENTQ_CONFORMANCE_CASES``: the folder of google-adk conformance cases a worker may replay.

Set, every runner of the worker gets a ``runtime.conformance.ConformanceReplay`` plugin, so ``adk conformance
test`` (google-adk's own tool) can run the cases under that folder against agentq's server: a run whose
``state_delta`` carries ``_adk_replay_config`` is answered from the recordings. Unset (the default), the plugin is
not there and such a key is ordinary session state: a client can never make a worker read a file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from runtime.errors import UsageError

ENV = "AGENTQ_CONFORMANCE_CASES"


def replay_plugins(environ: Mapping[str, str] | None = None) -> list:
    """[a ConformanceReplay over the folder ``AGENTQ_CONFORMANCE_CASES`` names], or [] when it is unset."""
    folder = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not folder:
        return []
    if not Path(folder).is_dir():
        raise UsageError(f"{ENV}={folder!r} is not a folder")
    from runtime.conformance import ConformanceReplay

    return [ConformanceReplay(folder)]
