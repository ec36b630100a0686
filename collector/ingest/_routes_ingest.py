"""`POST /v1/traces`, `/v1/logs`, `/v1/metrics`: OTLP/HTTP export, answered in OTLP (protobuf or JSON) whatever
the outcome. Logs keep their GenAI events (as event spans, see _signals.py); metrics are acknowledged only."""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute

from passhat.collector.ingest._auth import Project
from passhat.collector.ingest._otlp import JSON, PROTOBUF, OtlpError, decompress, encode_response, encode_status
from passhat.collector.ingest._signals import (
    check_metrics,
    encode_logs_response,
    encode_metrics_response,
    logs_as_traces,
)
from passhat.collector.ingest._state import CurrentState, app_state
from passhat.collector.ingest._writer import QueueFullError
from passhat.collector.store import StoreError

_ROUTE = "/v1/traces"
_LOGS = "/v1/logs"
_METRICS = "/v1/metrics"
_OTLP_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
            JSON: {"schema": {"type": "object", "description": "OTLP JSON ExportTraceServiceRequest"}},
        },
    }
}


def _media_type(request: Request) -> str:
    raw = request.headers.get("content-type", "")
    media = raw.split(";", 1)[0].strip().lower()
    return PROTOBUF if media == "application/protobuf" else media


def _otlp_error(status: int, message: str, media: str, headers: dict[str, str] | None = None) -> Response:
    body_type = PROTOBUF if media == PROTOBUF else JSON
    return Response(encode_status(status, message, body_type), status, headers, media_type=body_type)


class _OtlpRoute(APIRoute):
    """Counts and times every export, and answers a refused key in OTLP (an exporter cannot read FastAPI JSON)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            started = time.perf_counter()
            try:
                response = await handler(request)
            except HTTPException as exc:  # from the authentication dependency
                response = _otlp_error(exc.status_code, str(exc.detail), _media_type(request))
            metrics = (await app_state(request)).metrics
            metrics.requests.labels(self.path, str(response.status_code)).inc()
            metrics.request_seconds.labels(self.path).observe(time.perf_counter() - started)
            return response

        return handle


router = APIRouter(tags=["ingest"], route_class=_OtlpRoute)


@router.post(
    _ROUTE,
    summary="OTLP/HTTP trace export (protobuf or JSON, optionally gzip)",
    openapi_extra=_OTLP_BODY,
    responses={
        200: {"description": "Accepted (possibly a partial success naming the rejected spans)"},
        400: {"description": "Malformed body"},
        401: {"description": "Missing or invalid API key"},
        413: {"description": "Body above the size limit"},
        415: {"description": "Unsupported content type or encoding"},
        429: {"description": "Write queue full: retry after Retry-After seconds"},
        503: {"description": "The store is unavailable: retry after Retry-After seconds"},
    },
)
async def export_traces(request: Request, project: Project, state: CurrentState) -> Response:
    media = _media_type(request)
    if media not in (PROTOBUF, JSON):
        return _otlp_error(415, f"Content-Type must be {PROTOBUF} or {JSON}, not {media or 'missing'!r}", media)
    retry = {"Retry-After": str(state.settings.retry_after_s)}
    try:
        raw = await _read_body(request, state.settings.max_body_bytes)
        # Decoding is CPU-bound: the ingest thread decodes and commits (see _writer.py), so the event loop stays
        # free for health checks and small requests.
        outcome = await state.writer.submit(project, raw, request.headers.get("content-encoding"), media)
    except OtlpError as exc:
        return _otlp_error(exc.status, exc.message, media)
    except QueueFullError as exc:
        return _otlp_error(429, f"the collector is busy ({exc}): retry later", media, retry)
    except StoreError as exc:
        return _otlp_error(503, f"the store could not commit the spans, none were kept: {exc}", media, retry)
    return Response(encode_response(outcome.decoded.rejected, media), 200, media_type=media)


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise OtlpError(413, f"the body is {declared} bytes, above the {limit}-byte limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise OtlpError(413, f"the body exceeds the {limit}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


_SIGNAL_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "Accepted"},
    400: {"description": "Malformed body"},
    401: {"description": "Missing or invalid API key"},
    413: {"description": "Body above the size limit"},
    415: {"description": "Unsupported content type or encoding"},
    429: {"description": "Write queue full: retry after Retry-After seconds"},
    503: {"description": "The store is unavailable: retry after Retry-After seconds"},
}


@router.post(
    _LOGS,
    summary="OTLP/HTTP logs export: GenAI events (gen_ai.*) with trace context are kept, the rest dropped",
    openapi_extra=_OTLP_BODY,
    responses=_SIGNAL_RESPONSES,
)
async def export_logs(request: Request, project: Project, state: CurrentState) -> Response:
    media = _media_type(request)
    if media not in (PROTOBUF, JSON):
        return _otlp_error(415, f"Content-Type must be {PROTOBUF} or {JSON}, not {media or 'missing'!r}", media)
    retry = {"Retry-After": str(state.settings.retry_after_s)}
    limit = state.settings.max_body_bytes
    try:
        raw = await _read_body(request, limit)
        body = await run_in_threadpool(decompress, raw, request.headers.get("content-encoding"), limit=limit)
        traces, _dropped = await run_in_threadpool(logs_as_traces, body, media)
        if traces.resource_spans:
            await state.writer.submit(project, traces.SerializeToString(), None, PROTOBUF)
    except OtlpError as exc:
        return _otlp_error(exc.status, exc.message, media)
    except QueueFullError as exc:
        return _otlp_error(429, f"the collector is busy ({exc}): retry later", media, retry)
    except StoreError as exc:
        return _otlp_error(503, f"the store could not commit the log events, none were kept: {exc}", media, retry)
    return Response(encode_logs_response(media), 200, media_type=media)


@router.post(
    _METRICS,
    summary="OTLP/HTTP metrics export: acknowledged and dropped (passhat derives its numbers from spans)",
    openapi_extra=_OTLP_BODY,
    responses=_SIGNAL_RESPONSES,
)
async def export_metrics(request: Request, project: Project, state: CurrentState) -> Response:
    media = _media_type(request)
    if media not in (PROTOBUF, JSON):
        return _otlp_error(415, f"Content-Type must be {PROTOBUF} or {JSON}, not {media or 'missing'!r}", media)
    limit = state.settings.max_body_bytes
    try:
        raw = await _read_body(request, limit)
        body = await run_in_threadpool(decompress, raw, request.headers.get("content-encoding"), limit=limit)
        await run_in_threadpool(check_metrics, body, media)
    except OtlpError as exc:
        return _otlp_error(exc.status, exc.message, media)
    return Response(encode_metrics_response(media), 200, media_type=media)
