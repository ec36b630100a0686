"""The SQL of the ticket list (`Store.ticket_page`): filters, sort, total and page in the database."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from passhat.collector.store._rows import TicketRow
from passhat.collector.store._ticket_list import TicketFilter, TicketPage
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._rows import ticket_from_row
from passhat.collector.store.sql._ui_queries import search_tickets_query
from passhat.collector.store.sql._verdicts import replays_condition


def _contains(column: sa.ColumnElement[str | None], text: str, *, like_folds_ascii: bool) -> sa.ColumnElement[bool]:
    """`column` holds `text`, ignoring ASCII case, `%` and `_` taken literally (SQLite and PostgreSQL alike).

    SQLite's LIKE already ignores ASCII case (and only ASCII case, as its lower() does): lower() on both sides
    costs more than the match itself when a search reads every ticket."""
    if like_folds_ascii:
        return column.contains(text, autoescape=True)
    return sa.func.lower(column).contains(text.lower(), autoescape=True)


def ticket_list_query(
    project: str, filters: TicketFilter, *, like_folds_ascii: bool = False, scan: bool | None = None
) -> sa.Select[tuple[object, ...]]:
    """The tickets matching every filter, unsorted and unpaged (`like_folds_ascii`: the database is SQLite;
    `scan`: read the project's tickets in table order, as `search_tickets_query` says, by default for a search)."""
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
        scan=bool(filters.search) if scan is None else scan,
    )
    query = query.order_by(None).limit(None).offset(None)
    if filters.empty:
        return query.where(sa.false())
    if filters.domain is not None:
        query = query.where(t.c.domain == filters.domain)
    if filters.search:
        query = query.where(
            sa.or_(
                _contains(t.c.ticket_id, filters.search, like_folds_ascii=like_folds_ascii),
                _contains(t.c.intent, filters.search, like_folds_ascii=like_folds_ascii),
            )
        )
    if filters.replays is not None:
        query = query.where(replays_condition(project, filters.replays))
    # The project's graded ticket ids, as a list the tickets are looked up from by their identity index: a
    # correlated EXISTS would visit every ticket of the project (0.4 s at a million trials, 80 ms this way).
    # The verdicts' own indexes by outcome and by signature (version 8) give the list without reading verdicts.
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


def _newest(columns: sa.ColumnCollection[str, sa.ColumnElement[object]]) -> list[sa.ColumnElement[object]]:
    return [columns.start_ns.desc(), columns.trace_id, columns.ticket_id]


def ticket_page(conn: sa.Connection, project: str, filters: TicketFilter, *, limit: int, offset: int) -> TicketPage:
    t = schema.tickets
    folds = conn.dialect.name == "sqlite"
    matching = ticket_list_query(project, filters, like_folds_ascii=folds)
    if filters.search:
        return _searched(conn, project, filters, matching, limit=limit, offset=offset)
    counted = matching
    if filters.verdict == "ungraded" and not _narrowed(filters):
        # Most of the project's tickets, each checked against the graded ids: read in table order (0.19 s at a
        # million trials), not looked up one by one from an index (0.36 s). The page stays newest first by index.
        counted = ticket_list_query(project, filters, like_folds_ascii=folds, scan=True)
    total = int(conn.execute(sa.select(sa.func.count()).select_from(counted.subquery())).scalar_one())
    if filters.sort == "task_type":
        ordered = matching.order_by(t.c.task_type, *_newest(t.c))
    elif filters.sort == "verdict" and filters.verdict is None:  # a verdict filter leaves one group: newest first
        return TicketPage(_by_verdict(conn, project, filters, matching, total, limit=limit, offset=offset), total)
    else:
        ordered = matching.order_by(*_newest(t.c))
    page = ordered.limit(max(limit, 0)).offset(max(offset, 0))
    return TicketPage([ticket_from_row(r) for r in conn.execute(page)], total)


def _narrowed(filters: TicketFilter) -> bool:
    """Whether a filter an index serves narrows the tickets (the rest are checked row by row)."""
    narrowing = (filters.task_type, filters.domain, filters.status, filters.outcome)
    return any(value is not None for value in narrowing) or filters.since_ns is not None or filters.until_ns is not None


def _searched(
    conn: sa.Connection,
    project: str,
    filters: TicketFilter,
    matching: sa.Select[tuple[object, ...]],
    *,
    limit: int,
    offset: int,
) -> TicketPage:
    """A searched list's total and page in one statement: a search reads every ticket of the project, so the
    matches' keys are read once (a CTE used twice, materialised by SQLite and PostgreSQL alike) and both counted
    and sorted from there, instead of a second scan for the page. The total comes on a row of its own joined to
    the page, so a page past the end still brings it."""
    t, v = schema.tickets, schema.production_verdicts.alias("verdict")  # not the filters' own subqueries' table
    keys: list[sa.ColumnElement[object]] = [t.c.id, t.c.start_ns, t.c.trace_id, t.c.ticket_id, t.c.task_type]
    if filters.sort == "verdict":
        # Failed verdicts first, then none (ungraded production tickets, sandbox trials), then passed.
        rank = sa.case((v.c.ticket_id.is_(None), 1), (v.c.passed == sa.false(), 0), else_=2)
        graded = sa.and_(v.c.project == project, v.c.ticket_id == t.c.ticket_id)
        matched = matching.with_only_columns(*keys, rank.label("rank")).select_from(t.outerjoin(v, graded))
    else:
        matched = matching.with_only_columns(*keys)
    found = matched.cte("matched")
    total = sa.select(sa.func.count().label("total")).select_from(found).subquery("total")
    page = (
        sa.select(found)
        .order_by(*_order(found.c, filters))
        .limit(max(limit, 0))
        .offset(max(offset, 0))
        .subquery("page")
    )
    statement = (
        sa.select(total.c.total, *t.c)
        .select_from(total.outerjoin(page, sa.true()).outerjoin(t, t.c.id == page.c.id))
        .order_by(*_order(page.c, filters))
    )
    rows = conn.execute(statement).all()
    count = int(rows[0].total) if rows else 0
    return TicketPage([ticket_from_row(r) for r in rows if r.id is not None], count)


def _order(
    columns: sa.ColumnCollection[str, sa.ColumnElement[object]], filters: TicketFilter
) -> Sequence[sa.ColumnElement[object]]:
    if filters.sort == "task_type":
        return [columns.task_type, *_newest(columns)]
    if filters.sort == "verdict":
        return [columns.rank, *_newest(columns)]
    return _newest(columns)


def _by_verdict(
    conn: sa.Connection,
    project: str,
    filters: TicketFilter,
    matching: sa.Select[tuple[object, ...]],
    total: int,
    *,
    limit: int,
    offset: int,
) -> list[TicketRow]:
    """A page of tickets with failed production verdicts first, then tickets without one, then passed ones, each
    group newest first. Read group by group (each by index, newest first) rather than sorting every ticket by a
    joined rank: a group is counted only when the page starts past its first ticket (to know how many of it to
    skip), and the groups after the page are not read. A signature filter keeps graded tickets only: the group
    without a verdict is known empty."""
    t, v = schema.tickets, schema.production_verdicts
    verdicts = sa.select(v.c.ticket_id).where(v.c.project == project)
    groups = [
        t.c.ticket_id.in_(verdicts.where(v.c.passed == sa.false())),
        t.c.ticket_id.not_in(verdicts),
        t.c.ticket_id.in_(verdicts.where(v.c.passed == sa.true())),
    ]
    if filters.signature is not None:
        del groups[1]
    rows: list[TicketRow] = []
    start, want = max(offset, 0), max(limit, 0)
    skip = start
    for index, condition in enumerate(groups):
        if want == 0 or start + len(rows) >= total:
            break
        group = matching.where(condition)
        if skip > 0 and index < len(groups) - 1:
            size = int(conn.execute(sa.select(sa.func.count()).select_from(group.subquery())).scalar_one())
            if skip >= size:
                skip -= size
                continue
        found = [ticket_from_row(r) for r in conn.execute(group.order_by(*_newest(t.c)).limit(want).offset(skip))]
        rows.extend(found)
        want -= len(found)
        skip = 0
    return rows
