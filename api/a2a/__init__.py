"""An agentq app served as an A2A agent (``agentq api --a2a APP``), on the a2a-sdk: see ``server``."""

from api.a2a.server import mount_a2a

__all__ = ["mount_a2a"]
