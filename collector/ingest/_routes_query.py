"""The JSON query API (`/api/...`): a project's tickets, one ticket in full, and its daily traffic."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from fastapi import APIRouter, Depends, HTTPException, Path, Query

from passhat.collector.ingest._api_models import TicketDetailOut, TicketList, TicketOut, TrafficList, TrafficOut
from passhat.collector.ingest._auth import Project, bearer
from passhat.collector.ingest._state import CurrentState
from passhat.collector.store import StoreError

_T = TypeVar("_T")

# The bearer scheme is declared here, not in `project_of`, so the OpenAPI schema names it on these routes only:
# an OTLP exporter does not read it.
router = APIRouter(tags=["query"], dependencies=[Depends(bearer)])


@router.get("/api/tickets", response_model=TicketList)
def list_tickets(
    project: Project,
    state: CurrentState,
    task_type: Annotated[str | None, Query(max_length=400)] = None,
    since: Annotated[dt.datetime | None, Query(description="ISO 8601; tickets started at or after")] = None,
    source: Literal["production", "sandbox"] | None = None,
    run: Annotated[str | None, Query(max_length=200, description="Only the sandbox trials of this replay run")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> TicketList:
    since_ns = None
    if since is not None:
        moment = since if since.tzinfo else since.replace(tzinfo=dt.UTC)
        since_ns = min(max(int(moment.timestamp() * 1e6), 0) * 1000, 2**63 - 1)
    rows = _query(
        lambda: state.store.list_tickets(
            project,
            task_type=task_type,
            source=source,
            since_ns=since_ns,
            replay_run_id=run,
            limit=limit,
            offset=offset,
        )
    )
    return TicketList(tickets=[TicketOut.of(r) for r in rows])


@router.get(
    "/api/tickets/{ticket_id}",
    response_model=TicketDetailOut,
    responses={404: {"description": "No such ticket in this project"}},
)
def get_ticket(
    project: Project,
    state: CurrentState,
    ticket_id: Annotated[str, Path(max_length=400)],
    source: Literal["production", "sandbox"] | None = None,
) -> TicketDetailOut:
    detail = _query(lambda: state.store.get_ticket(project, ticket_id, source=source))
    if detail is None:
        raise HTTPException(404, f"no ticket {ticket_id!r} in this project")
    return TicketDetailOut.of(detail)


@router.get("/api/traffic", response_model=TrafficList)
def traffic(
    project: Project,
    state: CurrentState,
    days: Annotated[int, Query(ge=1, le=3660)] = 7,
    source: Literal["production", "sandbox"] = "production",
) -> TrafficList:
    rows = _query(lambda: state.store.traffic(project, days=days, source=source))
    return TrafficList(days=days, traffic=[TrafficOut.of(r) for r in rows])


def _query(call: Callable[[], _T]) -> _T:
    try:
        return call()
    except StoreError as exc:
        raise HTTPException(503, f"the store is unavailable: {exc}", headers={"Retry-After": "5"}) from exc
