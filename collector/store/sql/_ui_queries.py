"""The SQL of the web UI's queries (`Store.search_tickets`, `Store.list_ticket_trials`)."""

from __future__ import annotations

import sqlalchemy as sa

from passhat.collector.store._rows import Source, StatusCode
from passhat.collector.store.sql import _schema as schema


def _int64(value: int) -> int:
    return max(min(value, 2**63 - 1), -(2**63))


def search_tickets_query(
    project: str,
    *,
    ticket_id_prefix: str | None,
    task_type: str | None,
    source: Source | None,
    status: StatusCode | None,
    outcome: str | None,
    since_ns: int | None,
    until_ns: int | None,
    limit: int,
    offset: int,
    scan: bool = False,
) -> sa.Select[tuple[object, ...]]:
    """The SELECT of `search_tickets`, newest first.

    ``scan``: a filter will read every row of the project anyway (a text search): the project is matched in a
    form no index serves, so SQLite reads the table in order (0.1 s for 111,216 tickets) instead of looking each
    row up from an index (0.5 s)."""
    t = schema.tickets
    query = sa.select(t).where((sa.func.coalesce(t.c.project, "") if scan else t.c.project) == project)
    if ticket_id_prefix:
        # substr, not LIKE: SQLite's LIKE ignores ASCII case, and a prefix is taken literally.
        query = query.where(sa.func.substr(t.c.ticket_id, 1, len(ticket_id_prefix)) == ticket_id_prefix)
    for column, value in ((t.c.task_type, task_type), (t.c.source, source), (t.c.status, status)):
        if value is not None:
            query = query.where(column == value)
    if outcome is not None:
        query = query.where(t.c.outcome == outcome)
    if since_ns is not None:
        query = query.where(t.c.start_ns >= _int64(since_ns))
    if until_ns is not None:
        query = query.where(t.c.start_ns < _int64(until_ns))
    query = query.order_by(t.c.start_ns.desc(), t.c.trace_id, t.c.ticket_id)
    return query.limit(max(limit, 0)).offset(max(offset, 0))


def ticket_trials_query(project: str, ticket_id: str) -> sa.Select[tuple[object, ...]]:
    """The SELECT of `list_ticket_trials`."""
    t = schema.trials
    return (
        sa.select(t)
        .where(t.c.project == project, t.c.ticket_id == ticket_id)
        .order_by(t.c.started_at_us, t.c.run_id, t.c.attempt)
    )
