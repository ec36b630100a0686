"""Operations: `/healthz` for load balancers and orchestrators, `/metrics` for Prometheus (per-project gauges only
for a scrape authorised for them)."""

from __future__ import annotations

import hmac
import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from passhat.collector.ingest._api_models import Health
from passhat.collector.ingest._auth import bearer_key
from passhat.collector.ingest._business import ALL_PROJECTS, FixedFamilies
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


async def metrics_scope(request: Request, state: CurrentState) -> str | None:
    """Whose gauges a scrape may see: every project's with the metrics token (PASSHAT_METRICS_TOKEN), its own
    project's with a project API key, none (aggregates only) without a credential or with one that is not valid."""
    key = bearer_key(request)
    if key is None:
        return None
    token = state.settings.metrics_token
    if token and hmac.compare_digest(key.encode(), token.encode()):
        return ALL_PROJECTS
    address = request.client.host if request.client is not None else ""
    wait_s = state.auth_failures.wait_s(address)
    project = state.keys.project_for(key, look_up=not wait_s)
    if project is None and not wait_s:
        state.auth_failures.refused(address)
    return project


@router.get("/metrics", response_class=Response)
def prometheus(state: CurrentState, scope: Annotated[str | None, Depends(metrics_scope)]) -> Response:
    scrape = CollectorRegistry(auto_describe=False)
    scrape.register(FixedFamilies(state.business.families(scope)))
    body = generate_latest(state.metrics.registry) + generate_latest(scrape)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
