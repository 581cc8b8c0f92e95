"""The approver's web page at /ui (``/`` redirects there): a static app of plain HTML, CSS and JS modules.

The files (``api/ui/``) are served as they are, no build step; the page calls the JSON routes with the key it
asks for (kept in the tab's sessionStorage), so it sees exactly what that key sees. The files themselves hold
nothing secret and need no key.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

UI_DIR = Path(__file__).resolve().parent.parent / "ui"

router = APIRouter(tags=["ui"], include_in_schema=False)


@router.get("/")
async def root() -> RedirectResponse:
    """/ -> /ui."""
    return RedirectResponse("/ui")


@router.get("/ui")
async def page() -> FileResponse:
    """The page (every view is a #fragment of it)."""
    return FileResponse(UI_DIR / "index.html", headers={"Cache-Control": "no-cache"})


def mount_ui(app: FastAPI) -> None:
    """Add the page's routes and its files at /ui/static/."""
    app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=UI_DIR / "static"), name="ui-static")
