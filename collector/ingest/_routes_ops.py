"""Operations: `/healthz` for load balancers and orchestrators, `/metrics` for Prometheus."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from passhat.collector.ingest._api_models import Health
from passhat.collector.ingest._state import CurrentState

router = APIRouter(tags=["ops"])
log = logging.getLogger("passhat.collector.ops")


@router.get("/healthz", response_model=Health, responses={503: {"description": "Store down"}})
def healthz(state: CurrentState) -> Response:
    try:
        version = state.store.schema_version()
    except Exception as exc:  # any failure of the store is "unavailable" to a load balancer
        # No key guards this route: the store's error (which may name hosts and tables) goes to the log only.
        log.error("health check: the store did not answer: %r", exc)
        return JSONResponse({"status": "unavailable", "store": "unavailable"}, 503)
    health = Health(
        status="ok",
        store="ok",
        schema_version=version,
        queued_bytes=state.writer.queued_bytes,
        queued_spans=state.writer.queued_spans,
    )
    return JSONResponse(health.model_dump())


@router.get("/metrics", response_class=Response)
def prometheus(state: CurrentState) -> Response:
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
