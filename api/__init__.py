"""agentq's HTTP API (FastAPI): ADK-compatible session and run routes, the queue routes, SSE, auth.

``create_app(settings, services)`` builds the ASGI app; ``agentq api`` serves it with uvicorn.
Agents never run in this process: /run, /run_sse and the queue routes enqueue to the workers.

The package imports nothing itself: a terminal command that needs one small module of it (the SSE reader, the
doors) does not pay for FastAPI and every route. ``create_app`` and ``ApiSettings`` load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from api.app import create_app
    from api.settings import ApiSettings

__all__ = ["ApiSettings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from api.app import create_app
        return create_app
    if name == "ApiSettings":
        from api.settings import ApiSettings
        return ApiSettings
    raise AttributeError(f"module 'api' has no attribute {name!r}")
