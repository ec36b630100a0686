"""`POST /v1/traces`, `/v1/logs`, `/v1/metrics`: OTLP/HTTP export, answered in OTLP (protobuf or JSON) whatever
the outcome. Logs keep their GenAI events (as event spans, see _signals.py); metrics are acknowledged only."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from starlette.requests import ClientDisconnect

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


def _otlp_error(status: int, message: str, media: str, headers: Mapping[str, str] | None = None) -> Response:
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
                response = _otlp_error(exc.status_code, str(exc.detail), _media_type(request), exc.headers)
            metrics = (await app_state(request)).metrics
            metrics.requests.labels(self.path, str(response.status_code)).inc()
            metrics.request_seconds.labels(self.path).observe(time.perf_counter() - started)
            return response

        return handle


log = logging.getLogger("passhat.collector")

router = APIRouter(tags=["ingest"], route_class=_OtlpRoute)


@router.post(
    _ROUTE,
    summary="OTLP/HTTP trace export (protobuf or JSON, optionally gzip)",
    openapi_extra=_OTLP_BODY,
    responses={
        200: {"description": "Accepted (possibly a partial success naming the rejected spans)"},
        400: {"description": "Malformed body"},
        401: {"description": "Missing or invalid API key"},
        408: {"description": "The body did not arrive within the body timeout"},
        413: {"description": "Body above the size limit"},
        415: {"description": "Unsupported content type or encoding"},
        429: {"description": "Write queue full, or too many refused keys from this address: see Retry-After"},
        503: {"description": "The store is unavailable: retry after Retry-After seconds"},
    },
)
async def export_traces(request: Request, project: Project, state: CurrentState) -> Response:
    media = _media_type(request)
    if media not in (PROTOBUF, JSON):
        return _otlp_error(415, f"Content-Type must be {PROTOBUF} or {JSON}, not {media or 'missing'!r}", media)
    retry = {"Retry-After": str(state.settings.retry_after_s)}
    try:
        raw = await _read_body(request, state.settings.max_body_bytes, state.settings.body_timeout_s)
        # Decoding is CPU-bound: the ingest thread decodes and commits (see _writer.py), so the event loop stays
        # free for health checks and small requests.
        outcome = await state.writer.submit(project, raw, request.headers.get("content-encoding"), media)
    except OtlpError as exc:
        # A body left unread (too slow, too large) must not be taken for the connection's next request.
        unread = {"connection": "close"} if exc.status in (408, 413) else None
        return _otlp_error(exc.status, exc.message, media, unread)
    except QueueFullError as exc:
        return _otlp_error(429, f"the collector is busy ({exc}): retry later", media, retry)
    except StoreError:  # logged by the ingest thread: the body stays generic, it may reach anyone
        return _otlp_error(503, "the store could not commit the spans, none were kept: retry later", media, retry)
    return Response(encode_response(outcome.decoded.rejected, media), 200, media_type=media)


async def _read_body(request: Request, limit: int, timeout: float) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
        raise OtlpError(413, f"the body is {declared[:40]} bytes, above the {limit}-byte limit")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise OtlpError(413, f"the body exceeds the {limit}-byte limit")
                chunks.append(chunk)
    except TimeoutError:
        raise OtlpError(408, f"the body did not arrive within {timeout:g} s: send it faster, or smaller") from None
    except ClientDisconnect:
        raise OtlpError(400, "the client disconnected before sending its whole body") from None
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
        raw = await _read_body(request, limit, state.settings.body_timeout_s)
        body = await run_in_threadpool(decompress, raw, request.headers.get("content-encoding"), limit=limit)
        traces, _dropped = await run_in_threadpool(logs_as_traces, body, media)
        if traces.resource_spans:
            await state.writer.submit(project, traces.SerializeToString(), None, PROTOBUF)
    except OtlpError as exc:
        return _otlp_error(exc.status, exc.message, media)
    except QueueFullError as exc:
        return _otlp_error(429, f"the collector is busy ({exc}): retry later", media, retry)
    except StoreError as exc:
        log.error("log events could not be committed: %r", exc)  # the answer stays generic (see export_traces)
        return _otlp_error(503, "the store could not commit the log events, none were kept: retry later", media, retry)
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
        raw = await _read_body(request, limit, state.settings.body_timeout_s)
        body = await run_in_threadpool(decompress, raw, request.headers.get("content-encoding"), limit=limit)
        await run_in_threadpool(check_metrics, body, media)
    except OtlpError as exc:
        return _otlp_error(exc.status, exc.message, media)
    return Response(encode_metrics_response(media), 200, media_type=media)
