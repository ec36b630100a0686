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
from collections.abc import Callable, Sequence
from typing import Any

from passhat.collector.store._rows import (
    AlertEvent,
    ApiKey,
    HarnessTrial,
    NormalizedSpan,
    ProductionVerdict,
    Project,
    ReplayRun,
    ReplaysFilter,
    RunStatus,
    Source,
    SpanBatch,
    StatusCode,
    TicketDetail,
    TicketRow,
    TicketTally,
    TrafficDay,
    TrialRow,
    VerdictFilter,
    WriteResult,
)
from passhat.collector.store._ticket_list import TicketFilter, TicketPage


class StoreError(Exception):
    """A store could not do what was asked (connection lost, schema too new, ...); the message says why."""


class StoreDataError(StoreError):
    """A write refused for a value in it (an integer beyond 64 bits, text the database cannot hold): retrying the
    same rows fails again, other rows are unaffected. Nothing of the write was stored."""


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

    def row_builder(self) -> Callable[[str, Sequence[NormalizedSpan]], Any] | None:
        """A picklable function making this store's rows of one project's spans in another process (a replay's
        worker processes, which cannot reach the store), for `write_built`; None when this store takes spans
        only (`write_batch`)."""
        return None

    def write_built(self, project: str, built: Sequence[Any]) -> WriteResult:
        """Write what `row_builder`'s function made for ``project``, as `write_batch` writes those spans: one
        atomic unit, duplicates counted and skipped."""
        raise NotImplementedError(f"{type(self).__name__} builds no rows elsewhere: use write_batch")

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
        outcome: str | None = None,
        replay_run_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[TicketRow]:
        """Ticket attempts, newest first. `since_ns` inclusive, `until_ns` exclusive (start time);
        `max_hash` keeps tickets whose `ticket_hash < max_hash` (the deterministic sampler's filter); `outcome`
        keeps tickets whose recorded outcome (`passhat.ticket.outcome`) is that one; `replay_run_id` keeps the
        sandbox trials of one replay run."""

    @abc.abstractmethod
    def get_ticket(self, project: str, ticket_id: str, *, source: Source | None = None) -> TicketDetail | None:
        """A ticket with its attempts and their spans, tool calls, state writes and reads; None if unknown."""

    def get_tickets(
        self, project: str, ticket_ids: Sequence[str], *, source: Source | None = None
    ) -> dict[str, TicketDetail]:
        """Several tickets as `get_ticket` gives each, by ticket id (unknown ids are absent). Stores may read them
        in a few queries; this default asks for one at a time."""
        found = {tid: self.get_ticket(project, tid, source=source) for tid in dict.fromkeys(ticket_ids)}
        return {tid: detail for tid, detail in found.items() if detail is not None}

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
    def list_trials(
        self, project: str, run_id: str, *, ticket_id: str | None = None, harness_only: bool = False
    ) -> list[TrialRow]:
        """A run's trials (of one ticket, with ``ticket_id``; only those the harness broke, with
        ``harness_only``: signed `infra_error` or `simulator_error`) ordered by ticket id, then attempt."""

    def harness_trials(self, project: str, run_id: str) -> list[HarnessTrial]:
        """A run's trials the harness broke (`list_trials(..., harness_only=True)`), their signature and error
        columns only, ordered by ticket id, then attempt. A store reads them without the trials' other columns
        where it can."""
        return [
            HarnessTrial(t.ticket_id, t.attempt, t.failure_label, t.failure_evidence, t.simulator_error, t.infra_error)
            for t in self.list_trials(project, run_id, harness_only=True)
        ]

    @abc.abstractmethod
    def ticket_tallies(self, project: str, run_id: str, *, task_type: str | None = None) -> list[TicketTally]:
        """A run's trials counted per ticket by the database, ordered by domain, task type and ticket (with
        ``task_type``, that task type's tickets only).

        What every figure of a run is computed from: trials and passes of the trials that speak about the agent,
        the attempts they were (bit sets), the failure signatures of the failed ones, and how many trials ended
        in a harness (simulator or infrastructure) error. A run without trials has none."""

    @abc.abstractmethod
    def kept_run_figures(self, project: str, run_id: str) -> str | None:
        """What `keep_run_figures` kept for a finished run, or None (not kept, or trials were added since, or the
        run is not finished)."""

    @abc.abstractmethod
    def keep_run_figures(self, project: str, run_id: str, *, trials: int, body: str) -> bool:
        """Keep a finished run's figures, computed from its ``trials`` trials (all of them, harness errors
        included), for `kept_run_figures` to return until trials are added to the run. Kept only when the run
        is finished and still holds exactly ``trials`` trials (else False: they were computed from stale
        tallies)."""

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

    # --- queries of the web UI (passhat.collector.ui) ---------------------------------------------------
    @abc.abstractmethod
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
        """Ticket attempts matching every filter given, newest first (as `list_tickets`).

        `ticket_id_prefix` keeps tickets whose id starts with it (taken literally: `%` and `_` are not
        wildcards); `status` is the root span's status, `outcome` the ticket's `passhat.ticket.outcome`."""

    @abc.abstractmethod
    def ticket_page(self, project: str, filters: TicketFilter, *, limit: int = 50, offset: int = 0) -> TicketPage:
        """One page of ticket attempts matching `filters`, in its sort, and how many match in all: the filtering,
        sorting, counting and paging all done by the database (ties broken by trace id, then ticket id)."""

    @abc.abstractmethod
    def list_ticket_trials(self, project: str, ticket_id: str) -> list[TrialRow]:
        """Every sandbox trial replaying this ticket, in any run, by start time, then run id and attempt."""

    # --- production verdicts (passhat.collector.replay.grade_tickets) ----------------------------------
    @abc.abstractmethod
    def put_production_verdicts(self, project: str, verdicts: Sequence[ProductionVerdict]) -> None:
        """Store production tickets' verdicts; a ticket id graded before has its verdict replaced."""

    @abc.abstractmethod
    def production_verdicts(self, project: str, ticket_ids: Sequence[str]) -> dict[str, ProductionVerdict]:
        """The verdicts of these ticket ids, by ticket id (ids never graded are absent)."""

    @abc.abstractmethod
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
        """Verdicts of tickets that started in [since_ns, until_ns), newest first."""

    @abc.abstractmethod
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
        """Production ticket attempts by their ticket's verdict and replays, newest first (the other filters as
        in `search_tickets`). `verdict` keeps tickets graded `passed`, graded `failed`, or `ungraded` (no
        verdict); `signature` keeps failed tickets of that failure signature; `replays` keeps tickets whose
        usable replay attempts (no simulator or infrastructure error) `all_passed`, of which `some_failed`, or
        that were `not_replayed`."""

    @abc.abstractmethod
    def trial_tallies(self, project: str, ticket_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Per ticket id: (attempts passed, attempts) over its replays in every run, counting only attempts
        without a simulator or infrastructure error. Tickets never replayed are absent."""
