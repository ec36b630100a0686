"""The SQL schema (SQLAlchemy Core tables) and its versioned migrations.

Times are BIGINTs: span times in nanoseconds, administrative times in microseconds since the epoch, so both
round-trip exactly on SQLite and Postgres. JSON values are stored as text. How `ticket_hash` is stored is
explained once, on `TicketRow`.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

metadata = sa.MetaData()

schema_versions = sa.Table(
    "passhat_schema_versions",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at_us", sa.BigInteger, nullable=False),
)

# --- version 1 ---------------------------------------------------------------------------------------------
_v1 = sa.MetaData()

projects = sa.Table(
    "projects",
    _v1,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("created_at_us", sa.BigInteger, nullable=False),
)

api_keys = sa.Table(
    "api_keys",
    _v1,
    sa.Column("prefix", sa.String(64), primary_key=True),
    sa.Column("project", sa.String(200), sa.ForeignKey("projects.name"), nullable=False, index=True),
    sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("label", sa.Text),
    sa.Column("created_at_us", sa.BigInteger, nullable=False),
    sa.Column("revoked_at_us", sa.BigInteger),
)

# Row ids: BIGINT on PostgreSQL, INTEGER on SQLite (only a column declared INTEGER PRIMARY KEY is the rowid).
RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

# The span tables (version 3). Ingest appends: every index a group commit writes is keyed by something that
# grows (a span's row id, a start time), except one per span (the (project, trace, span) identity that
# de-duplicates, and finds a trace's spans) and one per ticket (its (project, ticket id, trace)). Tool calls,
# state writes and tickets point at their span's row id (`span_ref`) and are found through it. Before
# version 3 every one of these tables was keyed by (project, trace id, span id): five indexes keyed by random
# ids, which made each group commit rewrite thousands of index pages all over the file.
spans = sa.Table(
    "spans",
    _v1,
    sa.Column("id", RowId, nullable=False, autoincrement=False),  # given by the writer, in commit order
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("trace_id", sa.String(32), nullable=False),
    sa.Column("span_id", sa.String(16), nullable=False),
    sa.Column("parent_span_id", sa.String(16)),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("operation", sa.String(32), nullable=False),
    sa.Column("kind", sa.Integer, nullable=False),
    sa.Column("status", sa.String(8), nullable=False),
    sa.Column("status_message", sa.Text),
    sa.Column("service_name", sa.Text),
    sa.Column("scope_name", sa.Text),
    sa.Column("start_ns", sa.BigInteger, nullable=False),
    sa.Column("end_ns", sa.BigInteger, nullable=False),
    sa.Column("attributes", sa.Text, nullable=False),
    sa.Column("resource_attributes", sa.Text, nullable=False),
    sa.Column("events", sa.Text, nullable=False),
    sa.PrimaryKeyConstraint("id", name="pk_spans"),
    sa.UniqueConstraint("project", "trace_id", "span_id", name="uq_spans_ident"),
)

tickets = sa.Table(
    "tickets",
    _v1,
    sa.Column("id", RowId, nullable=False, autoincrement=True),
    sa.Column("span_ref", RowId, nullable=False),  # spans.id of the ticket's span
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("trace_id", sa.String(32), nullable=False),
    sa.Column("ticket_id", sa.String(400), nullable=False),
    sa.Column("span_id", sa.String(16), nullable=False),
    sa.Column("task_type", sa.String(200), nullable=False),
    sa.Column("source", sa.String(16), nullable=False),
    sa.Column("start_ns", sa.BigInteger, nullable=False),
    sa.Column("end_ns", sa.BigInteger, nullable=False),
    sa.Column("day", sa.String(10), nullable=False),
    sa.Column("ticket_hash", sa.BigInteger, nullable=False),
    sa.Column("status", sa.String(8), nullable=False),
    sa.Column("agent_name", sa.Text),
    sa.Column("conversation_id", sa.Text),
    sa.Column("intent", sa.Text),
    sa.Column("domain", sa.Text),
    sa.Column("outcome", sa.Text),
    sa.Column("replay_run_id", sa.Text),
    sa.Column("trial_attempt", sa.Integer),
    sa.Column("service_name", sa.Text),
    sa.PrimaryKeyConstraint("id", name="pk_tickets"),
    sa.UniqueConstraint("project", "ticket_id", "trace_id", name="uq_tickets_ident"),
    sa.Index("ix_tickets_span_ref", "span_ref"),
    sa.Index("ix_tickets_project_start", "project", "start_ns"),
    sa.Index("ix_tickets_project_type_start", "project", "task_type", "start_ns"),
    # The web UI's ticket filters (failed tickets, tickets of an outcome), newest first (version 4).
    sa.Index("ix_tickets_project_status_start", "project", "status", "start_ns"),
    sa.Index("ix_tickets_project_outcome_start", "project", "outcome", "start_ns"),
    # The web UI's domain filter, newest first (version 7).
    sa.Index("ix_tickets_project_domain_start", "project", "domain", "start_ns"),
)

tool_calls = sa.Table(
    "tool_calls",
    _v1,
    sa.Column("span_ref", RowId, nullable=False, autoincrement=False),  # spans.id of the tool span
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("trace_id", sa.String(32), nullable=False),
    sa.Column("span_id", sa.String(16), nullable=False),
    sa.Column("parent_span_id", sa.String(16)),
    sa.Column("tool_name", sa.Text, nullable=False),
    sa.Column("outcome", sa.String(8), nullable=False),
    sa.Column("start_ns", sa.BigInteger, nullable=False),
    sa.Column("end_ns", sa.BigInteger, nullable=False),
    sa.Column("call_id", sa.Text),
    sa.Column("tool_type", sa.Text),
    sa.Column("error_type", sa.Text),
    sa.Column("error_message", sa.Text),
    sa.Column("arguments", sa.Text),
    sa.Column("result", sa.Text),
    sa.PrimaryKeyConstraint("span_ref", name="pk_tool_calls"),
)

state_writes = sa.Table(
    "state_writes",
    _v1,
    sa.Column("span_ref", RowId, nullable=False, autoincrement=False),  # spans.id of the span it came from
    sa.Column("seq", sa.Integer, nullable=False, autoincrement=False),
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("trace_id", sa.String(32), nullable=False),
    sa.Column("span_id", sa.String(16), nullable=False),
    sa.Column("time_ns", sa.BigInteger, nullable=False),
    sa.Column("table_name", sa.Text, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("op", sa.String(16), nullable=False),
    sa.Column("before", sa.Text),
    sa.Column("after", sa.Text),
    sa.Column("changed", sa.Text, nullable=False),
    sa.Column("rowcount", sa.Integer),
    sa.PrimaryKeyConstraint("span_ref", "seq", name="pk_state_writes"),
)

traffic_daily = sa.Table(
    "traffic_daily",
    _v1,
    sa.Column("project", sa.String(200), primary_key=True),
    sa.Column("day", sa.String(10), primary_key=True),
    sa.Column("task_type", sa.String(200), primary_key=True),
    sa.Column("source", sa.String(16), primary_key=True),
    sa.Column("tickets", sa.BigInteger, nullable=False),
)

replay_runs = sa.Table(
    "replay_runs",
    _v1,
    sa.Column("project", sa.String(200), primary_key=True),
    sa.Column("run_id", sa.String(200), primary_key=True),
    sa.Column("created_at_us", sa.BigInteger, nullable=False),
    sa.Column("k", sa.Integer, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("params", sa.Text, nullable=False),
    sa.Column("finished_at_us", sa.BigInteger),
    sa.Column("summary", sa.Text),
    sa.Column("error", sa.Text),
)

trials = sa.Table(
    "trials",
    _v1,
    sa.Column("project", sa.String(200), primary_key=True),
    sa.Column("run_id", sa.String(200), primary_key=True),
    sa.Column("ticket_id", sa.String(400), primary_key=True),
    sa.Column("attempt", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("task_type", sa.String(200), nullable=False),
    sa.Column("passed", sa.Boolean, nullable=False),
    sa.Column("termination_reason", sa.String(32), nullable=False),
    sa.Column("started_at_us", sa.BigInteger, nullable=False),
    sa.Column("duration_s", sa.Float, nullable=False),
    sa.Column("domain", sa.Text),
    sa.Column("trace_id", sa.String(32)),
    sa.Column("failure_label", sa.Text),
    sa.Column("failure_evidence", sa.Text),
    sa.Column("verdict", sa.Text),
    sa.Column("simulator_error", sa.Text),
    sa.Column("infra_error", sa.Text),
)

alert_events = sa.Table(
    "alert_events",
    _v1,
    sa.Column("project", sa.String(200), primary_key=True),
    sa.Column("alert_id", sa.String(200), primary_key=True),
    sa.Column("rule", sa.String(200), nullable=False),
    sa.Column("fired_at_us", sa.BigInteger, nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("severity", sa.String(32), nullable=False),
    sa.Column("task_type", sa.Text),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("deliveries", sa.Text, nullable=False),
    sa.Index("ix_alert_events_project_fired", "project", "fired_at_us"),
)


def _migrate_v1(conn: sa.Connection) -> None:
    # A new database gets every table in its current shape; the later migrations then find nothing to do.
    _v1.create_all(conn)


# --- version 2: the trial record's details (changes, final response, tool calls, transcript, usage) -------
trial_details = sa.Column("details", sa.Text)


def _migrate_v2(conn: sa.Connection) -> None:
    columns = {column["name"] for column in sa.inspect(conn).get_columns("trials")}
    if "details" not in columns:
        conn.execute(sa.text("ALTER TABLE trials ADD COLUMN details TEXT"))


trials.append_column(trial_details)


# --- version 3: span tables whose hot indexes append (row ids), children found through their span's id --------
_SPAN_TABLES = (spans, tool_calls, state_writes, tickets)
_V2_INDEXES = ("ix_tickets_project_ticket", "ix_tickets_project_start", "ix_tickets_project_type_start")


def _migrate_v3(conn: sa.Connection) -> None:
    """Version 2's span tables (keyed by project, trace id and span id) are copied into version 3's.

    Spans get row ids in start-time order; tool calls, state writes and tickets get their span's id. The old
    tables are renamed aside, copied in one INSERT ... SELECT each, and dropped, inside the migration's
    transaction: a failure leaves version 2 as it was.
    """
    if "id" in {column["name"] for column in sa.inspect(conn).get_columns("spans")}:
        return  # created in this shape
    for table in _SPAN_TABLES:
        conn.execute(sa.text(f"ALTER TABLE {table.name} RENAME TO {table.name}_v2"))
    for index in _V2_INDEXES:  # their names are reused by version 3's indexes
        conn.execute(sa.text(f"DROP INDEX IF EXISTS {index}"))
    for table in _SPAN_TABLES:
        table.create(conn)

    def kept(table: sa.Table, prefix: str) -> str:
        return ", ".join(f"{prefix}{c.name}" for c in table.columns if c.name not in ("id", "span_ref"))

    conn.execute(
        sa.text(
            f"INSERT INTO spans (id, {kept(spans, '')}) SELECT ROW_NUMBER() OVER "
            f"(ORDER BY start_ns, project, trace_id, span_id), {kept(spans, '')} FROM spans_v2"
        )
    )
    same_span = "s.project = o.project AND s.trace_id = o.trace_id AND s.span_id = o.span_id"
    for table in (tool_calls, state_writes, tickets):
        conn.execute(
            sa.text(
                f"INSERT INTO {table.name} (span_ref, {kept(table, '')}) SELECT s.id, {kept(table, 'o.')} "
                f"FROM {table.name}_v2 o JOIN spans s ON {same_span} ORDER BY s.id"
            )
        )
    for table in _SPAN_TABLES:
        conn.execute(sa.text(f"DROP TABLE {table.name}_v2"))


_V4_INDEXES = ("ix_tickets_project_status_start", "ix_tickets_project_outcome_start")


def _migrate_v4(conn: sa.Connection) -> None:
    """Indexes for the ticket filters by status and outcome (the web UI's failed tickets, newest first)."""
    for index in tickets.indexes:
        if index.name in _V4_INDEXES:
            index.create(conn, checkfirst=True)


# --- version 5: production tickets' verdicts (their own changes graded by their task type's check) --------
production_verdicts = sa.Table(
    "production_verdicts",
    _v1,
    sa.Column("project", sa.String(200), primary_key=True),
    sa.Column("ticket_id", sa.String(400), primary_key=True),
    sa.Column("trace_id", sa.String(32), nullable=False),
    sa.Column("task_type", sa.String(200), nullable=False),
    sa.Column("start_ns", sa.BigInteger, nullable=False),
    sa.Column("passed", sa.Boolean, nullable=False),
    sa.Column("graded_at_us", sa.BigInteger, nullable=False),
    sa.Column("domain", sa.Text),
    sa.Column("signature", sa.String(64)),
    sa.Column("evidence", sa.Text),
    sa.Column("verdict", sa.Text),
    sa.Column("graded_by", sa.String(200), nullable=False),
    sa.Index("ix_production_verdicts_project_start", "project", "start_ns"),
    # The ticket list's verdict and signature filters and its least reliable first: the graded ticket ids of an
    # outcome or a signature, read from the index without the verdicts' rows (version 8).
    sa.Index("ix_production_verdicts_project_passed", "project", "passed", "ticket_id"),
    sa.Index("ix_production_verdicts_project_signature", "project", "signature", "ticket_id"),
)


# A ticket's trials in every run (its page, the ticket list's replay tallies and filter), found by ticket id.
trials_by_ticket = sa.Index("ix_trials_project_ticket", trials.c.project, trials.c.ticket_id)


# The trials a harness broke (a simulator or infrastructure error, or their signature): few, and what a run page
# lists by cause. A partial index holds only them, so the run page reads them without scanning the run's trials
# (version 10). Its condition is written as text, the same in the index and in the queries (`HARNESS_BROKE`):
# SQLite uses a partial index only for a query whose condition holds the index's own, term for term, and it
# prefers the primary key's index unless the partial one covers the columns read. PostgreSQL limits an index
# entry's size (an error message can be a long traceback), so there it indexes the run only: its planner picks a
# partial index by its statistics.
HARNESS_BROKE = (
    "(coalesce(simulator_error, '') <> '' OR coalesce(infra_error, '') <> ''"
    " OR coalesce(failure_label, '') IN ('infra_error', 'simulator_error'))"
)
_HARNESS_COLUMNS = {
    "sqlite": "project, run_id, ticket_id, attempt, failure_label, failure_evidence, simulator_error, infra_error",
}


def _migrate_v5(conn: sa.Connection) -> None:
    """The production verdicts table, and trials found by ticket (a new database has both from version 1)."""
    production_verdicts.create(conn, checkfirst=True)
    trials_by_ticket.create(conn, checkfirst=True)


# --- version 6: a finished run's per-ticket tallies, kept (the figures are read from them, never every trial) ---
_v6 = sa.MetaData()

ticket_tallies = sa.Table(
    "ticket_tallies",
    _v6,
    sa.Column("project", sa.String(200), primary_key=True),
    sa.Column("run_id", sa.String(200), primary_key=True),
    sa.Column("ticket_id", sa.String(400), primary_key=True),
    sa.Column("domain", sa.Text),
    sa.Column("task_type", sa.String(200), nullable=False),
    sa.Column("trials", sa.Integer, nullable=False),
    sa.Column("passes", sa.Integer, nullable=False),
    # Bit sets of the counted attempts below 62 (the rest are read from the trials when a ticket has any).
    sa.Column("attempts", sa.BigInteger, nullable=False),
    sa.Column("passed", sa.BigInteger, nullable=False),
    sa.Column("harness_errors", sa.Integer, nullable=False),
    sa.Column("signatures", sa.Text, nullable=False),  # {failure label: failed trials}, JSON
)


def _migrate_v6(conn: sa.Connection) -> None:
    """Runs finished before this version get their tallies kept on their next read (`SqlStore.ticket_tallies`)."""
    _v6.create_all(conn)


def _migrate_v7(conn: sa.Connection) -> None:
    """The ticket list's domain filter by index (a million-trial store scanned every ticket for it)."""
    for index in tickets.indexes:
        if index.name == "ix_tickets_project_domain_start":
            index.create(conn, checkfirst=True)


_V8_INDEXES = ("ix_production_verdicts_project_passed", "ix_production_verdicts_project_signature")


def _migrate_v8(conn: sa.Connection) -> None:
    """The verdicts' ticket ids by outcome and by signature, for the ticket list's verdict filters and sort."""
    for index in production_verdicts.indexes:
        if index.name in _V8_INDEXES:
            index.create(conn, checkfirst=True)


# --- version 9: a finished run's figures, kept (the first overview after a start reads them, not its tallies) ---
_v9 = sa.MetaData()

run_figures = sa.Table(
    "run_figures",
    _v9,
    sa.Column("project", sa.String(200), primary_key=True),
    sa.Column("run_id", sa.String(200), primary_key=True),
    sa.Column("body", sa.Text, nullable=False),  # what the reader kept (JSON; it checks its own version)
)


def _migrate_v9(conn: sa.Connection) -> None:
    """Runs finished before this version get their figures kept on their next read (`SqlStore.keep_run_figures`)."""
    _v9.create_all(conn)


def _migrate_v10(conn: sa.Connection) -> None:
    """The trials the harness broke, by run, from a partial index (a run page scanned every trial for them)."""
    columns = _HARNESS_COLUMNS.get(conn.dialect.name, "project, run_id")
    conn.execute(sa.text(f"CREATE INDEX IF NOT EXISTS ix_trials_harness ON trials ({columns}) WHERE {HARNESS_BROKE}"))


#: Migration n (1-based) brings the schema from version n-1 to n. Append; never edit a released one.
MIGRATIONS: list[Callable[[sa.Connection], None]] = [
    _migrate_v1, _migrate_v2, _migrate_v3, _migrate_v4, _migrate_v5, _migrate_v6, _migrate_v7, _migrate_v8,
    _migrate_v9, _migrate_v10,
]  # fmt: skip
