"""The Store interface: what the collector, the replay loop and the reports need from a database.

Two implementations are written against it: `SqlStore` (SQLAlchemy 2; SQLite by default, any URL) and
`ClickHouseStore` (clickhouse-connect; embedded chdb or a server). Both pass the same contract suite
(tests/collector/store_contract.py).

Conventions shared by every implementation:
- Every data method takes the project name first; rows never carry their project, and no method can return
  another project's rows.
- Span-derived times are integers, nanoseconds since the Unix epoch (exact in both stores); administrative
  times (`created_at`, `fired_at`, ...) are timezone-aware UTC `datetime`s.
- Ids are lowercase hex: trace ids 32 characters, span ids 16.
- JSON-like fields (`attributes`, `intent`, `key`, `before`, ...) are plain dicts / lists of JSON values.
"""

from __future__ import annotations

import abc
import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Source = Literal["production", "sandbox"]
SpanOperation = Literal[
    "invoke_agent",
    "invoke_workflow",
    "create_agent",
    "execute_tool",
    "chat",
    "generate_content",
    "text_completion",
    "embeddings",
    "retrieval",
    "other",
]  # passhat.semconv.OPERATIONS, plus "other"
StatusCode = Literal["unset", "ok", "error"]
ToolOutcome = Literal["ok", "error", "empty"]
RunStatus = Literal["running", "finished", "failed"]

#: The `op` of a state write; `read` marks a before-image captured from a `passhat.state_read` event.
StateOp = Literal["insert", "update", "delete", "bulk_update", "bulk_delete", "bulk_insert", "read"]


class StoreError(Exception):
    """A store could not do what was asked (connection lost, schema too new, ...); the message says why."""


@dataclass(frozen=True, slots=True)
class Project:
    """A tenant: every span, ticket, run and alert belongs to exactly one project."""

    name: str
    created_at: dt.datetime


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key as stored: only its sha256 hash, never the key itself.

    `prefix` is the key's public, unique leading part (e.g. `phk_3f9a1c2b`); it identifies the key in
    listings and for revocation.
    """

    prefix: str
    project: str
    key_hash: str
    created_at: dt.datetime
    label: str | None = None
    revoked_at: dt.datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


# The ingest path builds several of the next five per span. They are not frozen: a frozen dataclass sets each
# field through object.__setattr__, which made building one ~6x slower (3.6 us against 0.6 us for 11 fields).
# Treat them as values all the same: nothing mutates them after the normaliser returns.
@dataclass(slots=True)
class SpanEvent:
    """An event recorded on a span (OTLP `Span.Event`), attributes decoded to JSON values."""

    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class TicketRow:
    """One ticket attempt: the root agent span of a trace (a production ticket or one sandbox trial).

    A ticket id can appear in many traces (a production ticket, then k sandbox trials replaying it), so a
    row is identified by (trace_id, ticket_id). When two spans of one trace claim the same ticket id, the
    store keeps the one that started first (the outermost agent span). Without a `passhat.ticket.id`, the
    normaliser uses the trace id as the ticket id.
    """

    ticket_id: str
    trace_id: str
    span_id: str
    task_type: str
    source: Source
    start_time_ns: int
    end_time_ns: int
    ticket_hash: int  # passhat.ticket_hash(ticket_id): unsigned 64-bit
    status: StatusCode = "unset"
    agent_name: str | None = None
    conversation_id: str | None = None
    intent: dict[str, Any] | None = None
    domain: str | None = None
    outcome: str | None = None
    replay_run_id: str | None = None
    trial_attempt: int | None = None
    service_name: str | None = None

    @property
    def day(self) -> dt.date:
        """The UTC day the ticket started: the unit of daily traffic."""
        return _utc_day(self.start_time_ns // _NS_PER_DAY)


@dataclass(slots=True)
class ToolCallRow:
    """One tool execution (an `execute_tool` span or its OpenInference / OpenLLMetry equivalent)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    tool_name: str
    outcome: ToolOutcome
    start_time_ns: int
    end_time_ns: int
    call_id: str | None = None
    tool_type: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    arguments: str | None = None  # JSON text, only when the SDK captured content
    result: str | None = None


@dataclass(slots=True)
class StateWriteRow:
    """One row-level change (a `passhat.state_write` event) or, with op `read`, a before-image
    (a `passhat.state_read` event: `before` holds the full row as it was read).

    `seq` is the event's index within its span, so (trace_id, span_id, seq) identifies the row.
    """

    trace_id: str
    span_id: str
    seq: int
    time_ns: int
    table: str
    key: dict[str, Any]
    op: StateOp
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    changed: list[str] = field(default_factory=list)
    rowcount: int | None = None


@dataclass(slots=True)
class NormalizedSpan:
    """A span as received, decoded, plus what the normaliser derived from it.

    The store writes the span and, only if it is not a duplicate of a stored (trace_id, span_id), its
    derived rows: `ticket` (root agent spans), `tool_call` (tool spans) and `state_writes` (its events).
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_time_ns: int
    end_time_ns: int
    operation: SpanOperation = "other"
    kind: int = 0  # OTLP SpanKind number
    status: StatusCode = "unset"
    status_message: str | None = None
    service_name: str | None = None
    scope_name: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    ticket: TicketRow | None = None
    tool_call: ToolCallRow | None = None
    state_writes: list[StateWriteRow] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SpanBatch:
    """The spans one project sent: the unit `write_batches` de-duplicates and commits."""

    project: str
    spans: Sequence[NormalizedSpan]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write did: `accepted` spans were new and are now durable; `duplicates` were already stored
    (or repeated within the batch) and changed nothing."""

    accepted: int
    duplicates: int


@dataclass(frozen=True, slots=True)
class TicketDetail:
    """One ticket id with everything recorded under it: all its attempts (traces), their spans, tool calls,
    state writes and before-images (state reads), each list in time order."""

    ticket_id: str
    attempts: list[TicketRow]
    spans: list[NormalizedSpan]
    tool_calls: list[ToolCallRow]
    state_writes: list[StateWriteRow]
    state_reads: list[StateWriteRow]


@dataclass(frozen=True, slots=True)
class TrafficDay:
    """Tickets of one task type on one UTC day (from one source)."""

    day: dt.date
    task_type: str
    source: Source
    tickets: int


@dataclass(frozen=True, slots=True)
class ReplayRun:
    """One replay run: tickets sampled from the store (or scenarios of a domain), each replayed k times."""

    run_id: str
    created_at: dt.datetime
    k: int
    status: RunStatus = "running"
    params: dict[str, Any] = field(default_factory=dict)  # period, task types, sample sizes, agent, ...
    finished_at: dt.datetime | None = None
    summary: dict[str, Any] | None = None  # per-task-type metrics once finished
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TrialRow:
    """One sandbox trial of one ticket in a replay run, graded by its checks."""

    run_id: str
    ticket_id: str
    task_type: str
    attempt: int
    passed: bool
    termination_reason: str
    started_at: dt.datetime
    duration_s: float
    domain: str | None = None
    trace_id: str | None = None
    failure_label: str | None = None
    failure_evidence: str | None = None
    verdict: dict[str, Any] | None = None  # the check Verdict as JSON
    simulator_error: str | None = None
    infra_error: str | None = None
    # The rest of the trial record, as JSON: backend changes, final response, tool calls, transcript, usage,
    # the agent's label and any injected failure (schema version 2).
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlertEvent:
    """An alert that fired (and how its delivery went)."""

    alert_id: str
    rule: str
    fired_at: dt.datetime
    message: str
    severity: str = "warning"
    task_type: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    deliveries: dict[str, str] = field(default_factory=dict)  # channel -> "ok" | error text


class Store(abc.ABC):
    """Durable storage for the collector. Implementations must be safe to call from several threads."""

    # --- lifecycle -------------------------------------------------------------------------------------
    @abc.abstractmethod
    def migrate(self) -> int:
        """Bring the schema to the newest version (idempotent); return that version."""

    @abc.abstractmethod
    def schema_version(self) -> int:
        """The schema version applied (0 before any migration)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections. The store is unusable afterwards."""

    def ping(self) -> bool:
        """True when the database answers (for /healthz)."""
        self.schema_version()
        return True

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- projects and keys -----------------------------------------------------------------------------
    @abc.abstractmethod
    def ensure_project(self, name: str) -> Project:
        """Return the project, creating it first if needed."""

    @abc.abstractmethod
    def get_project(self, name: str) -> Project | None: ...

    @abc.abstractmethod
    def list_projects(self) -> list[Project]:
        """All projects, by name."""

    @abc.abstractmethod
    def add_api_key(self, key: ApiKey) -> None:
        """Store a key (its project must exist). A prefix or hash already stored raises `StoreError`."""

    @abc.abstractmethod
    def find_api_key(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, revoked or not (callers check `active`)."""

    @abc.abstractmethod
    def list_api_keys(self, project: str | None = None) -> list[ApiKey]:
        """Keys (all projects when None), by creation time."""

    @abc.abstractmethod
    def revoke_api_key(self, prefix: str, *, at: dt.datetime | None = None) -> bool:
        """Revoke the key with this prefix. False when there is no such active key."""

    # --- spans -----------------------------------------------------------------------------------------
    @abc.abstractmethod
    def write_batches(self, batches: Sequence[SpanBatch]) -> list[WriteResult]:
        """Write several projects' batches as one atomic unit (all committed, or none and an exception).

        Spans whose (project, trace_id, span_id) is already stored, or repeated earlier in the call, are
        counted as duplicates and none of their derived rows are written. Daily traffic counts each new
        ticket row once. Returns one result per batch, in order. Returning means durable.
        """

    def write_batch(self, project: str, spans: Sequence[NormalizedSpan]) -> WriteResult:
        """Write one project's spans atomically (see `write_batches`)."""
        return self.write_batches([SpanBatch(project, spans)])[0]

    @abc.abstractmethod
    def count_spans(self, project: str) -> int: ...

    @abc.abstractmethod
    def get_trace(self, project: str, trace_id: str) -> list[NormalizedSpan]:
        """The stored spans of a trace (with events and derived rows), by start time."""

    # --- tickets and traffic ---------------------------------------------------------------------------
    @abc.abstractmethod
    def list_tickets(
        self,
        project: str,
        *,
        task_type: str | None = None,
        source: Source | None = None,
        since_ns: int | None = None,
        until_ns: int | None = None,
        max_hash: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[TicketRow]:
        """Ticket attempts, newest first. `since_ns` inclusive, `until_ns` exclusive (start time);
        `max_hash` keeps tickets whose `ticket_hash < max_hash` (the deterministic sampler's filter)."""

    @abc.abstractmethod
    def get_ticket(self, project: str, ticket_id: str, *, source: Source | None = None) -> TicketDetail | None:
        """A ticket with its attempts and their spans, tool calls, state writes and reads; None if unknown."""

    @abc.abstractmethod
    def traffic(
        self, project: str, *, days: int, source: Source = "production", today: dt.date | None = None
    ) -> list[TrafficDay]:
        """Tickets per task type per UTC day for the `days` days ending with `today` (default: UTC today),
        ordered by day then task type. Days without tickets are absent."""

    # --- replay runs and trials ------------------------------------------------------------------------
    @abc.abstractmethod
    def create_replay_run(self, project: str, run: ReplayRun) -> None:
        """Record a new run. A run id already used in the project raises `StoreError`."""

    @abc.abstractmethod
    def get_replay_run(self, project: str, run_id: str) -> ReplayRun | None: ...

    @abc.abstractmethod
    def list_replay_runs(self, project: str, *, limit: int = 50) -> list[ReplayRun]:
        """Runs, newest first."""

    @abc.abstractmethod
    def add_trials(self, project: str, trials: Sequence[TrialRow]) -> None:
        """Append trials to existing runs (an unknown run id raises `StoreError`)."""

    @abc.abstractmethod
    def list_trials(self, project: str, run_id: str) -> list[TrialRow]:
        """A run's trials ordered by ticket id, then attempt."""

    @abc.abstractmethod
    def finish_replay_run(
        self,
        project: str,
        run_id: str,
        *,
        status: RunStatus = "finished",
        summary: dict[str, Any] | None = None,
        error: str | None = None,
        at: dt.datetime | None = None,
    ) -> None:
        """Mark a run finished or failed (an unknown run id raises `StoreError`)."""

    # --- alerts ----------------------------------------------------------------------------------------
    @abc.abstractmethod
    def add_alert_event(self, project: str, event: AlertEvent) -> None: ...

    @abc.abstractmethod
    def list_alert_events(
        self, project: str, *, since: dt.datetime | None = None, rule: str | None = None, limit: int = 100
    ) -> list[AlertEvent]:
        """Alert events, newest first."""


_NS_PER_DAY = 86_400 * 10**9
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()


@functools.lru_cache(maxsize=1024)
def _utc_day(days_since_epoch: int) -> dt.date:
    # Integer nanoseconds, not a float timestamp: exact at midnight, and cached (ingest asks once per ticket).
    return dt.date.fromordinal(_EPOCH_ORDINAL + days_since_epoch)
