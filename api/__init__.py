"""agentq's HTTP API (FastAPI): ADK-compatible session and run routes, the queue routes, SSE, auth.

``create_app(settings, services)`` builds the ASGI app; ``agentq api`` serves it with uvicorn.
Agents never run in this process: /run, /run_sse and the queue routes enqueue to the workers.
"""

from api.app import create_app
from api.settings import ApiSettings

__all__ = ["ApiSettings", "create_app"]
