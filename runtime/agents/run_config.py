"""``RunConfig`` where ADK has it (``google.adk.agents.run_config``).

RunConfig lives in ``runtime.contexts`` (a layer below the agents). This path is made the very module that
defines it, not a re-export: code written for ADK patches module attributes here (``logger``, whose
warnings RunConfig's checks write), and a patch must reach the module that reads them.
"""

import sys

from ..contexts import run_config as _defining_module

sys.modules[__name__] = _defining_module
