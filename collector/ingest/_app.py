"""The collector's HTTP app: OTLP/HTTP trace ingest and the JSON query API, built from settings."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Literal, TypeVar

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from passhat import __version__
from passhat.collector.ingest._api_models import (
    Health,
    TicketDetailOut,
    TicketList,
    TicketOut,
    TrafficList,
    TrafficOut,
)
from passhat.collector.ingest._keys import hash_api_key
from passhat.collector.ingest._metrics import CollectorMetrics
from passhat.collector.ingest._otlp import (
    JSON,
    PROTOBUF,
    DecodedTraces,
    OtlpError,
    decode_protobuf,
    decode_traces,
    decompress,
    encode_response,
    encode_status,
    parse_request,
)
from passhat.collector.ingest._settings import CollectorSettings
from passhat.collector.ingest._writer import GroupCommitWriter, QueueFullError
from passhat.collector.store import Store, StoreError, open_store

_T = TypeVar("_T")
_bearer = HTTPBearer(auto_error=False, description="A project API key: `passhat keys create --project NAME`.")
_OTLP_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
            JSON: {"schema": {"type": "object", "description": "OTLP JSON ExportTraceServiceRequest"}},
        },
    }
}


class _KeyCache:
    """Key hash -> project for `ttl` seconds, so ingest does not read the keys table on every request."""

    def __init__(self, store: Store, ttl: float) -> None:
        self._store = store
        self._ttl = ttl
        self._entries: dict[str, tuple[float, str | None]] = {}

    def project_for(self, key: str) -> str | None:
        digest = hash_api_key(key)
        now = time.monotonic()
        hit = self._entries.get(digest)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        record = self._store.find_api_key(digest)
        project = record.project if record is not None and record.active else None
        if len(self._entries) > 10_000:
            self._entries.clear()
        self._entries[digest] = (now, project)
        return project


def _media_type(request: Request) -> str:
    raw = request.headers.get("content-type", "")
    media = raw.split(";", 1)[0].strip().lower()
    return PROTOBUF if media == "application/protobuf" else media


def _bearer_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return request.headers.get("x-api-key") or None


def _project_of(
    request: Request,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)] = None,
) -> str:
    """The project of the request's API key, or a 401."""
    key = _bearer_key(request)
    cache: _KeyCache = request.app.state.passhat_keys
    project = cache.project_for(key) if key else None
    if project is None:
        raise HTTPException(
            401,
            "a valid API key is required: send 'Authorization: Bearer <key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return project


_ProjectName = Annotated[str, Depends(_project_of)]


def create_app(
    settings: CollectorSettings | None = None, *, store: Store | None = None, routers: Sequence[APIRouter] = ()
) -> FastAPI:
    """Build the collector app. Without `store`, the app opens (and closes) the one `settings` names.

    `routers` are mounted as they are (the web UI's, from a higher layer: ingest does not import it); they find
    the store at `request.app.state.passhat_store`."""
    settings = settings or CollectorSettings()
    metrics = CollectorMetrics()
    state: dict[str, object] = {}

    def _decode(raw: bytes, encoding: str | None, media: str) -> DecodedTraces:
        body = decompress(raw, encoding, limit=settings.max_body_bytes)
        if not body:
            raise OtlpError(400, "the body is empty: send an ExportTraceServiceRequest")
        if media == PROTOBUF:
            return decode_protobuf(body, max_attribute_bytes=settings.max_attribute_bytes)
        return decode_traces(parse_request(body, media), max_attribute_bytes=settings.max_attribute_bytes)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        own_store = store is None
        active = store if store is not None else open_store(settings.resolved_store_url())
        writer = GroupCommitWriter(
            active,
            metrics,
            _decode,
            max_queued_bytes=settings.max_queued_bytes,
            max_commit_spans=settings.max_commit_spans,
        )
        state.update(store=active, writer=writer, keys=_KeyCache(active, settings.key_cache_s))
        _app.state.passhat_keys = state["keys"]
        _app.state.passhat_store = active
        try:
            yield
        finally:
            writer.close()
            if own_store:
                active.close()

    app = FastAPI(
        title="passhat collector",
        version=__version__,
        description="OTLP/HTTP trace ingest for LLM agents, and the tickets, tool calls, state writes and "
        "daily traffic derived from them.",
        lifespan=lifespan,
    )

    def current_store() -> Store:
        return state["store"]  # type: ignore[return-value]

    def writer() -> GroupCommitWriter:
        return state["writer"]  # type: ignore[return-value]

    def keys() -> _KeyCache:
        return state["keys"]  # type: ignore[return-value]

    def otlp_error(status: int, message: str, media: str, headers: dict[str, str] | None = None) -> Response:
        body_type = PROTOBUF if media == PROTOBUF else JSON
        return Response(encode_status(status, message, body_type), status, headers, media_type=body_type)

    @app.post(
        "/v1/traces",
        tags=["ingest"],
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
    async def export_traces(request: Request) -> Response:
        started = time.perf_counter()
        media = _media_type(request)
        response = await _export(request, media)
        metrics.requests.labels("/v1/traces", str(response.status_code)).inc()
        metrics.request_seconds.labels("/v1/traces").observe(time.perf_counter() - started)
        return response

    async def _read_body(request: Request) -> bytes:
        limit = settings.max_body_bytes
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

    async def _export(request: Request, media: str) -> Response:
        key = _bearer_key(request)
        project = keys().project_for(key) if key else None
        if project is None:
            return otlp_error(401, "a valid API key is required: send 'Authorization: Bearer <key>'", media)
        if media not in (PROTOBUF, JSON):
            return otlp_error(415, f"Content-Type must be {PROTOBUF} or {JSON}, not {media or 'missing'!r}", media)
        retry = {"Retry-After": str(settings.retry_after_s)}
        try:
            raw = await _read_body(request)
            # Decoding is CPU-bound: the ingest thread decodes and commits (see collector/_writer.py), so the
            # event loop stays free for health checks and small requests.
            future = writer().submit(project, raw, request.headers.get("content-encoding"), media)
            outcome = await future
        except OtlpError as exc:
            return otlp_error(exc.status, exc.message, media)
        except QueueFullError as exc:
            return otlp_error(429, f"the collector is busy ({exc}): retry later", media, retry)
        except StoreError as exc:
            return otlp_error(503, f"the store could not commit the spans, none were kept: {exc}", media, retry)
        return Response(encode_response(outcome.decoded.rejected, media), 200, media_type=media)

    @app.get("/api/tickets", tags=["query"], response_model=TicketList)
    def list_tickets(
        project: _ProjectName,
        task_type: Annotated[str | None, Query(max_length=400)] = None,
        since: Annotated[dt.datetime | None, Query(description="ISO 8601; tickets started at or after")] = None,
        source: Literal["production", "sandbox"] | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    ) -> TicketList:
        since_ns = None
        if since is not None:
            moment = since if since.tzinfo else since.replace(tzinfo=dt.UTC)
            since_ns = min(max(int(moment.timestamp() * 1e6), 0) * 1000, 2**63 - 1)
        rows = _query(
            lambda: current_store().list_tickets(
                project, task_type=task_type, source=source, since_ns=since_ns, limit=limit, offset=offset
            )
        )
        return TicketList(tickets=[TicketOut.of(r) for r in rows])

    @app.get(
        "/api/tickets/{ticket_id}",
        tags=["query"],
        response_model=TicketDetailOut,
        responses={404: {"description": "No such ticket in this project"}},
    )
    def get_ticket(
        project: _ProjectName,
        ticket_id: Annotated[str, Path(max_length=400)],
        source: Literal["production", "sandbox"] | None = None,
    ) -> TicketDetailOut:
        detail = _query(lambda: current_store().get_ticket(project, ticket_id, source=source))
        if detail is None:
            raise HTTPException(404, f"no ticket {ticket_id!r} in this project")
        return TicketDetailOut.of(detail)

    @app.get("/api/traffic", tags=["query"], response_model=TrafficList)
    def traffic(
        project: _ProjectName,
        days: Annotated[int, Query(ge=1, le=3660)] = 7,
        source: Literal["production", "sandbox"] = "production",
    ) -> TrafficList:
        rows = _query(lambda: current_store().traffic(project, days=days, source=source))
        return TrafficList(days=days, traffic=[TrafficOut.of(r) for r in rows])

    @app.get("/healthz", tags=["ops"], response_model=Health, responses={503: {"description": "Store down"}})
    def healthz() -> Response:
        try:
            version = current_store().schema_version()
        except Exception as exc:
            return JSONResponse({"status": "unavailable", "store": str(exc)}, 503)
        ingest = writer()
        health = Health(
            status="ok",
            store="ok",
            schema_version=version,
            queued_bytes=ingest.queued_bytes,
            queued_spans=ingest.queued_spans,
        )
        return JSONResponse(health.model_dump())

    @app.get("/metrics", tags=["ops"], response_class=Response)
    def prometheus() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    for router in routers:
        app.include_router(router)
    return app


def _query(call: Callable[[], _T]) -> _T:
    try:
        return call()
    except StoreError as exc:
        raise HTTPException(503, f"the store is unavailable: {exc}", headers={"Retry-After": "5"}) from exc
