"""`SqlStore`: the Store on SQLAlchemy 2 Core. SQLite (WAL) by default; any SQLAlchemy URL (Postgres)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import pathlib
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

try:
    import fcntl
except ImportError:  # not on Windows: writers there rely on SQLite's busy handler alone
    fcntl = None  # type: ignore[assignment]

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DataError, IntegrityError, SQLAlchemyError

from passhat.collector.store._codec import from_us, to_us
from passhat.collector.store._interface import Store, StoreDataError, StoreError
from passhat.collector.store._rows import (
    AlertEvent,
    ApiKey,
    NormalizedSpan,
    Project,
    Source,
    SpanBatch,
    StateWriteRow,
    StatusCode,
    TicketDetail,
    TicketRow,
    ToolCallRow,
    TrafficDay,
    TrialRow,
    WriteResult,
)
from passhat.collector.store._ticket_list import TicketFilter, TicketPage
from passhat.collector.store._tool_twins import merge_tool_twins
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._connect import OneMemoryDatabase, postgres_parameters, sqlite_begin, sqlite_pragmas
from passhat.collector.store.sql._graded import VerdictQueries
from passhat.collector.store.sql._ingest import (
    Prepared,
    RowInserter,
    built_rows,
    id_chunks,
    rows_built_for,
    write_group,
)
from passhat.collector.store.sql._rows import (
    HASH_SHIFT,
    alert_from_row,
    alert_values,
    span_from_row,
    state_write_from_row,
    ticket_from_row,
    tool_call_from_row,
    trial_from_row,
)
from passhat.collector.store.sql._runs import RunQueries
from passhat.collector.store.sql._ticket_list import ticket_page
from passhat.collector.store.sql._ui_queries import search_tickets_query, ticket_trials_query


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _int64(value: int) -> int:
    """A bound clamped into BIGINT's range, which keeps the comparison's meaning."""
    return min(max(value, -(2**63)), 2**63 - 1)


class SqlStore(RunQueries, VerdictQueries, Store):
    """A Store in any SQLAlchemy database; writes are serialised in-process (one writer, group commits)."""

    def __init__(self, url: str) -> None:
        try:
            parsed = make_url(url)
        except ArgumentError as exc:
            raise StoreError(f"not a database URL: {url!r} ({exc})") from exc
        self.url = parsed
        self._is_sqlite = parsed.get_backend_name() == "sqlite"
        # The SQLite file's path (None for another database, or SQLite in memory).
        sqlite_file = parsed.database if self._is_sqlite and parsed.database not in (None, "", ":memory:") else None
        if sqlite_file is not None:
            file = pathlib.Path(sqlite_file).expanduser()
            if file.is_dir():
                raise StoreError(
                    f"the SQLite store {parsed.render_as_string()} names the folder {file}, not a file: name a file "
                    f"in it, e.g. sqlite:///{file / 'passhat.db'}"
                )
            folder = file.parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file in the way, no permission: say which folder, not a traceback
                raise StoreError(
                    f"cannot create the folder {folder} of the SQLite store {parsed.render_as_string()}: "
                    f"{exc.strerror or exc} (check --data-dir, $PASSHAT_DATA_DIR or the store URL)"
                ) from exc
        # In memory: one database for every thread (`OneMemoryDatabase`).
        memory = {"poolclass": OneMemoryDatabase, "connect_args": {"check_same_thread": False}}
        try:
            self._engine = sa.create_engine(parsed, **(memory if self._is_sqlite and sqlite_file is None else {}))
        except (ArgumentError, ImportError) as exc:
            raise StoreError(f"cannot open {parsed.render_as_string()}: {exc}") from exc
        if self._is_sqlite:
            event.listen(self._engine, "connect", sqlite_pragmas)
            event.listen(self._engine, "begin", sqlite_begin)
        if self._engine.dialect.name == "postgresql":
            event.listen(self._engine, "before_cursor_execute", postgres_parameters, retval=True)
        # One writer at a time in this process; an in-memory store's writers take the turn its threads share.
        self._write_lock: contextlib.AbstractContextManager[Any] = (
            self._engine.pool.turn if isinstance(self._engine.pool, OneMemoryDatabase) else threading.Lock()
        )
        self._lock_path: str | None = None
        if sqlite_file is not None and fcntl is not None:
            self._lock_path = str(pathlib.Path(sqlite_file).expanduser()) + "-writers.lock"
        self._driver_error: type[Exception] = getattr(self._engine.dialect.dbapi, "Error", SQLAlchemyError)
        self._driver_data_error: type[Exception] = getattr(self._engine.dialect.dbapi, "DataError", DataError)
        self._driver_integrity_error: type[Exception] = getattr(
            self._engine.dialect.dbapi, "IntegrityError", IntegrityError
        )
        self._inserter = RowInserter()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sa.Connection]:
        """A write transaction: one writer per process, and the database's write lock taken first."""
        with self._write_lock, self._file_lock(), self._engine.connect() as conn:
            conn.execution_options(passhat_write=True)
            with conn.begin():
                yield conn

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """Writers of one SQLite file queue on a lock file (flock) before BEGIN IMMEDIATE: SQLite's own busy
        handler polls with sleeps of up to 100 ms, so two collector processes committing in turn left the
        file idle between their commits. flock wakes the next writer as soon as the lock is free."""
        if self._lock_path is None:
            yield
            return
        try:
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o666)  # the umask applies, as to -wal files
        except OSError:  # a read-only directory, another user's lock file: SQLite's busy handler still serialises
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    # --- lifecycle ---------------------------------------------------------------------------------
    def migrate(self) -> int:
        with self._writing() as conn:
            schema.metadata.create_all(conn)
            current = self._version(conn)
            if current > len(schema.MIGRATIONS):
                raise StoreError(
                    f"the database schema is version {current}, newer than this passhat knows "
                    f"({len(schema.MIGRATIONS)}): upgrade passhat"
                )
            for version in range(current + 1, len(schema.MIGRATIONS) + 1):
                schema.MIGRATIONS[version - 1](conn)
                conn.execute(sa.insert(schema.schema_versions).values(version=version, applied_at_us=to_us(_utcnow())))
            return len(schema.MIGRATIONS)

    def schema_version(self) -> int:
        with self._engine.connect() as conn:
            if not sa.inspect(conn).has_table(schema.schema_versions.name):
                return 0
            return self._version(conn)

    @staticmethod
    def _version(conn: sa.Connection) -> int:
        return int(conn.execute(sa.select(sa.func.max(schema.schema_versions.c.version))).scalar() or 0)

    def close(self) -> None:
        self._engine.dispose()

    # --- projects and keys -------------------------------------------------------------------------
    def ensure_project(self, name: str) -> Project:
        with self._writing() as conn:
            row = conn.execute(sa.select(schema.projects).where(schema.projects.c.name == name)).first()
            if row is None:
                created = _utcnow()
                conn.execute(sa.insert(schema.projects).values(name=name, created_at_us=to_us(created)))
                return Project(name, from_us(to_us(created)))
            return Project(row.name, from_us(row.created_at_us))

    def get_project(self, name: str) -> Project | None:
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(schema.projects).where(schema.projects.c.name == name)).first()
        return None if row is None else Project(row.name, from_us(row.created_at_us))

    def list_projects(self) -> list[Project]:
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(schema.projects).order_by(schema.projects.c.name)).all()
        return [Project(r.name, from_us(r.created_at_us)) for r in rows]

    def add_api_key(self, key: ApiKey) -> None:
        try:
            with self._writing() as conn:
                conn.execute(
                    sa.insert(schema.api_keys).values(
                        prefix=key.prefix,
                        project=key.project,
                        key_hash=key.key_hash,
                        label=key.label,
                        created_at_us=to_us(key.created_at),
                        revoked_at_us=None if key.revoked_at is None else to_us(key.revoked_at),
                    )
                )
        except IntegrityError as exc:
            raise StoreError(
                f"cannot add key {key.prefix}: its prefix or hash is taken, or project {key.project!r} does not exist"
            ) from exc

    @staticmethod
    def _key(row: Any) -> ApiKey:
        return ApiKey(
            prefix=row.prefix,
            project=row.project,
            key_hash=row.key_hash,
            created_at=from_us(row.created_at_us),
            label=row.label,
            revoked_at=None if row.revoked_at_us is None else from_us(row.revoked_at_us),
        )

    def find_api_key(self, key_hash: str) -> ApiKey | None:
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(schema.api_keys).where(schema.api_keys.c.key_hash == key_hash)).first()
        return None if row is None else self._key(row)

    def list_api_keys(self, project: str | None = None) -> list[ApiKey]:
        query = sa.select(schema.api_keys).order_by(schema.api_keys.c.created_at_us, schema.api_keys.c.prefix)
        if project is not None:
            query = query.where(schema.api_keys.c.project == project)
        with self._engine.connect() as conn:
            return [self._key(r) for r in conn.execute(query)]

    def revoke_api_key(self, prefix: str, *, at: dt.datetime | None = None) -> bool:
        with self._writing() as conn:
            result = conn.execute(
                sa.update(schema.api_keys)
                .where(schema.api_keys.c.prefix == prefix, schema.api_keys.c.revoked_at_us.is_(None))
                .values(revoked_at_us=to_us(at or _utcnow()))
            )
        return result.rowcount > 0

    # --- spans -------------------------------------------------------------------------------------
    def write_batches(self, batches: Sequence[SpanBatch]) -> list[WriteResult]:
        if not batches:
            return []
        # Rows are built before the write lock is taken, as if every span were new (the usual case): other
        # writers of the file wait only for the inserts and the commit.
        return self._write_prepared(lambda: Prepared.of(batches))

    def row_builder(self) -> Callable[[str, Sequence[NormalizedSpan]], Any]:
        return built_rows

    def write_built(self, project: str, built: Sequence[Any]) -> WriteResult:
        parts = rows_built_for(project, built)
        results = self._write_prepared(lambda: Prepared.joined(parts))
        return WriteResult(sum(r.accepted for r in results), sum(r.duplicates for r in results))

    def _write_prepared(self, prepare: Callable[[], Prepared]) -> list[WriteResult]:
        try:
            prepared = prepare()
            with self._writing() as conn:
                return write_group(conn, self._inserter, prepared)
        # A value the database cannot hold: the driver's DataError (PostgreSQL's out-of-range integer), or
        # the binding's own refusal before it reaches the database (SQLite's OverflowError, an encoder's
        # TypeError or ValueError). The rows are at fault, not the database.
        except (DataError, self._driver_data_error, OverflowError, TypeError, ValueError) as exc:
            raise StoreDataError(f"a value could not be stored, nothing was stored: {exc}") from exc
        except (SQLAlchemyError, self._driver_error) as exc:  # rows are inserted through the driver itself
            raise StoreError(f"write failed, nothing was stored: {exc}") from exc

    def count_spans(self, project: str) -> int:
        with self._engine.connect() as conn:
            query = sa.select(sa.func.count()).select_from(schema.spans).where(schema.spans.c.project == project)
            return int(conn.execute(query).scalar() or 0)

    def get_trace(self, project: str, trace_id: str) -> list[NormalizedSpan]:
        with self._engine.connect() as conn:
            return self._spans_of(conn, project, [trace_id])

    def _spans_of(self, conn: sa.Connection, project: str, trace_ids: Sequence[str]) -> list[NormalizedSpan]:
        s, t, c, w = schema.spans, schema.tickets, schema.tool_calls, schema.state_writes
        span_rows: list[Any] = []
        # Tickets, tool calls and state writes are found through their span's row id (`span_ref`).
        tickets: dict[int, TicketRow] = {}
        calls: dict[int, ToolCallRow] = {}
        writes: dict[int, list[StateWriteRow]] = defaultdict(list)
        for chunk in id_chunks(trace_ids):
            of_traces = sa.and_(s.c.project == project, s.c.trace_id.in_(chunk))
            span_rows.extend(conn.execute(sa.select(s).where(of_traces)))
            for r in conn.execute(sa.select(t).join(s, t.c.span_ref == s.c.id).where(of_traces)):
                tickets[r.span_ref] = ticket_from_row(r)
            for r in conn.execute(sa.select(c).join(s, c.c.span_ref == s.c.id).where(of_traces)):
                calls[r.span_ref] = tool_call_from_row(r)
            query = sa.select(w).join(s, w.c.span_ref == s.c.id).where(of_traces).order_by(w.c.span_ref, w.c.seq)
            for r in conn.execute(query):
                writes[r.span_ref].append(state_write_from_row(r))
        spans = [
            span_from_row(r, ticket=tickets.get(r.id), tool_call=calls.get(r.id), state_writes=writes.get(r.id, []))
            for r in span_rows
        ]
        merge_tool_twins(spans)  # a tool call traced by its framework and by @passhat.tool is one call
        return sorted(spans, key=lambda sp: (sp.start_time_ns, sp.span_id))

    # --- tickets and traffic -----------------------------------------------------------------------
    def list_tickets(
        self,
        project: str,
        *,
        task_type: str | None = None,
        source: Source | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        max_hash: int | None = None,
        outcome: str | None = None,
        replay_run_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[TicketRow]:
        t = schema.tickets
        query = sa.select(t).where(t.c.project == project)
        if task_type is not None:
            query = query.where(t.c.task_type == task_type)
        if source is not None:
            query = query.where(t.c.source == source)
        if replay_run_id is not None:
            query = query.where(t.c.replay_run_id == replay_run_id)
        if since_ns is not None:
            query = query.where(t.c.start_ns >= _int64(since_ns))
        if until_ns is not None:
            query = query.where(t.c.start_ns < _int64(until_ns))
        if outcome is not None:
            query = query.where(t.c.outcome == outcome)
        if max_hash is not None and max_hash <= 2**64 - 1:  # a larger bound keeps every ticket
            query = query.where(t.c.ticket_hash < _int64(max_hash - HASH_SHIFT))
        query = query.order_by(t.c.start_ns.desc(), t.c.trace_id, t.c.ticket_id)
        query = query.limit(max(limit, 0)).offset(max(offset, 0))
        with self._engine.connect() as conn:
            return [ticket_from_row(r) for r in conn.execute(query)]

    def get_ticket(self, project: str, ticket_id: str, *, source: Source | None = None) -> TicketDetail | None:
        t = schema.tickets
        query = sa.select(t).where(t.c.project == project, t.c.ticket_id == ticket_id)
        if source is not None:
            query = query.where(t.c.source == source)
        with self._engine.connect() as conn:
            # Sorted here, not by ORDER BY: SQLite then picks (project, start) to avoid a sort and scans every
            # ticket of the project (290 ms on a million spans) instead of the (project, ticket id) index.
            found = [ticket_from_row(r) for r in conn.execute(query)]
            attempts = sorted(found, key=lambda a: (a.start_time_ns, a.trace_id))
            if not attempts:
                return None
            spans = self._spans_of(conn, project, sorted({a.trace_id for a in attempts}))
        calls = sorted(
            (s.tool_call for s in spans if s.tool_call is not None),
            key=lambda c: (c.start_time_ns, c.span_id),
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

    def traffic(
        self, project: str, *, days: int, source: Source = "production", today: dt.date | None = None
    ) -> list[TrafficDay]:
        last = today or _utcnow().date()
        first = last - dt.timedelta(days=max(days, 1) - 1)
        t = schema.traffic_daily
        query = (
            sa.select(t)
            .where(
                t.c.project == project,
                t.c.source == source,
                t.c.day >= first.isoformat(),
                t.c.day <= last.isoformat(),
                t.c.tickets > 0,
            )
            .order_by(t.c.day, t.c.task_type)
        )
        with self._engine.connect() as conn:
            return [
                TrafficDay(dt.date.fromisoformat(r.day), r.task_type, r.source, int(r.tickets))
                for r in conn.execute(query)
            ]

    # --- alerts ---------------------------------------------------------------------------------------------
    def add_alert_event(self, project: str, event: AlertEvent) -> None:
        try:
            with self._writing() as conn:
                conn.execute(sa.insert(schema.alert_events).values(alert_values(project, event)))
        except IntegrityError as exc:
            raise StoreError(f"alert {event.alert_id!r} already recorded in project {project!r}") from exc

    def list_alert_events(
        self, project: str, *, since: dt.datetime | None = None, rule: str | None = None, limit: int = 100
    ) -> list[AlertEvent]:
        a = schema.alert_events
        query = sa.select(a).where(a.c.project == project)
        if since is not None:
            query = query.where(a.c.fired_at_us >= to_us(since))
        if rule is not None:
            query = query.where(a.c.rule == rule)
        query = query.order_by(a.c.fired_at_us.desc(), a.c.alert_id).limit(max(limit, 0))
        with self._engine.connect() as conn:
            return [alert_from_row(row) for row in conn.execute(query)]

    # --- queries of the web UI ---------------------------------------------------------------------
    def search_tickets(
        self,
        project: str,
        *,
        ticket_id_prefix: str | None = None,
        task_type: str | None = None,
        source: Source | None = None,
        status: StatusCode | None = None,
        outcome: str | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[TicketRow]:
        query = search_tickets_query(
            project,
            ticket_id_prefix=ticket_id_prefix,
            task_type=task_type,
            source=source,
            status=status,
            outcome=outcome,
            since_ns=since_ns,
            until_ns=until_ns,
            limit=limit,
            offset=offset,
        )
        with self._engine.connect() as conn:
            return [ticket_from_row(r) for r in conn.execute(query)]

    def ticket_page(self, project: str, filters: TicketFilter, *, limit: int = 50, offset: int = 0) -> TicketPage:
        with self._engine.connect() as conn:
            return ticket_page(conn, project, filters, limit=limit, offset=offset)

    def list_ticket_trials(self, project: str, ticket_id: str) -> list[TrialRow]:
        with self._engine.connect() as conn:
            return [trial_from_row(r) for r in conn.execute(ticket_trials_query(project, ticket_id))]
