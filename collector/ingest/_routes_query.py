"""The JSON query API (`/api/...`): a project's tickets, one ticket in full, traces as trees, daily traffic."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from fastapi import APIRouter, Depends, HTTPException, Path, Query

from passhat.collector.ingest._api_models import (
    ProductionVerdictOut,
    TicketDetailOut,
    TicketList,
    TicketOut,
    TrafficList,
    TrafficOut,
)
from passhat.collector.ingest._auth import Project, bearer
from passhat.collector.ingest._state import AppState, CurrentState
from passhat.collector.ingest._trace_tree import TraceOut, trace_tree, usage_of
from passhat.collector.store import Source, StoreError, TicketRow

_T = TypeVar("_T")
log = logging.getLogger("passhat.collector.query")

# The bearer scheme is declared here, not in `project_of`, so the OpenAPI schema names it on these routes only:
# an OTLP exporter does not read it.
router = APIRouter(tags=["query"], dependencies=[Depends(bearer)])


@router.get("/api/tickets", response_model=TicketList)
def list_tickets(
    project: Project,
    state: CurrentState,
    task_type: Annotated[str | None, Query(max_length=400)] = None,
    since: Annotated[dt.datetime | None, Query(description="ISO 8601; tickets started at or after")] = None,
    until: Annotated[dt.datetime | None, Query(description="ISO 8601; tickets started before")] = None,
    source: Literal["production", "sandbox"] | None = None,
    outcome: Annotated[str | None, Query(max_length=400, description="passhat.ticket.outcome, e.g. resolved")] = None,
    run: Annotated[str | None, Query(max_length=200, description="Only the sandbox trials of this replay run")] = None,
    verdict: Annotated[
        Literal["passed", "failed", "ungraded"] | None,
        Query(description="Production tickets by their own verdict (`passhat grade`)"),
    ] = None,
    signature: Annotated[
        str | None, Query(max_length=64, description="Production tickets that failed with this signature")
    ] = None,
    replays: Annotated[
        Literal["all_passed", "some_failed", "not_replayed"] | None,
        Query(description="Production tickets by their replays' attempts"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> TicketList:
    since_ns, until_ns = _ns(since), _ns(until)
    if verdict is not None or signature is not None or replays is not None:
        if source == "sandbox" or run is not None:
            raise HTTPException(
                422, "verdict, signature and replays filter production tickets: drop source=sandbox and run"
            )
        found = _query(
            lambda: state.store.search_tickets_by_verdict(
                project, verdict, signature=signature, replays=replays, task_type=task_type, outcome=outcome,
                since_ns=since_ns, until_ns=until_ns, limit=limit, offset=offset,
            )
        )  # fmt: skip
        return _with_verdicts(state, project, found)
    rows = _query(
        lambda: state.store.list_tickets(
            project,
            task_type=task_type,
            source=source,
            since_ns=since_ns,
            until_ns=until_ns,
            outcome=outcome,
            replay_run_id=run,
            limit=limit,
            offset=offset,
        )
    )
    return _with_verdicts(state, project, rows)


def _with_verdicts(state: AppState, project: str, rows: list[TicketRow]) -> TicketList:
    """The tickets, each production one with its own verdict when it has been graded."""
    wanted = [r.ticket_id for r in rows if r.source == "production"]
    verdicts = _query(lambda: state.store.production_verdicts(project, wanted)) if wanted else {}
    tallies = _query(lambda: state.store.trial_tallies(project, wanted)) if wanted else {}
    return TicketList(
        tickets=[
            TicketOut.of(r, verdicts.get(r.ticket_id), tallies.get(r.ticket_id)) if r.source == "production"
            else TicketOut.of(r)
            for r in rows
        ]
    )  # fmt: skip


def _ns(moment: dt.datetime | None) -> int | None:
    if moment is None:
        return None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return min(max(int(aware.timestamp() * 1e6), 0) * 1000, 2**63 - 1)


@router.get(
    "/api/tickets/{ticket_id}/trace",
    response_model=TraceOut,
    responses={404: {"description": "No such ticket in this project"}},
)
def get_ticket_trace(
    project: Project,
    state: CurrentState,
    ticket_id: Annotated[str, Path(max_length=400)],
    source: Literal["production", "sandbox"] | None = None,
) -> TraceOut:
    """The trace of the ticket's latest attempt, as a tree (a sandbox ticket has one trace per trial).

    Registered before `/api/tickets/{ticket_id:path}`, which would otherwise take `T-1/trace` as an id."""
    detail = _query(lambda: state.store.get_ticket(project, ticket_id, source=source))
    if detail is None or not detail.attempts:
        raise HTTPException(404, f"no ticket {ticket_id!r} in this project")
    latest = max(detail.attempts, key=lambda a: a.start_time_ns)
    spans = [s for s in detail.spans if s.trace_id == latest.trace_id]
    return trace_tree(latest.trace_id, spans)


_TICKET_RESPONSES: dict[int | str, dict[str, object]] = {404: {"description": "No such ticket in this project"}}


@router.get("/api/ticket", response_model=TicketDetailOut, responses=_TICKET_RESPONSES)
def get_ticket_by_query(
    project: Project,
    state: CurrentState,
    ticket_id: Annotated[str, Query(alias="id", min_length=1, max_length=400, description="Any characters")],
    source: Literal["production", "sandbox"] | None = None,
) -> TicketDetailOut:
    """One ticket, its id in the query string: the form for any id (`a/b`, `../x`, `?`), percent-encoded."""
    return _ticket(state, project, ticket_id, source)


@router.get("/api/tickets/{ticket_id:path}", response_model=TicketDetailOut, responses=_TICKET_RESPONSES)
def get_ticket(
    project: Project,
    state: CurrentState,
    ticket_id: Annotated[str, Path(max_length=400)],
    source: Literal["production", "sandbox"] | None = None,
) -> TicketDetailOut:
    """One ticket by path. An id holding `/` works percent-encoded or not; `..` segments need `%2E%2E`, as
    HTTP clients resolve them before sending (or use `GET /api/ticket?id=`)."""
    return _ticket(state, project, ticket_id, source)


def _ticket(state: AppState, project: str, ticket_id: str, source: Source | None) -> TicketDetailOut:
    detail = _query(lambda: state.store.get_ticket(project, ticket_id, source=source))
    if detail is None:
        raise HTTPException(404, f"no ticket {ticket_id!r} in this project")
    out = TicketDetailOut.of(detail)
    out.usage = usage_of(detail.spans)
    if any(a.source == "production" for a in detail.attempts):
        verdict = _query(lambda: state.store.production_verdicts(project, [ticket_id])).get(ticket_id)
        out.production_verdict = None if verdict is None else ProductionVerdictOut.of(verdict)
    return out


@router.get(
    "/api/traces/{trace_id}",
    response_model=TraceOut,
    responses={404: {"description": "No span of this trace in this project"}},
)
def get_trace(
    project: Project,
    state: CurrentState,
    trace_id: Annotated[str, Path(min_length=32, max_length=32, pattern="^[0-9a-fA-F]{32}$")],
) -> TraceOut:
    """Every stored span of a trace (a ticket's or not: LLM-only apps send traces without tickets), as a tree."""
    spans = _query(lambda: state.store.get_trace(project, trace_id.lower()))
    if not spans:
        raise HTTPException(404, f"no span of trace {trace_id!r} in this project")
    return trace_tree(trace_id.lower(), spans)


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
        log.error("a query failed: %r", exc)  # the answer stays generic: it may reach anyone with a key
        raise HTTPException(503, "the store is unavailable: retry later", headers={"Retry-After": "5"}) from exc
