"""Spans, tickets, tool calls, state writes and traffic in ClickHouse: the write path and its reads.

De-duplication is done at insert time, not left to merges: under the connection lock, one query finds which
(project, trace_id, span_id) of the call are stored already (an anti-join through the primary key's
`trace_hash`), and only new spans and their derived rows are inserted. The tables' Replacing/Collapsing
engines (read with FINAL) are the backstop for what a lock cannot cover: a process killed between the inserts
of one call, or two collectors writing the same spans. Derived rows go in before the span rows, so a span that
reads as stored always has its derived rows, and a call cut short is completed by the client's retry.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from typing import Any

from passhat import ticket_hash
from passhat.collector.store._interface import StoreDataError
from passhat.collector.store._rows import (
    NormalizedSpan,
    Source,
    SpanBatch,
    StateWriteRow,
    TicketDetail,
    TicketRow,
    ToolCallRow,
    TrafficDay,
    WriteResult,
)
from passhat.collector.store._tool_twins import merge_tool_twins
from passhat.collector.store.clickhouse._client import ClickHouseConnection
from passhat.collector.store.clickhouse._rows import (
    SPAN_COLUMNS,
    SPAN_READ_COLUMNS,
    STATE_WRITE_COLUMNS,
    STATE_WRITE_INSERT_COLUMNS,
    TICKET_COLUMNS,
    TICKET_INSERT_COLUMNS,
    TOOL_CALL_COLUMNS,
    TOOL_CALL_INSERT_COLUMNS,
    day_of,
    span_from_row,
    span_values,
    state_write_from_row,
    state_write_values,
    ticket_from_row,
    ticket_values,
    tool_call_from_row,
    tool_call_values,
)

SpanKey = tuple[str, str, str]  # (project, trace_id, span_id)
#: Traces per lookup query: 2000 ids and hashes are ~120 kB of SQL, under ClickHouse's default
#: max_query_size (256 kB) with room for long ids.
LOOKUP_CHUNK = 2000
TraceKey = tuple[str, str]  # (project, trace_id): one ticket per trace


class SpanTables:
    """The span-derived tables of one database, over one connection."""

    def __init__(self, conn: ClickHouseConnection) -> None:
        self._conn = conn
        self._db = conn.target.database

    # --- writes --------------------------------------------------------------------------------------------
    def write(self, batches: Sequence[SpanBatch]) -> list[WriteResult]:
        with self._conn.lock:
            seen: set[SpanKey] = set()
            candidates: list[list[NormalizedSpan]] = []
            for batch in batches:
                mine: list[NormalizedSpan] = []
                for span in batch.spans:
                    key = (batch.project, span.trace_id, span.span_id)
                    if key not in seen:  # a repeat within the call counts as a duplicate below
                        seen.add(key)
                        mine.append(span)
                candidates.append(mine)
            stored = self._stored_span_keys(seen)
            fresh: list[tuple[str, NormalizedSpan]] = []
            results = []
            for i, batch in enumerate(batches):
                new = [s for s in candidates[i] if (batch.project, s.trace_id, s.span_id) not in stored]
                fresh.extend((batch.project, s) for s in new)
                results.append(WriteResult(accepted=len(new), duplicates=len(batch.spans) - len(new)))
            if fresh:
                self._insert_fresh(fresh)
            return results

    def _stored_span_keys(self, keys: set[SpanKey]) -> set[SpanKey]:
        """The keys among `keys` already stored: queried by trace (a call holds ~9 spans per trace, and the
        literal's size, not ClickHouse, is what costs), through the `trace_hash` of the primary key, in chunks
        that keep each query under ClickHouse's max_query_size."""
        stored: set[SpanKey] = set()
        traces = sorted({k[1] for k in keys})
        projects = sorted({k[0] for k in keys})
        for chunk in _chunks(traces):
            rows = self._conn.query(
                f"SELECT project, trace_id, span_id FROM {self._db}.spans"
                " WHERE project IN %(projects)s AND trace_hash IN %(hashes)s AND trace_id IN %(traces)s",
                {"projects": projects, "hashes": sorted({ticket_hash(t) for t in chunk}), "traces": chunk},
            )
            stored.update((r[0], r[1], r[2]) for r in rows)
        return stored & keys

    def _insert_fresh(self, fresh: list[tuple[str, NormalizedSpan]]) -> None:
        # Every row is built before the first insert: a value no row builder can encode fails the call before
        # anything is stored.
        tools = [tool_call_values(p, s.tool_call) for p, s in fresh if s.tool_call is not None]
        states = [state_write_values(p, w) for p, s in fresh for w in s.state_writes]
        tickets = self._ticket_rows(fresh)
        spans = [span_values(p, s) for p, s in fresh]
        self._conn.insert("tool_calls", tools, TOOL_CALL_INSERT_COLUMNS)
        self._conn.insert("state_writes", states, STATE_WRITE_INSERT_COLUMNS)
        self._conn.insert("tickets", tickets, TICKET_INSERT_COLUMNS)
        # The span rows last: their presence is what makes a re-delivered span a duplicate.
        try:
            self._conn.insert("spans", spans, SPAN_COLUMNS)
        except StoreDataError:
            # The call's spans are refused for a value in them, for good (the collector then stores the other
            # spans of the request without the one at fault): its ticket rows, already in, are cancelled, so no
            # ticket (nor its traffic) stands for a span that is not stored. Its tool-call and state rows stay
            # unreachable: they are read through their span.
            self._conn.insert("tickets", [[*row[:-2], -row[-2], row[-1]] for row in tickets], TICKET_INSERT_COLUMNS)
            raise

    def _ticket_rows(self, fresh: list[tuple[str, NormalizedSpan]]) -> list[list[Any]]:
        """+1 rows for new tickets, and a -1 cancel row for each stored ticket a lower-ranked span displaces
        (one ticket per trace: `TicketRow.rank`)."""
        wanted: dict[TraceKey, TicketRow] = {}
        for project, span in fresh:
            ticket = span.ticket
            if ticket is None:
                continue
            key = (project, ticket.trace_id)
            held = wanted.get(key)
            if held is None or ticket.rank < held.rank:
                wanted[key] = ticket
        if not wanted:
            return []
        existing: dict[TraceKey, list[tuple[TicketRow, int]]] = {}
        projects = sorted({k[0] for k in wanted})
        # By trace id (its bloom filter): a trace's stored ticket may bear another ticket id, so another hash.
        for chunk in _chunks(sorted({k[1] for k in wanted})):
            for row in self._conn.query(
                f"SELECT project, {', '.join(TICKET_COLUMNS)}, version FROM {self._db}.tickets FINAL"
                " WHERE project IN %(projects)s AND trace_id IN %(traces)s AND sign = 1",
                {"projects": projects, "traces": chunk},
            ):
                stored = ticket_from_row(row[1:-1])
                key = (row[0], stored.trace_id)
                if key in wanted:
                    existing.setdefault(key, []).append((stored, int(row[-1])))
        rows: list[list[Any]] = []
        version = time.time_ns()
        for key, ticket in wanted.items():
            project = key[0]
            prior = existing.get(key)
            if not prior:
                rows.append([project, day_of(ticket.start_time_ns), *ticket_values(ticket), 1, version])
                continue
            if any(old.span_id == ticket.span_id or old.rank <= ticket.rank for old, _ in prior):
                continue  # already stored (a retried call), or a stored span ranks first
            newest = version
            for old, old_version in prior:
                rows.append([project, day_of(old.start_time_ns), *ticket_values(old), -1, old_version])
                newest = max(newest, old_version + 1)
            rows.append([project, day_of(ticket.start_time_ns), *ticket_values(ticket), 1, newest])
        return rows

    # --- reads ---------------------------------------------------------------------------------------------
    def count(self, project: str) -> int:
        rows = self._conn.query(f"SELECT count() FROM {self._db}.spans FINAL WHERE project = %(p)s", {"p": project})
        return int(rows[0][0])

    def trace(self, project: str, trace_id: str) -> list[NormalizedSpan]:
        return self._spans(project, [trace_id])

    def _spans(self, project: str, trace_ids: Sequence[str]) -> list[NormalizedSpan]:
        """The spans of these traces by start time, each with its derived rows."""
        if not trace_ids:
            return []
        params = {
            "p": project,
            "traces": list(trace_ids),
            "hashes": sorted({ticket_hash(t) for t in trace_ids}),
        }
        rows = self._conn.query(
            f"SELECT {', '.join(SPAN_READ_COLUMNS)} FROM {self._db}.spans FINAL"
            " WHERE project = %(p)s AND trace_hash IN %(hashes)s AND trace_id IN %(traces)s"
            " ORDER BY start_time_ns, span_id",
            params,
        )
        if not rows:
            return []
        tickets = {t.span_id: t for t in self._tickets_of_traces(project, trace_ids)}
        tools = {c.span_id: c for c in self._tool_calls(project, trace_ids)}
        writes: dict[str, list[StateWriteRow]] = {}
        for write in self._state_rows(project, trace_ids):
            writes.setdefault(write.span_id, []).append(write)
        spans = []
        for row in rows:
            span_id = row[1]
            spans.append(
                span_from_row(
                    row,
                    ticket=tickets.get(span_id),
                    tool_call=tools.get(span_id),
                    state_writes=sorted(writes.get(span_id, []), key=lambda w: w.seq),
                )
            )
        merge_tool_twins(spans)  # a tool call traced by its framework and by @passhat.tool is one call
        return spans

    def _tickets_of_traces(self, project: str, trace_ids: Sequence[str]) -> list[TicketRow]:
        rows = self._conn.query(
            f"SELECT {', '.join(TICKET_COLUMNS)} FROM {self._db}.tickets FINAL"
            " WHERE project = %(p)s AND trace_id IN %(traces)s AND sign = 1",
            {"p": project, "traces": list(trace_ids)},
        )
        return [ticket_from_row(r) for r in rows]

    def _tool_calls(self, project: str, trace_ids: Sequence[str]) -> list[ToolCallRow]:
        rows = self._conn.query(
            f"SELECT {', '.join(TOOL_CALL_COLUMNS)} FROM {self._db}.tool_calls FINAL"
            " WHERE project = %(p)s AND trace_id IN %(traces)s ORDER BY start_time_ns, span_id",
            {"p": project, "traces": list(trace_ids)},
        )
        return [tool_call_from_row(r) for r in rows]

    def _state_rows(self, project: str, trace_ids: Sequence[str]) -> list[StateWriteRow]:
        rows = self._conn.query(
            f"SELECT {', '.join(STATE_WRITE_COLUMNS)} FROM {self._db}.state_writes FINAL"
            " WHERE project = %(p)s AND trace_id IN %(traces)s ORDER BY time_ns, span_id, seq",
            {"p": project, "traces": list(trace_ids)},
        )
        return [state_write_from_row(r) for r in rows]

    def list_tickets(
        self,
        project: str,
        *,
        task_type: str | None,
        source: Source | None,
        since_ns: int | None,
        until_ns: int | None,
        max_hash: int | None,
        limit: int,
        offset: int,
        outcome: str | None = None,
        replay_run_id: str | None = None,
    ) -> list[TicketRow]:
        where = ["project = %(p)s", "sign = 1"]
        params: dict[str, Any] = {"p": project, "limit": max(0, limit), "offset": max(0, offset)}
        for column, op, value in (
            ("task_type", "=", task_type),
            ("source", "=", source),
            ("start_time_ns", ">=", since_ns),
            ("start_time_ns", "<", until_ns),
            ("ticket_hash", "<", max_hash),
            ("outcome", "=", outcome),
            ("replay_run_id", "=", replay_run_id),
        ):
            if value is None or (column == "ticket_hash" and isinstance(value, int) and value > 2**64 - 1):
                continue  # no filter (every stored hash is below a max_hash past 2**64 - 1)
            name = f"v{len(params)}"
            where.append(f"{column} {op} %({name})s")
            params[name] = value
        rows = self._conn.query(
            f"SELECT {', '.join(TICKET_COLUMNS)} FROM {self._db}.tickets FINAL WHERE {' AND '.join(where)}"
            " ORDER BY start_time_ns DESC, ticket_id DESC, trace_id DESC LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )
        return [ticket_from_row(r) for r in rows]

    def ticket(self, project: str, ticket_id: str, source: Source | None) -> TicketDetail | None:
        params: dict[str, Any] = {"p": project, "t": ticket_id}
        where = "project = %(p)s AND ticket_id = %(t)s AND sign = 1"
        if source is not None:
            where += " AND source = %(s)s"
            params["s"] = source
        rows = self._conn.query(
            f"SELECT {', '.join(TICKET_COLUMNS)} FROM {self._db}.tickets FINAL WHERE {where}"
            " ORDER BY start_time_ns, trace_id",
            params,
        )
        if not rows:
            return None
        attempts = [ticket_from_row(r) for r in rows]
        traces = list(dict.fromkeys(a.trace_id for a in attempts))
        spans = self._spans(project, traces)
        tool_calls = sorted(
            (s.tool_call for s in spans if s.tool_call is not None),
            key=lambda c: (c.start_time_ns, c.span_id),
        )
        changes = sorted((w for s in spans for w in s.state_writes), key=lambda w: (w.time_ns, w.span_id, w.seq))
        return TicketDetail(
            ticket_id=ticket_id,
            attempts=attempts,
            spans=spans,
            tool_calls=tool_calls,
            state_writes=[w for w in changes if w.op != "read"],
            state_reads=[w for w in changes if w.op == "read"],
        )

    def traffic(self, project: str, *, days: int, source: Source, today: dt.date | None) -> list[TrafficDay]:
        if days < 1:
            return []
        last = today or dt.datetime.now(dt.UTC).date()
        first = last - dt.timedelta(days=days - 1)
        rows = self._conn.query(
            f"SELECT day, task_type, sum(tickets) AS n FROM {self._db}.traffic_daily"
            " WHERE project = %(p)s AND source = %(s)s AND day >= %(first)s AND day <= %(last)s"
            " GROUP BY day, task_type HAVING n > 0 ORDER BY day, task_type",
            {"p": project, "s": source, "first": first, "last": last},
        )
        return [TrafficDay(day=r[0], task_type=r[1], source=source, tickets=int(r[2])) for r in rows]


def _chunks(items: list[str]) -> list[list[str]]:
    return [items[i : i + LOOKUP_CHUNK] for i in range(0, len(items), LOOKUP_CHUNK)]
