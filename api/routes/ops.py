"""Operations routes: /health and Prometheus /metrics (who may read them: ``api.ops_access``)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

router = APIRouter(tags=["ops"])


@router.get("/health")
async def health(request: Request):
    """200 ``{"status": "ok"}`` when Redis answers (or none is used); 503 otherwise."""
    redis = request.app.state.services.redis
    if redis is None:
        return {"status": "ok", "redis": "not used"}
    try:
        await redis.ping()
    except Exception as exc:
        return JSONResponse({"status": "unavailable", "redis": str(exc) or type(exc).__name__}, status_code=503)
    return {"status": "ok", "redis": "ok"}


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """Prometheus text format."""
    state = request.app.state
    await state.metrics.refresh(state.stats_provider)
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
