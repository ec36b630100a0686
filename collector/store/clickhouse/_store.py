"""`ClickHouseStore`: the Store on ClickHouse, embedded (`chdb:///path`) or a server (`http(s)://host:port`).

Only clickhouse-connect's `Client` API is used (query / command / insert), so the same code runs on the
in-process engine and on a server or cluster. See docs/clickhouse.md for the schema and the trade-offs.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from passhat.collector.store._codec import from_us_opt
from passhat.collector.store._interface import Store, StoreError
from passhat.collector.store._rows import (
    AlertEvent,
    ApiKey,
    NormalizedSpan,
    ProductionVerdict,
    Project,
    ReplaysFilter,
    Source,
    SpanBatch,
    StatusCode,
    TicketDetail,
    TicketRow,
    TrafficDay,
    TrialRow,
    VerdictFilter,
    WriteResult,
)
from passhat.collector.store._ticket_list import TicketFilter, TicketPage
from passhat.collector.store.clickhouse._client import ClickHouseConnection, ClickHouseTarget, parse_url
from passhat.collector.store.clickhouse._rows import (
    ALERT_COLUMNS,
    ALERT_SELECT,
    API_KEY_COLUMNS,
    API_KEY_SELECT,
    TICKET_COLUMNS,
    TRIAL_SELECT,
    alert_from_row,
    alert_values,
    api_key_from_row,
    api_key_values,
    ticket_from_row,
    to_utc,
    trial_from_row,
)
from passhat.collector.store.clickhouse._run_figures import RunFigures
from passhat.collector.store.clickhouse._runs import RunQueries
from passhat.collector.store.clickhouse._schema import (
    LATEST_VERSION,
    MIGRATIONS,
    MIGRATIONS_TABLE,
    TTL_COLUMNS,
    Retention,
    migrations_table_ddl,
)
from passhat.collector.store.clickhouse._spans import SpanTables
from passhat.collector.store.clickhouse._ticket_list import TicketList
from passhat.collector.store.clickhouse._verdicts import VerdictTable


class ClickHouseStore(RunQueries, Store):
    """The collector's store on ClickHouse.

    `url`: `chdb:///abs/data/dir` (embedded; one data dir per process) or `http(s)://host:port[/database]`.
    `database` (or `?database=` in the URL) selects the database, created on `migrate()` (default `passhat`);
    `retention` sets the table TTLs (or `?spans_ttl_days=30&tickets_ttl_days=0...`, 0 = forever).
    """

    def __init__(self, url: str, *, database: str | None = None, retention: Retention | None = None) -> None:
        try:
            target = parse_url(url, database=database, retention=retention)
        except ValueError as exc:
            raise StoreError(str(exc)) from exc
        self.target: ClickHouseTarget = target
        self._db = target.database
        self._conn = ClickHouseConnection(target)
        self._spans = SpanTables(self._conn)
        self._verdicts = VerdictTable(self._conn, self._db)
        self._figures = RunFigures(self._conn, self._db)
        self._ticket_list = TicketList(self._conn, self._db)
        self._closed = False

    def __repr__(self) -> str:
        return f"ClickHouseStore({self.target.display})"

    # --- lifecycle -----------------------------------------------------------------------------------------
    def migrate(self) -> int:
        with self._conn.lock:
            self._conn.command(f"CREATE DATABASE IF NOT EXISTS {self._db}")
            self._conn.command(migrations_table_ddl(self._db))
            current = self.schema_version()
            if current > LATEST_VERSION:
                raise StoreError(
                    f"the ClickHouse database {self._db!r} has schema version {current}, newer than this "
                    f"passhat supports ({LATEST_VERSION}): upgrade passhat"
                )
            for migration in MIGRATIONS:
                if migration.version <= current:
                    continue
                for statement in migration.statements(self._db, self.target.retention, self.target.durable):
                    self._conn.command(statement)
                self._conn.insert(
                    MIGRATIONS_TABLE, [[migration.version, migration.description]], ("version", "description")
                )
            self._apply_retention()
            return LATEST_VERSION

    def _apply_retention(self) -> None:
        """Bring each table's TTL to the configured retention (only the tables whose TTL differs)."""
        engines = dict(
            self._conn.query("SELECT name, engine_full FROM system.tables WHERE database = %(db)s", {"db": self._db})
        )
        for table, column, field_name in TTL_COLUMNS:
            days = getattr(self.target.retention, field_name)
            current = engines.get(table, "")
            has_ttl = re.search(r"\bTTL\b", current) is not None
            if days and f"toIntervalDay({days})" not in current:
                # materialize_ttl_after_modify=0: no rewrite of old parts now; merges apply the new TTL.
                self._conn.command(
                    f"ALTER TABLE {self._db}.{table} MODIFY TTL {column} + INTERVAL {days} DAY",
                    settings={"materialize_ttl_after_modify": 0},
                )
            elif not days and has_ttl:
                self._conn.command(f"ALTER TABLE {self._db}.{table} REMOVE TTL")

    def schema_version(self) -> int:
        exists = self._conn.query(
            "SELECT count() FROM system.tables WHERE database = %(db)s AND name = %(t)s",
            {"db": self._db, "t": MIGRATIONS_TABLE},
        )
        if not exists[0][0]:
            return 0
        rows = self._conn.query(f"SELECT max(version) FROM {self._db}.{MIGRATIONS_TABLE}")
        return int(rows[0][0] or 0)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._conn.close()

    def ping(self) -> bool:
        self._conn.query("SELECT 1")
        return True

    # --- projects and keys ---------------------------------------------------------------------------------
    def ensure_project(self, name: str) -> Project:
        with self._conn.lock:
            project = self.get_project(name)
            if project is None:
                now = dt.datetime.now(dt.UTC)
                self._conn.insert("projects", [[name, now]], ("name", "created_at"))
                project = self.get_project(name)
                assert project is not None
            return project

    def get_project(self, name: str) -> Project | None:
        projects = self._projects("WHERE name = %(n)s", {"n": name})
        return projects[0] if projects else None

    def list_projects(self) -> list[Project]:
        return self._projects("", {})

    def _projects(self, where: str, params: dict[str, Any]) -> list[Project]:
        # min(created_at): two processes creating a project at once both insert; the first one counts.
        rows = self._conn.query(
            f"SELECT name, min(toUnixTimestamp64Micro(created_at)) FROM {self._db}.projects {where}"
            " GROUP BY name ORDER BY name",
            params,
        )
        return [Project(r[0], from_us_opt(r[1]) or dt.datetime.now(dt.UTC)) for r in rows]

    def add_api_key(self, key: ApiKey) -> None:
        with self._conn.lock:
            if self.get_project(key.project) is None:
                raise StoreError(f"no project {key.project!r}: create it before adding keys")
            clash = self._conn.query(
                f"SELECT count() FROM {self._db}.api_keys FINAL WHERE prefix = %(p)s OR key_hash = %(h)s",
                {"p": key.prefix, "h": key.key_hash},
            )
            if clash[0][0]:
                raise StoreError(f"an API key with prefix {key.prefix!r} or the same hash is already stored")
            self._conn.insert("api_keys", [api_key_values(key, 1)], API_KEY_COLUMNS)

    def _keys(self, where: str, params: dict[str, Any]) -> list[tuple[ApiKey, int]]:
        rows = self._conn.query(
            f"SELECT {API_KEY_SELECT}, version FROM {self._db}.api_keys FINAL {where} ORDER BY created_at, prefix",
            params,
        )
        return [(api_key_from_row(r[:-1]), int(r[-1])) for r in rows]

    def find_api_key(self, key_hash: str) -> ApiKey | None:
        keys = self._keys("WHERE key_hash = %(h)s", {"h": key_hash})
        return keys[0][0] if keys else None

    def list_api_keys(self, project: str | None = None) -> list[ApiKey]:
        if project is None:
            return [k for k, _ in self._keys("", {})]
        return [k for k, _ in self._keys("WHERE project = %(p)s", {"p": project})]

    def revoke_api_key(self, prefix: str, *, at: dt.datetime | None = None) -> bool:
        with self._conn.lock:
            keys = self._keys("WHERE prefix = %(p)s AND revoked_at IS NULL", {"p": prefix})
            if not keys:
                return False
            key, version = keys[0]
            revoked = ApiKey(
                key.prefix,
                key.project,
                key.key_hash,
                key.created_at,
                key.label,
                at or dt.datetime.now(dt.UTC),
            )
            self._conn.insert("api_keys", [api_key_values(revoked, version + 1)], API_KEY_COLUMNS)
            return True

    # --- spans and tickets ---------------------------------------------------------------------------------
    def write_batches(self, batches: Sequence[SpanBatch]) -> list[WriteResult]:
        return self._spans.write(batches)

    def count_spans(self, project: str) -> int:
        return self._spans.count(project)

    def get_trace(self, project: str, trace_id: str) -> list[NormalizedSpan]:
        return self._spans.trace(project, trace_id)

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
        return self._spans.list_tickets(
            project,
            task_type=task_type,
            source=source,
            since_ns=since_ns,
            until_ns=until_ns,
            max_hash=max_hash,
            replay_run_id=replay_run_id,
            limit=limit,
            offset=offset,
            outcome=outcome,
        )

    def get_ticket(self, project: str, ticket_id: str, *, source: Source | None = None) -> TicketDetail | None:
        return self._spans.ticket(project, ticket_id, source)

    def traffic(
        self, project: str, *, days: int, source: Source = "production", today: dt.date | None = None
    ) -> list[TrafficDay]:
        return self._spans.traffic(project, days=days, source=source, today=today)

    # --- alerts --------------------------------------------------------------------------------------------
    def add_alert_event(self, project: str, event: AlertEvent) -> None:
        with self._conn.lock:
            stored = self._conn.query(
                f"SELECT count() FROM {self._db}.alert_events WHERE project = %(p)s AND alert_id = %(a)s",
                {"p": project, "a": event.alert_id},
            )
            if stored[0][0]:
                raise StoreError(f"alert {event.alert_id!r} already recorded in project {project!r}")
            self._conn.insert("alert_events", [alert_values(project, event)], ("project", *ALERT_COLUMNS))

    def list_alert_events(
        self, project: str, *, since: dt.datetime | None = None, rule: str | None = None, limit: int = 100
    ) -> list[AlertEvent]:
        where = "project = %(p)s"
        params: dict[str, Any] = {"p": project, "n": max(0, limit)}
        if since is not None:
            where += " AND toUnixTimestamp64Micro(fired_at) >= %(since)s"
            params["since"] = int((to_utc(since) - _EPOCH).total_seconds() * 1_000_000)
        if rule is not None:
            where += " AND rule = %(rule)s"
            params["rule"] = rule
        rows = self._conn.query(
            f"SELECT {ALERT_SELECT} FROM {self._db}.alert_events FINAL WHERE {where}"
            " ORDER BY fired_at DESC, alert_id DESC LIMIT %(n)s",
            params,
        )
        return [alert_from_row(r) for r in rows]

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
        where = ["project = %(p)s", "sign = 1"]
        params: dict[str, Any] = {"p": project, "limit": max(0, limit), "offset": max(0, offset)}
        if ticket_id_prefix:
            where.append("startsWith(ticket_id, %(prefix)s)")
            params["prefix"] = ticket_id_prefix
        for column, op, value in (
            ("task_type", "=", task_type),
            ("source", "=", source),
            ("status", "=", status),
            ("outcome", "=", outcome),
            ("start_time_ns", ">=", since_ns),
            ("start_time_ns", "<", until_ns),
        ):
            if value is not None:
                name = f"v{len(params)}"
                where.append(f"{column} {op} %({name})s")
                params[name] = value
        rows = self._conn.query(
            f"SELECT {', '.join(TICKET_COLUMNS)} FROM {self._db}.tickets FINAL WHERE {' AND '.join(where)}"
            " ORDER BY start_time_ns DESC, ticket_id DESC, trace_id DESC LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )
        return [ticket_from_row(r) for r in rows]

    def ticket_page(self, project: str, filters: TicketFilter, *, limit: int = 50, offset: int = 0) -> TicketPage:
        return self._ticket_list.page(project, filters, limit=limit, offset=offset)

    def list_ticket_trials(self, project: str, ticket_id: str) -> list[TrialRow]:
        rows = self._conn.query(
            f"SELECT {TRIAL_SELECT} FROM {self._db}.trials FINAL WHERE project = %(p)s AND ticket_id = %(t)s"
            " ORDER BY started_at, run_id, attempt",
            {"p": project, "t": ticket_id},
        )
        return [trial_from_row(r) for r in rows]

    # --- production verdicts -----------------------------------------------------------------------
    def put_production_verdicts(self, project: str, verdicts: Sequence[ProductionVerdict]) -> None:
        self._verdicts.put(project, verdicts)

    def production_verdicts(self, project: str, ticket_ids: Sequence[str]) -> dict[str, ProductionVerdict]:
        return self._verdicts.of(project, ticket_ids)

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
        return self._verdicts.listed(
            project, task_type=task_type, since_ns=since_ns, until_ns=until_ns, limit=limit, offset=offset
        )

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
        return self._verdicts.tickets(
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

    def trial_tallies(self, project: str, ticket_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        return self._verdicts.tallies(project, ticket_ids)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
