"""The ClickHouse schema: tables, the traffic view, retention (TTL) and the versioned migrations.

Why the engines are what they are:
- `spans` is the wide, append-only table: one row per span, typed columns for the attributes passhat
  queries (ticket, task type, tool, model, tokens) beside the full attribute map as JSON. It is keyed by
  project, UTC day and `trace_hash` (`passhat.ticket_hash` of the trace id) and `SAMPLE BY trace_hash`, so
  `SAMPLE 0.1` keeps whole traces. ReplacingMergeTree on (project, day, trace_hash, trace_id, span_id) is the
  backstop of the store's insert-time de-duplication: a span inserted twice (a crash between inserts, two
  writers) still reads once with FINAL.
- `tickets` is a VersionedCollapsingMergeTree: when an earlier-starting agent span of the same trace and
  ticket id arrives later, the store inserts a cancel row (sign -1) for the old ticket row and the new row
  (+1). The `traffic_daily` SummingMergeTree is fed by a materialised view that sums `sign`, so daily
  traffic stays right without ever updating a row.
- Mutable administrative rows (api keys, replay runs) are ReplacingMergeTree with a `version`; a change is a
  new row with a higher version, read with FINAL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

#: The table holding applied schema versions.
MIGRATIONS_TABLE = "passhat_schema_migrations"

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def check_database_name(name: str) -> str:
    """Return `name` if it can be used unquoted as a ClickHouse database name, else raise ValueError."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"not a usable ClickHouse database name: {name!r} (letters, digits and _ only)")
    return name


@dataclass(frozen=True, slots=True)
class Retention:
    """How long each kind of row is kept, in days (None: forever). Applied as table TTLs.

    Spans and their tool calls and state writes are the bulk of the data; tickets (with the intent a replay
    needs) and daily traffic are small and kept longer; runs, trials and alerts are kept forever by default.
    """

    spans_days: int | None = 90
    tickets_days: int | None = 400
    traffic_days: int | None = 800
    trials_days: int | None = None
    alerts_days: int | None = None

    def __post_init__(self) -> None:
        for name in ("spans_days", "tickets_days", "traffic_days", "trials_days", "alerts_days"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"retention {name} must be a whole number of days >= 1 or None, not {value!r}")


#: (table, time column, Retention field): the TTL of each table that has one.
TTL_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("spans", "day", "spans_days"),
    ("tool_calls", "day", "spans_days"),
    ("state_writes", "day", "spans_days"),
    ("tickets", "day", "tickets_days"),
    ("traffic_daily", "day", "traffic_days"),
    ("trials", "toDate(started_at)", "trials_days"),
    ("alert_events", "toDate(fired_at)", "alerts_days"),
)


def ttl_clause(table: str, retention: Retention) -> str:
    """The `TTL ...` clause of a table under `retention` ('' when rows are kept forever)."""
    for name, column, field_name in TTL_COLUMNS:
        if name == table:
            days = getattr(retention, field_name)
            return f"TTL {column} + INTERVAL {days} DAY" if days else ""
    return ""


def _settings(durable: bool) -> str:
    # fsync the part files and directory before an INSERT returns: an acknowledged span survives power loss,
    # not only a killed process.
    fsync = ", fsync_after_insert = 1, fsync_part_directory = 1" if durable else ""
    return f"SETTINGS index_granularity = 8192, ttl_only_drop_parts = 0{fsync}"


def _migration_1(db: str, retention: Retention, durable: bool) -> list[str]:
    s = _settings(durable)
    t = {name: ttl_clause(name, retention) for name, _, _ in TTL_COLUMNS}
    return [
        f"""CREATE TABLE IF NOT EXISTS {db}.projects (
            name String,
            created_at DateTime64(6, 'UTC')
        ) ENGINE = MergeTree ORDER BY name {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.api_keys (
            prefix String,
            project String,
            key_hash String,
            created_at DateTime64(6, 'UTC'),
            label Nullable(String),
            revoked_at Nullable(DateTime64(6, 'UTC')),
            version UInt64
        ) ENGINE = ReplacingMergeTree(version) ORDER BY prefix {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.spans (
            project LowCardinality(String),
            day Date,
            trace_hash UInt64,
            trace_id String,
            span_id String,
            parent_span_id Nullable(String),
            name String,
            start_time_ns Int64,
            end_time_ns Int64,
            operation LowCardinality(String),
            kind UInt8,
            status LowCardinality(String),
            status_message Nullable(String),
            service_name Nullable(String),
            scope_name Nullable(String),
            ticket_id Nullable(String),
            task_type LowCardinality(Nullable(String)),
            source LowCardinality(Nullable(String)),
            agent_name Nullable(String),
            tool_name Nullable(String),
            tool_outcome LowCardinality(Nullable(String)),
            error_type Nullable(String),
            request_model Nullable(String),
            input_tokens Nullable(Int64),
            output_tokens Nullable(Int64),
            replay_run_id Nullable(String),
            attributes String CODEC(ZSTD(3)),
            resource_attributes String CODEC(ZSTD(3)),
            events String CODEC(ZSTD(3)),
            inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
        ) ENGINE = ReplacingMergeTree
        PARTITION BY toYYYYMM(day)
        ORDER BY (project, day, trace_hash, trace_id, span_id)
        SAMPLE BY trace_hash
        {t["spans"]} {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.tickets (
            project LowCardinality(String),
            day Date,
            ticket_hash UInt64,
            trace_id String,
            ticket_id String,
            span_id String,
            task_type LowCardinality(String),
            source LowCardinality(String),
            start_time_ns Int64,
            end_time_ns Int64,
            status LowCardinality(String),
            agent_name Nullable(String),
            conversation_id Nullable(String),
            intent Nullable(String),
            domain Nullable(String),
            outcome Nullable(String),
            replay_run_id Nullable(String),
            trial_attempt Nullable(Int64),
            service_name Nullable(String),
            sign Int8,
            version UInt64,
            INDEX ticket_id_bf ticket_id TYPE bloom_filter GRANULARITY 4,
            INDEX trace_id_bf trace_id TYPE bloom_filter GRANULARITY 4,
            INDEX start_minmax start_time_ns TYPE minmax GRANULARITY 4
        ) ENGINE = VersionedCollapsingMergeTree(sign, version)
        PARTITION BY toYYYYMM(day)
        ORDER BY (project, ticket_hash, trace_id, ticket_id)
        SAMPLE BY ticket_hash
        {t["tickets"]} {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.tool_calls (
            project LowCardinality(String),
            day Date,
            trace_id String,
            span_id String,
            parent_span_id Nullable(String),
            tool_name String,
            outcome LowCardinality(String),
            start_time_ns Int64,
            end_time_ns Int64,
            call_id Nullable(String),
            tool_type Nullable(String),
            error_type Nullable(String),
            error_message Nullable(String),
            arguments Nullable(String) CODEC(ZSTD(3)),
            result Nullable(String) CODEC(ZSTD(3))
        ) ENGINE = ReplacingMergeTree
        PARTITION BY toYYYYMM(day)
        ORDER BY (project, trace_id, span_id)
        {t["tool_calls"]} {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.state_writes (
            project LowCardinality(String),
            day Date,
            trace_id String,
            span_id String,
            seq UInt32,
            time_ns Int64,
            table_name String,
            key String,
            op LowCardinality(String),
            before Nullable(String) CODEC(ZSTD(3)),
            after Nullable(String) CODEC(ZSTD(3)),
            changed Array(String),
            rowcount Nullable(Int64)
        ) ENGINE = ReplacingMergeTree
        PARTITION BY toYYYYMM(day)
        ORDER BY (project, trace_id, span_id, seq)
        {t["state_writes"]} {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.traffic_daily (
            project LowCardinality(String),
            source LowCardinality(String),
            day Date,
            task_type LowCardinality(String),
            tickets Int64
        ) ENGINE = SummingMergeTree(tickets)
        PARTITION BY toYYYYMM(day)
        ORDER BY (project, source, day, task_type)
        {t["traffic_daily"]} {s}""",
        f"""CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.traffic_daily_mv TO {db}.traffic_daily AS
        SELECT project, source, day, task_type, toInt64(sign) AS tickets FROM {db}.tickets""",
        f"""CREATE TABLE IF NOT EXISTS {db}.replay_runs (
            project LowCardinality(String),
            run_id String,
            created_at DateTime64(6, 'UTC'),
            k UInt32,
            status LowCardinality(String),
            params String,
            finished_at Nullable(DateTime64(6, 'UTC')),
            summary Nullable(String),
            error Nullable(String),
            version UInt64
        ) ENGINE = ReplacingMergeTree(version) ORDER BY (project, run_id) {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.trials (
            project LowCardinality(String),
            run_id String,
            ticket_id String,
            attempt UInt32,
            task_type LowCardinality(String),
            passed Bool,
            termination_reason LowCardinality(String),
            started_at DateTime64(6, 'UTC'),
            duration_s Float64,
            domain Nullable(String),
            trace_id Nullable(String),
            failure_label LowCardinality(Nullable(String)),
            failure_evidence Nullable(String),
            verdict Nullable(String) CODEC(ZSTD(3)),
            simulator_error Nullable(String),
            infra_error Nullable(String)
        ) ENGINE = ReplacingMergeTree ORDER BY (project, run_id, ticket_id, attempt)
        {t["trials"]} {s}""",
        f"""CREATE TABLE IF NOT EXISTS {db}.alert_events (
            project LowCardinality(String),
            alert_id String,
            rule String,
            fired_at DateTime64(6, 'UTC'),
            message String,
            severity LowCardinality(String),
            task_type Nullable(String),
            payload String,
            deliveries String
        ) ENGINE = ReplacingMergeTree ORDER BY (project, alert_id)
        {t["alert_events"]} {s}""",
    ]


def _production_verdicts(db: str, durable: bool) -> str:
    # One row per ticket id; grading again inserts a newer version (graded_at), read with FINAL.
    return f"""CREATE TABLE IF NOT EXISTS {db}.production_verdicts (
        project LowCardinality(String),
        ticket_id String,
        trace_id String,
        task_type LowCardinality(String),
        start_time_ns Int64,
        passed Bool,
        graded_at DateTime64(6, 'UTC'),
        domain Nullable(String),
        signature LowCardinality(Nullable(String)),
        evidence Nullable(String),
        verdict Nullable(String) CODEC(ZSTD(3)),
        graded_by String
    ) ENGINE = ReplacingMergeTree(graded_at) ORDER BY (project, ticket_id) {_settings(durable)}"""


def _run_figures(db: str, durable: bool) -> str:
    # One row per run; a newer write (figures kept, or an empty body: forgotten) wins, read with FINAL.
    return f"""CREATE TABLE IF NOT EXISTS {db}.run_figures (
        project LowCardinality(String),
        run_id String,
        body String CODEC(ZSTD(3)),
        version UInt64
    ) ENGINE = ReplacingMergeTree(version) ORDER BY (project, run_id) {_settings(durable)}"""


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema version: idempotent statements (IF NOT EXISTS), so a migration cut short re-runs cleanly."""

    version: int
    description: str

    def statements(self, db: str, retention: Retention, durable: bool) -> list[str]:
        if self.version == 1:
            return _migration_1(db, retention, durable)
        if self.version == 2:
            return [f"ALTER TABLE {db}.trials ADD COLUMN IF NOT EXISTS details Nullable(String) CODEC(ZSTD(3))"]
        if self.version == 3:
            return [_production_verdicts(db, durable)]
        if self.version == 4:
            return [_run_figures(db, durable)]
        raise AssertionError(f"no statements for schema version {self.version}")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "projects, keys, spans, tickets, tool calls, state writes, traffic view, runs, trials, alerts"),
    Migration(2, "trials: the trial record's details (changes, final response, tool calls, transcript)"),
    Migration(3, "production verdicts: each production ticket's own changes graded by its task type's check"),
    Migration(4, "run figures: a finished run's figures, kept for the web UI's first overview after a start"),
)
LATEST_VERSION = MIGRATIONS[-1].version


def migrations_table_ddl(db: str) -> str:
    return f"""CREATE TABLE IF NOT EXISTS {db}.{MIGRATIONS_TABLE} (
        version UInt32,
        description String,
        applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
    ) ENGINE = MergeTree ORDER BY version"""


def server_config_xml() -> str:
    """The shipped ClickHouse server config (a `config.d` drop-in) that caps ClickHouse's own log tables."""
    return (
        resources.files("passhat.collector.store.clickhouse")
        .joinpath("clickhouse-server.xml")
        .read_text(encoding="utf-8")
    )
