"""The SQL of production verdicts: storing them, reading them back, and filtering tickets by them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from passhat.collector.store._codec import dumps, from_us, to_us
from passhat.collector.store._rows import ProductionVerdict, ReplaysFilter, StatusCode, VerdictFilter
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._rows import loads
from passhat.collector.store.sql._tally import counted_by_agent
from passhat.collector.store.sql._ui_queries import search_tickets_query

_CHUNK = 500  # ticket ids per IN (...): well under SQLite's bound-parameter limit


def verdict_values(project: str, verdict: ProductionVerdict) -> dict[str, Any]:
    return {
        "project": project,
        "ticket_id": verdict.ticket_id,
        "trace_id": verdict.trace_id,
        "task_type": verdict.task_type,
        "start_ns": verdict.start_time_ns,
        "passed": verdict.passed,
        "graded_at_us": to_us(verdict.graded_at),
        "domain": verdict.domain,
        "signature": verdict.signature,
        "evidence": verdict.evidence,
        "verdict": None if verdict.verdict is None else dumps(verdict.verdict),
        "graded_by": verdict.graded_by,
    }


def verdict_from_row(row: Any) -> ProductionVerdict:
    return ProductionVerdict(
        ticket_id=row.ticket_id,
        trace_id=row.trace_id,
        task_type=row.task_type,
        start_time_ns=int(row.start_ns),
        passed=bool(row.passed),
        graded_at=from_us(row.graded_at_us),
        domain=row.domain,
        signature=row.signature,
        evidence=row.evidence,
        verdict=None if row.verdict is None else loads(row.verdict),
        graded_by=row.graded_by,
    )


def put_verdicts(conn: sa.Connection, project: str, verdicts: Sequence[ProductionVerdict]) -> None:
    """Replace the verdicts of these tickets (the last of a ticket id given wins)."""
    latest = {v.ticket_id: v for v in verdicts}
    v = schema.production_verdicts
    ids = sorted(latest)
    for start in range(0, len(ids), _CHUNK):
        conn.execute(sa.delete(v).where(v.c.project == project, v.c.ticket_id.in_(ids[start : start + _CHUNK])))
    if latest:
        conn.execute(sa.insert(v), [verdict_values(project, latest[i]) for i in ids])


def verdicts_of(conn: sa.Connection, project: str, ticket_ids: Sequence[str]) -> dict[str, ProductionVerdict]:
    v = schema.production_verdicts
    wanted = sorted(set(ticket_ids))
    found: dict[str, ProductionVerdict] = {}
    for start in range(0, len(wanted), _CHUNK):
        query = sa.select(v).where(v.c.project == project, v.c.ticket_id.in_(wanted[start : start + _CHUNK]))
        found.update((row.ticket_id, verdict_from_row(row)) for row in conn.execute(query))
    return found


def list_verdicts_query(
    project: str, *, task_type: str | None, since_ns: int | None, until_ns: int | None, limit: int, offset: int
) -> sa.Select[tuple[object, ...]]:
    v = schema.production_verdicts
    query = sa.select(v).where(v.c.project == project)
    if task_type is not None:
        query = query.where(v.c.task_type == task_type)
    if since_ns is not None:
        query = query.where(v.c.start_ns >= min(since_ns, 2**63 - 1))
    if until_ns is not None:
        query = query.where(v.c.start_ns < min(until_ns, 2**63 - 1))
    query = query.order_by(v.c.start_ns.desc(), v.c.ticket_id)
    return query.limit(max(limit, 0)).offset(max(offset, 0))


def tickets_by_verdict_query(
    project: str,
    verdict: VerdictFilter | None,
    *,
    signature: str | None,
    replays: ReplaysFilter | None,
    ticket_id_prefix: str | None,
    status: StatusCode | None,
    outcome: str | None,
    task_type: str | None,
    since_ns: int | None,
    until_ns: int | None,
    limit: int,
    offset: int,
) -> sa.Select[tuple[object, ...]]:
    """`search_tickets`' SELECT of production tickets, narrowed to those whose verdict matches."""
    t, v = schema.tickets, schema.production_verdicts
    query = search_tickets_query(
        project,
        ticket_id_prefix=ticket_id_prefix,
        task_type=task_type,
        source="production",
        status=status,
        outcome=outcome,
        since_ns=since_ns,
        until_ns=until_ns,
        limit=limit,
        offset=offset,
    )
    if replays is not None:
        query = query.where(replays_condition(project, replays))
    graded = sa.select(v.c.ticket_id).where(v.c.project == project, v.c.ticket_id == t.c.ticket_id)
    if verdict == "ungraded":
        return query.where(~graded.exists())
    if verdict is not None:
        graded = graded.where(v.c.passed == (verdict == "passed"))
    if signature is not None:
        graded = graded.where(v.c.signature == signature)
    if verdict is None and signature is None:
        return query
    return query.where(graded.exists())


def _usable(trials: sa.Table) -> sa.ColumnElement[bool]:
    return counted_by_agent()  # the one harness rule (`reliability.is_harness_failure`)


def replays_condition(project: str, replays: ReplaysFilter) -> sa.ColumnElement[bool]:
    t, r = schema.tickets, schema.trials
    of_ticket = sa.and_(r.c.project == project, r.c.ticket_id == t.c.ticket_id, _usable(r))
    if replays == "not_replayed":
        return ~sa.select(r.c.ticket_id).where(of_ticket).exists()
    failed = sa.select(r.c.ticket_id).where(of_ticket, r.c.passed.is_(False)).exists()
    if replays == "some_failed":
        return failed
    return sa.and_(sa.select(r.c.ticket_id).where(of_ticket).exists(), ~failed)


def tallies_of(conn: sa.Connection, project: str, ticket_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    r = schema.trials
    wanted = sorted(set(ticket_ids))
    found: dict[str, tuple[int, int]] = {}
    passed = sa.func.sum(sa.case((r.c.passed.is_(True), 1), else_=0))
    for start in range(0, len(wanted), _CHUNK):
        query = (
            sa.select(r.c.ticket_id, passed, sa.func.count())
            .where(r.c.project == project, r.c.ticket_id.in_(wanted[start : start + _CHUNK]), _usable(r))
            .group_by(r.c.ticket_id)
        )
        found.update((row[0], (int(row[1] or 0), int(row[2]))) for row in conn.execute(query))
    return found
