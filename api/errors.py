"""One place that turns exceptions into HTTP answers: every 4xx/5xx has a JSON body naming the problem.

Body shape: ``{"error": "<ErrorClass>", "detail": "<message>"}`` (validation errors add ``"errors"``).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.access.auth import ForbiddenError, UnauthorizedError
from runtime import errors
from worker.queues.rate_limits import RateLimitRefusedError
from worker.records.store_errors import StoreError, is_store_unavailable

log = logging.getLogger("agentq.api")

# Most specific first: the first matching class decides the status.
STATUS_BY_ERROR: list[tuple[type[BaseException], int]] = [
    (UnauthorizedError, 401),
    (ForbiddenError, 403),
    (errors.PayloadTooLargeError, 413),
    (errors.UsageError, 400),
    (errors.NotFoundError, 404),
    (errors.ConflictError, 409),
    (RateLimitRefusedError, 429),  # a schedule triggered past its user's rate limit (worker.rate_limits)
    (errors.RetryableError, 503),
    (TimeoutError, 504),
    (errors.RunError, 502),
]


def status_for(exc: BaseException) -> int:
    """The HTTP status an exception maps to (500 for anything unexpected)."""
    for error_type, status in STATUS_BY_ERROR:
        if isinstance(exc, error_type):
            return status
    # a dropped connection, a restart (refused, or LOADING its AOF), a failover (READONLY): 503, try again soon
    if is_store_unavailable(exc):
        return 503
    return 500


def error_body(exc: BaseException) -> dict:
    """The JSON body for ``exc``."""
    return {"error": type(exc).__name__, "detail": str(exc) or type(exc).__name__}


def error_response(exc: BaseException) -> JSONResponse:
    """A JSONResponse for ``exc`` with the mapped status."""
    status = status_for(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if status == 503:
        headers = {"Retry-After": "1"}
    if status == 429:
        headers = {"Retry-After": str(exc.retry_after_s)}
    return JSONResponse(error_body(exc), status_code=status, headers=headers)


def _validation_details(errs: list) -> list[dict]:
    details = []
    for err in errs:
        loc = [str(part) for part in err.get("loc", ())]
        details.append({"loc": loc, "msg": err.get("msg", ""), "type": err.get("type", "")})
    return details


def _validation_response(errs: list, hint: str | None = None) -> JSONResponse:
    details = _validation_details(errs)
    summary = "; ".join(f"{'.'.join(d['loc']) or 'body'}: {d['msg']}" for d in details[:5])
    detail = summary or "invalid request"
    body = {"error": "ValidationError", "detail": f"{detail} ({hint})" if hint else detail, "errors": details}
    return JSONResponse(body, status_code=422)


NO_JSON_CONTENT_TYPE = ("the body was not read as JSON: send it with the header Content-Type: application/json, "
                        "e.g. curl -H 'Content-Type: application/json' -d '{...}'")


def _json_without_content_type(request: Request, errs: list) -> bool:
    """True when the body was refused as a whole, and it came without a JSON content type: FastAPI then hands
    the model the raw bytes, and the error ("Input should be a valid dictionary") does not say why."""
    content_type = request.headers.get("content-type", "")
    whole_body = any(tuple(err.get("loc", ())) == ("body",) for err in errs)
    return whole_body and "json" not in content_type.lower()


def json_syntax_response(document: object, err: dict) -> JSONResponse:
    """400 for a body that is not JSON, naming the line and column (as the README promises), not pydantic's
    ``body.68: JSON decode error``."""
    position = err.get("loc", ("body", 0))[-1]
    text = document.decode("utf-8", "replace") if isinstance(document, bytes) else str(document or "")
    position = position if isinstance(position, int) else 0
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    reason = (err.get("ctx") or {}).get("error", "JSON decode error")
    detail = f"the body is not valid JSON: {reason} at line {line} column {column} (char {position})"
    return JSONResponse({"error": "JSONDecodeError", "detail": detail, "line": line, "column": column},
                        status_code=400)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(errors.AgentqError)
    async def _agentq_error(request: Request, exc: errors.AgentqError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errs = list(exc.errors())
        broken = next((err for err in errs if err.get("type") == "json_invalid"), None)
        if broken is not None:
            return json_syntax_response(exc.body, broken)
        return _validation_response(errs, hint=NO_JSON_CONTENT_TYPE if _json_without_content_type(request, errs)
                                    else None)

    @app.exception_handler(ValidationError)
    async def _pydantic_validation(request: Request, exc: ValidationError) -> JSONResponse:
        return _validation_response(list(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http_exception(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        body = {"error": "HTTPError", "detail": str(exc.detail)}
        return JSONResponse(body, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    # Registered apart from Exception: Starlette re-raises what the catch-all handler answered into the server,
    # which then drops the connection; these are answered by the inner exception middleware instead.
    @app.exception_handler(StoreError)
    async def _store_error(request: Request, exc: StoreError) -> JSONResponse:
        return await _unexpected(request, exc)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        status = status_for(exc)
        if status == 500:
            log.exception("unexpected error on %s %s", request.method, request.url.path)
            return JSONResponse({"error": "InternalError", "detail": "internal error"}, status_code=500)
        return error_response(exc)
