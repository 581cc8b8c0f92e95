"""Operations routes: /health and Prometheus /metrics (who may read them: ``api.access.ops_access``)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

router = APIRouter(tags=["ops"])


@router.get("/health")
async def health(request: Request):
    """200 ``{"status": "ok", "redis": "ok", "workers": N}`` when Redis answers (or none is used); 503 otherwise.

    ``workers`` counts the workers alive (heartbeats); with none, ``warning`` says that invocations only queue.
    The status stays ``ok``: the API itself serves, and a load balancer must not take it out for that."""
    queue = request.app.state.services.queue
    if queue is None:  # in-process, without Redis
        return {"status": "ok", "redis": "not used"}
    try:
        await queue.ops.check_store()
        workers = len(await queue.ops.alive_workers())
    except Exception as exc:
        return JSONResponse({"status": "unavailable", "redis": str(exc) or type(exc).__name__}, status_code=503)
    body = {"status": "ok", "redis": "ok", "workers": workers}
    if workers == 0:
        body["warning"] = "no worker is alive: invocations wait 'queued' until one starts (agentq worker)"
    return body


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """Prometheus text format."""
    state = request.app.state
    await state.metrics.refresh(state.stats_provider)
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
