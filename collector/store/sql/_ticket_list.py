"""The SQL of the ticket list (`Store.ticket_page`): filters, sort, total and page in the database."""

from __future__ import annotations

import sqlalchemy as sa

from passhat.collector.store._rows import TicketRow
from passhat.collector.store._ticket_list import TicketFilter, TicketPage
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._rows import ticket_from_row
from passhat.collector.store.sql._ui_queries import search_tickets_query
from passhat.collector.store.sql._verdicts import replays_condition


def _contains(column: sa.ColumnElement[str | None], text: str) -> sa.ColumnElement[bool]:
    """`column` holds `text`, ignoring ASCII case, `%` and `_` taken literally (SQLite and PostgreSQL alike)."""
    return sa.func.lower(column).contains(text.lower(), autoescape=True)


def ticket_list_query(project: str, filters: TicketFilter) -> sa.Select[tuple[object, ...]]:
    """The tickets matching every filter, unsorted and unpaged."""
    t, v = schema.tickets, schema.production_verdicts
    query = search_tickets_query(
        project,
        ticket_id_prefix=filters.ticket_id_prefix,
        task_type=filters.task_type,
        source="production" if filters.graded else filters.source,
        status=filters.status,
        outcome=filters.outcome,
        since_ns=filters.since_ns,
        until_ns=filters.until_ns,
        limit=-1,
        offset=0,
        scan=bool(filters.search),
    )
    query = query.order_by(None).limit(None).offset(None)
    if filters.empty:
        return query.where(sa.false())
    if filters.domain is not None:
        query = query.where(t.c.domain == filters.domain)
    if filters.search:
        query = query.where(sa.or_(_contains(t.c.ticket_id, filters.search), _contains(t.c.intent, filters.search)))
    if filters.replays is not None:
        query = query.where(replays_condition(project, filters.replays))
    # The project's graded ticket ids, as a list the tickets are looked up from by their identity index: a
    # correlated EXISTS would visit every ticket of the project (0.4 s at a million trials, 80 ms this way).
    graded = sa.select(v.c.ticket_id).where(v.c.project == project)
    if filters.verdict == "ungraded":
        query = query.where(t.c.ticket_id.not_in(graded))
    elif filters.verdict is not None or filters.signature is not None:
        if filters.verdict is not None:
            graded = graded.where(v.c.passed == (filters.verdict == "passed"))
        if filters.signature is not None:
            graded = graded.where(v.c.signature == filters.signature)
        query = query.where(t.c.ticket_id.in_(graded))
    return query


def ticket_page(conn: sa.Connection, project: str, filters: TicketFilter, *, limit: int, offset: int) -> TicketPage:
    t = schema.tickets
    matching = ticket_list_query(project, filters)
    total = int(conn.execute(sa.select(sa.func.count()).select_from(matching.subquery())).scalar_one())
    newest = (t.c.start_ns.desc(), t.c.trace_id, t.c.ticket_id)
    if filters.sort == "task_type":
        ordered = matching.order_by(t.c.task_type, *newest)
    elif filters.sort == "verdict":
        return TicketPage(_by_verdict(conn, project, matching, total, limit=limit, offset=offset), total)
    else:
        ordered = matching.order_by(*newest)
    page = ordered.limit(max(limit, 0)).offset(max(offset, 0))
    return TicketPage([ticket_from_row(r) for r in conn.execute(page)], total)


def _by_verdict(
    conn: sa.Connection, project: str, matching: sa.Select[tuple[object, ...]], total: int, *, limit: int, offset: int
) -> list[TicketRow]:
    """A page of tickets with failed production verdicts first, then tickets without one, then passed ones, each
    group newest first. Read group by group (each by index, newest first) rather than sorting every ticket by a
    joined rank: a group before the page is only counted, and the groups after it are not read."""
    t, v = schema.tickets, schema.production_verdicts
    verdicts = sa.select(v.c.ticket_id).where(v.c.project == project)
    groups = (
        t.c.ticket_id.in_(verdicts.where(v.c.passed.is_(False))),
        t.c.ticket_id.not_in(verdicts),
        t.c.ticket_id.in_(verdicts.where(v.c.passed.is_(True))),
    )
    newest = (t.c.start_ns.desc(), t.c.trace_id, t.c.ticket_id)
    rows: list[TicketRow] = []
    skip, want, seen = max(offset, 0), max(limit, 0), 0
    for index, condition in enumerate(groups):
        if want == 0 or seen >= total:
            break
        group = matching.where(condition)
        last = index == len(groups) - 1
        size = (
            total - seen
            if last
            else int(conn.execute(sa.select(sa.func.count()).select_from(group.subquery())).scalar_one())
        )
        seen += size
        if skip >= size:
            skip -= size
            continue
        found = [ticket_from_row(r) for r in conn.execute(group.order_by(*newest).limit(want).offset(skip))]
        rows.extend(found)
        want -= len(found)
        skip = 0
    return rows
