"""Serve a directory of static files at /dev-ui/ on the API's own origin (google-adk's bundled dev UI).

Set ``AGENTQ_DEV_UI_DIR`` (``agentq api --dev-ui-dir PATH``) to a built dev UI, such as the
``google/adk/cli/browser`` folder of an installed google-adk package. agentq ships no UI and never imports
google-adk: it only serves the files. The UI sends no bearer key, so use it with no keys configured (then the
API serves loopback clients only; the static files themselves need no key).

Besides its files, the UI first reads ``/dev-ui/assets/config/runtime-config.json`` (ADK's server writes it per
request): ``backendUrl`` "" puts the API on the page's own origin, and ``telemetry: false`` says there is no
usage reporting to consent to (otherwise the UI opens a consent dialog over the page). With that, chatting,
long-running calls, tool confirmations, renaming sessions (PATCH of the session's state), artifacts and the
Traces view work on agentq's ADK routes (``api.routes.sessions``, ``run``, ``artifacts``, ``adk_dev``). The
dev-server features agentq does not serve (graphs, builder, evals, agent tests) answer 404 naming the feature,
and the UI carries on without them.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from runtime.errors import UsageError

PREFIX = "/dev-ui"

router = APIRouter(tags=["dev-ui"], include_in_schema=False)


@router.get(PREFIX + "/assets/config/runtime-config.json")
async def runtime_config() -> JSONResponse:
    """The dev UI's runtime config: the API is on the page's own origin."""
    return JSONResponse({"backendUrl": "", "telemetry": False}, headers={"Cache-Control": "no-store"})


@router.get(PREFIX)
async def add_slash() -> RedirectResponse:
    """/dev-ui -> /dev-ui/ (the UI resolves its files relative to the trailing slash)."""
    return RedirectResponse(PREFIX + "/")


def mount_dev_ui(app: FastAPI, directory: str) -> None:
    """Serve ``directory`` at /dev-ui/ (index.html for the folder), after the config route above."""
    if not Path(directory, "index.html").is_file():
        raise UsageError(f"dev UI directory {directory!r} has no index.html")
    app.include_router(router)
    app.mount(PREFIX + "/", StaticFiles(directory=directory, html=True), name="dev-ui")
