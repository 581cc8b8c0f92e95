"""google-adk's conformance protocol (``adk conformance test``), honoured by agentq: see ``replay``."""

from .replay import CONFIG_KEY, ConformanceReplay, ReplayMismatchError

__all__ = ["CONFIG_KEY", "ConformanceReplay", "ReplayMismatchError"]
