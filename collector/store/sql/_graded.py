"""The SqlStore's queries for grading production tickets: their verdicts, their replay tallies, and tickets read
many at a time (a mixin of `SqlStore`; the SQL itself is in `_verdicts`)."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa

from passhat.collector.store._rows import (
    NormalizedSpan,
    ProductionVerdict,
    ReplaysFilter,
    Source,
    StatusCode,
    TicketDetail,
    TicketRow,
    VerdictFilter,
)
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._ingest import id_chunks
from passhat.collector.store.sql._rows import ticket_from_row
from passhat.collector.store.sql._verdicts import (
    list_verdicts_query,
    put_verdicts,
    tallies_of,
    tickets_by_verdict_query,
    verdict_from_row,
    verdicts_of,
)


class VerdictQueries:
    """What `SqlStore` answers about graded production tickets (it provides the engine, writer and span reader)."""

    _engine: sa.Engine

    def _writing(self) -> contextlib.AbstractContextManager[sa.Connection]:
        raise NotImplementedError

    def _spans_of(self, conn: sa.Connection, project: str, trace_ids: Sequence[str]) -> list[NormalizedSpan]:
        raise NotImplementedError

    def get_tickets(
        self, project: str, ticket_ids: Sequence[str], *, source: Source | None = None
    ) -> dict[str, TicketDetail]:
        t = schema.tickets
        wanted = list(dict.fromkeys(ticket_ids))
        attempts: dict[str, list[TicketRow]] = defaultdict(list)
        with self._engine.connect() as conn:
            for chunk in id_chunks(wanted):
                query = sa.select(t).where(t.c.project == project, t.c.ticket_id.in_(chunk))
                if source is not None:
                    query = query.where(t.c.source == source)
                for r in conn.execute(query):
                    attempts[r.ticket_id].append(ticket_from_row(r))
            traces = sorted({a.trace_id for rows in attempts.values() for a in rows})
            spans = self._spans_of(conn, project, traces) if traces else []
        by_trace: dict[str, list[NormalizedSpan]] = defaultdict(list)
        for span in spans:
            by_trace[span.trace_id].append(span)
        return {
            ticket_id: self._detail(ticket_id, attempts[ticket_id], by_trace)
            for ticket_id in wanted
            if attempts.get(ticket_id)
        }

    @staticmethod
    def _detail(ticket_id: str, found: list[TicketRow], by_trace: dict[str, list[NormalizedSpan]]) -> TicketDetail:
        attempts = sorted(found, key=lambda a: (a.start_time_ns, a.trace_id))
        spans = sorted(
            (s for trace_id in dict.fromkeys(a.trace_id for a in attempts) for s in by_trace.get(trace_id, [])),
            key=lambda sp: (sp.start_time_ns, sp.span_id),
        )
        calls = sorted(
            (s.tool_call for s in spans if s.tool_call is not None), key=lambda c: (c.start_time_ns, c.span_id)
        )
        rows = sorted((w for s in spans for w in s.state_writes), key=lambda w: (w.time_ns, w.span_id, w.seq))
        return TicketDetail(
            ticket_id=ticket_id,
            attempts=attempts,
            spans=spans,
            tool_calls=calls,
            state_writes=[w for w in rows if w.op != "read"],
            state_reads=[w for w in rows if w.op == "read"],
        )

    def put_production_verdicts(self, project: str, verdicts: Sequence[ProductionVerdict]) -> None:
        if not verdicts:
            return
        with self._writing() as conn:
            put_verdicts(conn, project, verdicts)

    def production_verdicts(self, project: str, ticket_ids: Sequence[str]) -> dict[str, ProductionVerdict]:
        with self._engine.connect() as conn:
            return verdicts_of(conn, project, ticket_ids)

    def list_production_verdicts(
        self,
        project: str,
        *,
        task_type: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        limit: int = 10_000,
        offset: int = 0,
    ) -> list[ProductionVerdict]:
        query = list_verdicts_query(
            project, task_type=task_type, since_ns=since_ns, until_ns=until_ns, limit=limit, offset=offset
        )
        with self._engine.connect() as conn:
            return [verdict_from_row(r) for r in conn.execute(query)]

    def search_tickets_by_verdict(
        self,
        project: str,
        verdict: VerdictFilter | None,
        *,
        signature: str | None = None,
        replays: ReplaysFilter | None = None,
        ticket_id_prefix: str | None = None,
        status: StatusCode | None = None,
        outcome: str | None = None,
        task_type: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[TicketRow]:
        query = tickets_by_verdict_query(
            project,
            verdict,
            signature=signature,
            replays=replays,
            ticket_id_prefix=ticket_id_prefix,
            status=status,
            outcome=outcome,
            task_type=task_type,
            since_ns=since_ns,
            until_ns=until_ns,
            limit=limit,
            offset=offset,
        )
        with self._engine.connect() as conn:
            return [ticket_from_row(r) for r in conn.execute(query)]

    def trial_tallies(self, project: str, ticket_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        with self._engine.connect() as conn:
            return tallies_of(conn, project, ticket_ids)
