"""The rows the Store reads and writes: one dataclass per kind of row, in the domain's words.

Both backends derive their column lists from these dataclasses (`dataclasses.fields`), so a field is named
once, here; each backend's `_rows` module says in one place where its column is spelled differently.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from passhat.sandbox import TrialDetails

from passhat.collector.store._codec import dumps, utc_day

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


def ticket_rank(ticket_id: str, trace_id: str, start_time_ns: int) -> tuple[bool, int]:
    """The order of a trace's ticket candidates: a named ticket (`passhat.ticket.id`) first, then the earliest."""
    return (ticket_id == trace_id, start_time_ns)


@dataclass(slots=True)
class TicketRow:
    """One ticket attempt: the ticket span of a trace (a production ticket or one sandbox trial).

    A ticket id can appear in many traces (a production ticket, then k sandbox trials replaying it), but a
    trace holds one ticket: of the spans of a trace the normaliser made ticket candidates, the store keeps the
    one of lowest `rank` (a span with a `passhat.ticket.id` before one without; then the one that started
    first, i.e. the outermost agent or workflow span). Without a `passhat.ticket.id`, the normaliser uses the
    trace id as the ticket id.

    `ticket_hash` is `passhat.ticket_hash(ticket_id)` (the SDK's sampling hash, the one definition), an
    unsigned 64-bit integer; `list_tickets(max_hash=...)` keeps `ticket_hash < max_hash`. How it is stored:
    the SQL store shifts it by -2**63 into a signed BIGINT (`sql._rows.HASH_SHIFT`: order kept, so the filter
    stays a range scan); ClickHouse keeps it as a UInt64 and samples by it (docs/clickhouse.md).
    """

    ticket_id: str
    trace_id: str
    span_id: str
    task_type: str
    source: Source
    start_time_ns: int
    end_time_ns: int
    ticket_hash: int
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
        return utc_day(self.start_time_ns)

    @property
    def rank(self) -> tuple[bool, int]:
        """Which candidate of a trace is its ticket: the lowest (see `ticket_rank`)."""
        return ticket_rank(self.ticket_id, self.trace_id, self.start_time_ns)


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
    # Set when read back: a tool span whose call another tool span of the same call counts (see `_tool_twins`).
    duplicate_of: str | None = None


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


def _no_details() -> TrialDetails:
    # Imported on use: the sandbox loads MCP and SQLAlchemy, which the ingest path (it never builds a trial
    # row) should not pay for.
    from passhat.sandbox import TrialDetails

    return TrialDetails()


class VerdictText(str):
    """A trial's check verdict as the JSON text the store keeps (`TrialRow.verdict` takes it as given and reads it
    back only when first read)."""

    __slots__ = ()


class _Verdict:
    """`TrialRow.verdict`: the check verdict as JSON, which is most of a trial's row (about 15 KB of dicts against
    3 KB of text). Given as its text (`VerdictText`: a stored row read back, a replay worker's row), it is kept
    as that text and read back on first use; the store writes that text as it came (`verdict_text`). A replay's
    driver, which only stores the rows and keeps them to return, never builds the dicts."""

    def __get__(self, row: TrialRow | None, owner: type | None = None) -> dict[str, Any] | None:
        if row is None:
            return None  # the field's default
        held = row.__dict__
        value: dict[str, Any] | None
        try:
            value = held["verdict"]
        except KeyError:  # read back by the standard library, which keeps integers past 64 bits as they were
            value = held["verdict"] = json.loads(held["_verdict_text"])
        return value

    def __set__(self, row: TrialRow, value: dict[str, Any] | VerdictText | None) -> None:
        held = row.__dict__
        if isinstance(value, VerdictText):
            held.pop("verdict", None)
            held["_verdict_text"] = str(value)
        else:
            held.pop("_verdict_text", None)
            held["verdict"] = value


def verdict_text(row: TrialRow) -> str | None:
    """The row's verdict as the store writes it: the text it was given, else its JSON (`dumps`)."""
    text: str | None = row.__dict__.get("_verdict_text")
    if text is not None:
        return text
    verdict = row.verdict
    return None if verdict is None else dumps(verdict)


# Not slotted: `verdict` is a descriptor (`_Verdict`), which keeps what it was given in the row's own dict.
@dataclass(frozen=True)
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
    verdict: _Verdict = _Verdict()  # the check Verdict as JSON: a dict, None, or given as `VerdictText`
    simulator_error: str | None = None
    infra_error: str | None = None
    # The rest of the trial record (backend changes, final response, tool calls, transcript, usage, the agent's
    # label and any injected failure), kept as its JSON document (schema version 2).
    details: TrialDetails = field(default_factory=_no_details)


@dataclass(frozen=True, slots=True)
class HarnessTrial:
    """A trial the harness broke, as a run page lists it by cause (`reliability.harness_failures`): its row's
    signature and error columns, without its verdict and details."""

    ticket_id: str
    attempt: int
    failure_label: str | None
    failure_evidence: str | None
    simulator_error: str | None
    infra_error: str | None


@dataclass(frozen=True, slots=True)
class TicketTally:
    """One ticket of one run, counted by the store: what every figure is computed from (never every trial).

    `trials` and `passes` count the trials that speak about the agent; a trial that ended in a simulator or
    infrastructure error is counted in `harness_errors` only. `attempts` and `passed` are bit sets over the
    attempt numbers of the counted trials (bit a for attempt a), so the first m counted attempts can be read back
    (curtailed replay takes pass@1 from them). `signatures` counts the counted failed trials by failure label.
    """

    domain: str | None
    task_type: str
    ticket_id: str
    trials: int
    passes: int
    attempts: int
    passed: int
    harness_errors: int = 0
    signatures: dict[str, int] = field(default_factory=dict)

    def passes_in_first(self, m: int) -> int:
        """Passes among the first ``m`` counted attempts (by attempt number)."""
        seen = passes = 0
        bits = self.attempts
        while bits and seen < m:
            low = bits & -bits
            passes += bool(self.passed & low)
            seen += 1
            bits ^= low
        return passes


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


#: A production ticket's verdict filter: graded and passed, graded and failed, or not graded (yet or at all).
VerdictFilter = Literal["passed", "failed", "ungraded"]
#: A ticket's replays filter: every usable attempt passed, at least one failed, or never replayed.
ReplaysFilter = Literal["all_passed", "some_failed", "not_replayed"]


@dataclass(frozen=True, slots=True)
class ProductionVerdict:
    """The verdict of a production ticket's own changes: its task type's check run on what it wrote.

    The ticket's captured before-images are laid over its domain's seed, its captured writes applied, and the
    check run on the difference (`passhat.collector.replay.grade_ticket`). One per ticket id (the first
    production attempt); grading again replaces it. `signature` is the failure label when it failed, `verdict`
    the check's verdict as JSON, `graded_by` the replay run that graded it (or `on demand`).
    """

    ticket_id: str
    trace_id: str
    task_type: str
    start_time_ns: int
    passed: bool
    graded_at: dt.datetime
    domain: str | None = None
    signature: str | None = None
    evidence: str | None = None
    verdict: dict[str, Any] | None = None
    graded_by: str = "on demand"

    @property
    def label(self) -> str:
        """What a list shows: `passed`, or the failure signature (`failed` when it has none)."""
        return "passed" if self.passed else (self.signature or "failed")
