"""The SQL store's ingest path: a group commit's rows built before the write lock, then inserted with
multi-row statements; de-duplication, tickets and daily traffic inside the transaction."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import sqlalchemy as sa

from passhat.collector.store._rows import NormalizedSpan, SpanBatch, TicketRow, WriteResult, ticket_rank
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._rows import (
    SPAN_COLUMNS,
    STATE_WRITE_COLUMNS,
    TOOL_CALL_COLUMNS,
    span_values,
    state_write_values,
    ticket_values,
    tool_call_values,
)

# The ticket statements, built once: SQLAlchemy caches their compiled form per dialect (a select() or
# update() built per group commit cost milliseconds each).
_STORED_TICKETS = sa.text(
    "SELECT s.trace_id, t.ticket_id, t.start_ns, t.day, t.task_type, t.source "
    "FROM spans s JOIN tickets t ON t.span_ref = s.id WHERE s.project = :project AND s.trace_id IN :trace_ids"
).bindparams(sa.bindparam("trace_ids", expanding=True))
_LAST_SPAN_ID = sa.text("SELECT max(id) FROM spans")
# PostgreSQL writers of one database take turns on this transaction lock while they give out span ids
# (SQLite's BEGIN IMMEDIATE already makes a writer the only one).
_PG_SPAN_ID_LOCK = sa.text("SELECT pg_advisory_xact_lock(7305019283424751)")
_DELETE_TICKETS = sa.text("DELETE FROM tickets WHERE project = :project AND trace_id = :trace_id")
_ADD_TRAFFIC = sa.text(
    "UPDATE traffic_daily SET tickets = tickets + :delta "
    "WHERE project = :project AND day = :day AND task_type = :task_type AND source = :source"
)
_NEW_TRAFFIC = sa.text(
    "INSERT INTO traffic_daily (project, day, task_type, source, tickets) "
    "VALUES (:project, :day, :task_type, :source, :delta)"
)
_ROWS_PER_STATEMENT = 128  # rows per multi-row INSERT: 16 columns x 128 = 2,048 bound values
_ID_CHUNK = 400  # ids per IN (...) list: well under every driver's bound-parameter limit

Rows = list[tuple[Any, ...]]
# A multi-row statement's parameters: its row count, its values, and the span ids to put in its first column
# (as offsets into the group; the span ids themselves are given out once the write lock is held).
Chunks = list[tuple[int, list[Any], list[int]]]
Slot = tuple[str, str]  # (project, trace id): one ticket per trace


def without_nul(values: list[Any]) -> list[Any]:
    """PostgreSQL's text cannot hold U+0000, which OTLP strings may: it becomes U+FFFD there (JSON text escapes
    it, so attribute values keep it). A list with no NUL is returned as it is."""
    if not any(type(v) is str and "\x00" in v for v in values):
        return values
    return [v.replace("\x00", "\ufffd") if type(v) is str else v for v in values]


def id_chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), _ID_CHUNK):
        yield items[start : start + _ID_CHUNK]


def chunked(rows: Rows, offsets: Sequence[int] = ()) -> Chunks:
    """Rows as multi-row statement parameters: chunks of 128 rows, then 64, 32, ... 1 (so at most a handful
    of statement texts per table, each prepared once and cached by the driver). With `offsets` (one per row),
    each row's first value is a placeholder for its span's id."""
    chunks: Chunks = []
    start, size = 0, _ROWS_PER_STATEMENT
    while start < len(rows):
        while size > len(rows) - start:
            size //= 2
        values = list(chain.from_iterable(rows[start : start + size]))
        chunks.append((size, values, list(offsets[start : start + size])))
        start += size
    return chunks


@dataclass(slots=True)
class Prepared:
    """A group commit's rows (and their statement parameters, and ticket rows) for the spans taken as new.

    Its rows may be built in another process (`built_rows`, in a replay's worker processes) and several such
    sets joined where the store is written (`joined`): only rows, offsets and one ticket per trace travel."""

    span_rows: Rows = field(default_factory=list)  # each row starts with a placeholder for the span's id
    tool_rows: Rows = field(default_factory=list)  # ... for its span's id
    write_rows: Rows = field(default_factory=list)  # ... for its span's id
    tool_offsets: list[int] = field(default_factory=list)  # each tool row's span, as an offset in span_rows
    write_offsets: list[int] = field(default_factory=list)
    candidates: dict[Slot, TicketRow] = field(default_factory=dict)  # each trace's lowest-ranked ticket span
    ticket_offsets: dict[Slot, int] = field(default_factory=dict)
    ticket_rows: dict[Slot, dict[str, Any]] = field(default_factory=dict)
    batch_ends: list[int] = field(default_factory=list)  # where each batch's spans end in span_rows
    # Set by `finish`, where the store is written:
    trace_ids: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # per project
    distinct: bool = True  # no (project, trace id, span id) twice in the group
    chunks: tuple[Chunks, Chunks, Chunks] = ([], [], [])  # spans, tool calls, state writes

    @classmethod
    def of(cls, batches: Sequence[SpanBatch]) -> Prepared:
        """Every span taken as new: the usual case, built before the write lock is taken."""
        prepared = cls()
        for batch in batches:
            prepared._build(batch.project, batch.spans)
        return prepared.finish()

    @classmethod
    def joined(cls, parts: Sequence[Prepared]) -> Prepared:
        """Several sets of rows (`built_rows`) as one group, each part one batch."""
        joined = cls()
        for part in parts:
            base = len(joined.span_rows)
            joined.span_rows.extend(part.span_rows)
            joined.tool_rows.extend(part.tool_rows)
            joined.tool_offsets.extend([base + offset for offset in part.tool_offsets])
            joined.write_rows.extend(part.write_rows)
            joined.write_offsets.extend([base + offset for offset in part.write_offsets])
            for slot, ticket in part.candidates.items():
                held = joined.candidates.get(slot)
                if held is None or ticket.rank < held.rank:
                    joined.candidates[slot] = ticket
                    joined.ticket_offsets[slot] = base + part.ticket_offsets[slot]
                    joined.ticket_rows[slot] = part.ticket_rows[slot]
            joined.batch_ends.append(len(joined.span_rows))
        return joined.finish()

    def fresh(self, stored: dict[str, set[tuple[str, str]]]) -> tuple[Prepared, list[WriteResult]]:
        """Re-delivered spans: the first copy of each span that is not in `stored` (per project), with its rows."""
        known = {project: set(ids) for project, ids in stored.items()}  # `stored` stays as it was
        kept: dict[int, int] = {}  # offset here -> offset in the fresh rows
        results: list[WriteResult] = []
        start = 0
        for end in self.batch_ends:
            for offset in range(start, end):
                row = self.span_rows[offset]
                seen = known.setdefault(row[1], set())
                ident = (row[2], row[3])
                if ident not in seen:
                    seen.add(ident)
                    kept[offset] = len(kept)
            taken = sum(1 for offset in range(start, end) if offset in kept)
            results.append(WriteResult(taken, end - start - taken))
            start = end
        fresh = Prepared(span_rows=[self.span_rows[offset] for offset in kept], batch_ends=[len(kept)])
        for rows, offsets, into, into_offsets in (
            (self.tool_rows, self.tool_offsets, fresh.tool_rows, fresh.tool_offsets),
            (self.write_rows, self.write_offsets, fresh.write_rows, fresh.write_offsets),
        ):
            for row, offset in zip(rows, offsets, strict=True):
                if offset in kept:
                    into.append(row)
                    into_offsets.append(kept[offset])
        # A trace's ticket span that is already stored takes no ticket row: a stored ticket of that trace ranks
        # no lower than it, and so no lower than any other span of the trace here (`_write_tickets`).
        for slot, ticket in self.candidates.items():
            offset = self.ticket_offsets[slot]
            if offset in kept:
                fresh.candidates[slot] = ticket
                fresh.ticket_offsets[slot] = kept[offset]
                fresh.ticket_rows[slot] = self.ticket_rows[slot]
        return fresh.finish(), results

    def _build(self, project: str, spans: Sequence[NormalizedSpan]) -> Prepared:
        resource_json: dict[int, str] = {}  # the spans of one request share their resource's dict
        offset = len(self.span_rows)
        for span in spans:
            self.span_rows.append(span_values(project, span, resource_json))
            if span.tool_call is not None:
                self.tool_rows.append(tool_call_values(project, span.tool_call))
                self.tool_offsets.append(offset)
            if span.state_writes:
                self.write_rows.extend([state_write_values(project, w) for w in span.state_writes])
                self.write_offsets.extend([offset] * len(span.state_writes))
            ticket = span.ticket
            if ticket is not None:
                slot = (project, ticket.trace_id)
                held = self.candidates.get(slot)
                if held is None or ticket.rank < held.rank:
                    self.candidates[slot] = ticket
                    self.ticket_offsets[slot] = offset
                    self.ticket_rows[slot] = ticket_values(project, ticket)
            offset += 1
        self.batch_ends.append(len(self.span_rows))
        return self

    def finish(self) -> Prepared:
        """The group's trace ids, whether its spans are distinct, and its statements' parameters."""
        idents = {(row[1], row[2], row[3]) for row in self.span_rows}  # (project, trace id, span id)
        self.distinct = len(idents) == len(self.span_rows)
        for project, trace_id, _ in idents:
            self.trace_ids[project].add(trace_id)
        self.chunks = (
            chunked(self.span_rows, range(len(self.span_rows))),
            chunked(self.tool_rows, self.tool_offsets),
            chunked(self.write_rows, self.write_offsets),
        )
        return self


def built_rows(project: str, spans: Sequence[NormalizedSpan]) -> Prepared:
    """A project's spans as the SQL store's rows, built where the spans were made (`SqlStore.row_builder`):
    no statement parameters, which `Prepared.joined` makes where the store is written."""
    return Prepared()._build(project, spans)


class RowInserter:
    """INSERTs rows (tuples in column order) with multi-row statements bound straight through the driver:
    building SQLAlchemy parameters per row costs more than the database's insert itself.

    One statement per row (executemany) was much slower in the collector: Python's sqlite3 releases the GIL
    around every row's step, and the writer then waited for other threads to hand it back, row after row.
    """

    def __init__(self) -> None:
        self._sql: dict[tuple[str, int], str] = {}

    def insert(
        self, conn: sa.Connection, table: sa.Table, columns: Sequence[str], chunks: Chunks, first_id: int = 0
    ) -> None:
        """Insert `chunks`; a chunk's rows with span offsets get `first_id + offset` as their first value."""
        if not chunks:
            return
        width = len(columns)
        postgres = conn.dialect.name == "postgresql"
        marks = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(conn.dialect.paramstyle)
        cursor = None if marks is None else conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            for size, values, offsets in chunks:
                if offsets:
                    values[0::width] = [first_id + offset for offset in offsets]
                if postgres:
                    values = without_nul(values)
                if cursor is None:  # an unusual driver: SQLAlchemy binds
                    rows = [values[at : at + width] for at in range(0, size * width, width)]
                    conn.execute(sa.insert(table), [dict(zip(columns, row, strict=True)) for row in rows])
                else:
                    cursor.execute(self._statement(conn, table, columns, marks or "?", size), values)
        finally:
            if cursor is not None:
                cursor.close()

    def _statement(self, conn: sa.Connection, table: sa.Table, columns: Sequence[str], marks: str, rows: int) -> str:
        sql = self._sql.get((table.name, rows))
        if sql is None:
            quote = conn.dialect.identifier_preparer.quote
            one = f"({', '.join([marks] * len(columns))})"
            sql = (
                f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
                f"VALUES {', '.join([one] * rows)}"
            )
            self._sql[(table.name, rows)] = sql
        return sql


def rows_built_for(project: str, built: Sequence[Any]) -> list[Prepared]:
    """What `built_rows` made for ``project``, checked: a part of another kind or project is refused."""
    for part in built:
        if not isinstance(part, Prepared):
            raise TypeError(f"write_built takes what the store's row_builder made, not a {type(part).__name__}")
        if any(row[1] != project for row in part.span_rows):
            raise ValueError(f"write_built: rows built for another project than {project!r}")
    return list(built)


def write_group(conn: sa.Connection, inserter: RowInserter, prepared: Prepared) -> list[WriteResult]:
    """One group commit's writes, in the caller's transaction: duplicates are found with one indexed query
    per project; rows go in with multi-row statements per table."""
    if conn.dialect.name == "postgresql":
        conn.execute(_PG_SPAN_ID_LOCK)
    stored = {
        project: stored_span_ids(conn, project, sorted(trace_ids)) for project, trace_ids in prepared.trace_ids.items()
    }
    if prepared.distinct and not any(stored.values()):
        ends = prepared.batch_ends
        results = [WriteResult(end - start, 0) for start, end in zip([0, *ends], ends, strict=False)]
    else:
        prepared, results = prepared.fresh(stored)
    # Span ids are given out in commit order (the write lock is held), so the span table and the indexes keyed
    # by span id are appended to.
    first_id = int(conn.execute(_LAST_SPAN_ID).scalar() or 0) + 1
    span_chunks, tool_chunks, write_chunks = prepared.chunks
    inserter.insert(conn, schema.spans, SPAN_COLUMNS, span_chunks, first_id)
    inserter.insert(conn, schema.tool_calls, TOOL_CALL_COLUMNS, tool_chunks, first_id)
    inserter.insert(conn, schema.state_writes, STATE_WRITE_COLUMNS, write_chunks, first_id)
    if prepared.candidates:
        # Tickets derive from stored spans: only traces with spans stored before this group can have one.
        stored_traces = {project: {trace_id for trace_id, _ in ids} for project, ids in stored.items()}
        _write_tickets(conn, inserter, prepared, stored_traces, first_id)
    return results


def stored_span_ids(conn: sa.Connection, project: str, trace_ids: Sequence[str]) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    table = schema.spans
    for chunk in id_chunks(trace_ids):
        rows = conn.execute(
            sa.select(table.c.trace_id, table.c.span_id).where(table.c.project == project, table.c.trace_id.in_(chunk))
        )
        found.update((r.trace_id, r.span_id) for r in rows)
    return found


def _write_tickets(
    conn: sa.Connection, inserter: RowInserter, prepared: Prepared, stored_traces: dict[str, set[str]], first_id: int
) -> None:
    """Insert each trace's ticket (unless a stored ticket of that trace ranks before it: `TicketRow.rank`) and
    count it in the daily traffic."""
    by_project: dict[str, set[str]] = defaultdict(set)
    for project, trace_id in prepared.candidates:
        if trace_id in stored_traces.get(project, ()):
            by_project[project].add(trace_id)
    stored: dict[Slot, list[Any]] = defaultdict(list)
    for project, trace_ids in by_project.items():
        for chunk in id_chunks(sorted(trace_ids)):
            rows = conn.execute(_STORED_TICKETS, {"project": project, "trace_ids": list(chunk)})
            for r in rows:
                stored[(project, r.trace_id)].append(r)
    traffic: dict[tuple[str, str, str, str], int] = defaultdict(int)
    inserts: list[dict[str, Any]] = []
    for slot, ticket in prepared.candidates.items():
        project, trace_id = slot
        held = stored.get(slot)
        if held:
            if min(ticket_rank(r.ticket_id, trace_id, r.start_ns) for r in held) <= ticket.rank:
                continue
            # An outer agent span (or the passhat ticket) arrived after an inner one: it is the ticket.
            conn.execute(_DELETE_TICKETS, {"project": project, "trace_id": trace_id})
            for old in held:
                traffic[(project, old.day, old.task_type, old.source)] -= 1
        row = prepared.ticket_rows[slot]
        row["span_ref"] = first_id + prepared.ticket_offsets[slot]
        inserts.append(row)
        traffic[(project, row["day"], ticket.task_type, ticket.source)] += 1
    if inserts:
        inserter.insert(conn, schema.tickets, list(inserts[0]), chunked([tuple(row.values()) for row in inserts]))
    for (project, day, task_type, source), delta in sorted(traffic.items()):
        if delta == 0:
            continue
        values = {"project": project, "day": day, "task_type": task_type, "source": source, "delta": delta}
        if conn.execute(_ADD_TRAFFIC, values).rowcount == 0:
            conn.execute(_NEW_TRAFFIC, values)
