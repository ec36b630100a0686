"""The local executor's side of a replay: trials on worker processes (`WorkerProcesses`), their rows stored by the
driver, and their traces: the spans the driver relays to its own runtime, or, with a worker on every core, the
store's rows the workers prepared from them, handed to the store `PREPARED_AT_ONCE` trials at a time."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import passhat
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._processes import WorkerProcesses, default_workers
from passhat.collector.replay._relay import RuntimeSettings, WorkerPreparedExport, prepared_export
from passhat.collector.replay._row import RowSpec
from passhat.collector.replay._worker import Prepared, TrialProfile, sendable
from passhat.collector.store import TrialRow
from passhat.sandbox import AgentFactory, Domain, RunConfig, TrialResult

__all__ = ["LocalTrials", "profile_for", "spans_prepared_in_workers"]

SPANS_PREPARED_FROM = 6
"""Workers from which they prepare their trials' spans for a store that takes spans, not rows (embedded
ClickHouse: `spans_prepared_in_workers`): the driver preparing and writing them bounds a traced replay near 1,200
trials a second (0.8 ms a trial), which six workers at about 4 ms a trial approach; below, the CPU in all (a
little more when prepared in the workers) decides. A projection from the CPU a trial measured on two cores, not a
measurement on six. For a store whose rows the workers build (the SQL stores), one worker on every core is
enough: the driver then only inserts them."""

PREPARED_AT_ONCE = 256
"""Trials whose prepared spans the driver stores in one write (docs/loop.md, "Traced trials": larger is cheaper)."""

PREPARED_WAIT = 2.0
"""Seconds at most a finished trial's spans wait for others before they are stored, as its row does."""


class LocalTrials:
    """The local executor's side of a replay: `run` one trial of a ticket, as `RayTrials.run` does on Ray; with
    ``rows``, `run_row` has the worker make the trial's stored row."""

    def __init__(
        self,
        processes: WorkerProcesses,
        profile: int,
        runtime: passhat.Passhat | None,
        owned: bool,
        rows: RowSpec | None = None,
        export: WorkerPreparedExport | None = None,
    ) -> None:
        self.processes = processes
        self._profile = profile
        self.runtime = runtime
        self._owned = owned
        self.rows = rows
        # ``export``: the workers prepare the trials' spans for this exporter (`spans_prepared_in_workers`), and
        # they are handed to it together, `PREPARED_AT_ONCE` trials' worth at a time.
        self._export = export
        self._prepared: list[Any] = []
        self._stored_at = time.monotonic()

    @classmethod
    async def open(
        cls,
        domains: Mapping[str, Domain],
        agent: AgentFactory,
        config: RunConfig,
        runtime: passhat.Passhat | None,
        *,
        workers: int,
        concurrency: int,
        seed: int,
        size: str,
        processes: WorkerProcesses | None = None,
        rows: RowSpec | None = None,
    ) -> LocalTrials:
        """Workers for these trials (``processes`` when given, else started now); `NotSendableError` when the
        agent, a domain or the trace settings cannot travel (nothing is left running then). ``rows``: the
        trials are a replay run's, and the workers send back their stored rows (`run_row`)."""
        export = spans_prepared_in_workers(runtime, workers) if rows is not None else None
        prepare = None if export is None else export.prepare_in_workers()
        profile = dataclasses.replace(profile_for(agent, config, runtime), rows=rows, prepare_spans=prepare)
        sendable(profile)  # before starting anything
        owned = processes is None
        if processes is None:
            processes = await WorkerProcesses(
                domains, workers=workers, concurrency=concurrency, seed=seed, size=size
            ).start()
        try:
            number = await processes.profile(profile)
        except BaseException:
            if owned:
                processes.close()
            raise
        return cls(processes, number, runtime, owned, rows, export)

    @property
    def slots(self) -> int:
        return self.processes.slots

    async def run(self, item: ReplayTicket, attempt: int) -> tuple[TrialResult, tuple[str, ...]]:
        answer, lost = await self.processes.run(self._profile, item, attempt)
        if self.runtime is not None:
            from passhat.collector.replay._relay import relay

            relay(self.runtime, answer.spans)
        return answer.result, lost

    async def run_row(self, item: ReplayTicket, attempt: int) -> TrialRow:
        """One trial of a ticket as its stored row, made by the worker that ran it (opened with ``rows``)."""
        if self.rows is None:
            raise TypeError("LocalTrials.run_row: these trials were opened without rows; call run")
        row, spans = await self.processes.run_row(self._profile, item, attempt, self.rows)
        if isinstance(spans, Prepared) and self._export is not None:
            self._prepared.append(spans.spans)
            if len(self._prepared) >= PREPARED_AT_ONCE or time.monotonic() - self._stored_at > PREPARED_WAIT:
                self._export_prepared()
        elif self.runtime is not None and isinstance(spans, tuple):
            from passhat.collector.replay._relay import relay

            relay(self.runtime, spans)
        return row

    def _export_prepared(self) -> None:
        prepared, self._prepared = self._prepared, []
        self._stored_at = time.monotonic()
        if prepared and self._export is not None:
            self._export.export_prepared(prepared)

    def close(self) -> None:
        """Store the spans prepared and not stored yet; stop the workers if these trials started them."""
        try:
            self._export_prepared()
        finally:
            if self._owned:
                self.processes.close()


def profile_for(agent: AgentFactory, config: RunConfig, runtime: passhat.Passhat | None) -> TrialProfile:
    """The profile of trials run by ``agent`` under ``config``, traced as ``runtime`` would (if given)."""
    if runtime is None:
        return TrialProfile(agent, config)
    key = runtime.redactor.key
    return TrialProfile(agent, config, RuntimeSettings.of(runtime), None if key is None else key.secret())


def spans_prepared_in_workers(runtime: passhat.Passhat | None, workers: int) -> WorkerPreparedExport | None:
    """The exporter whose spans the workers prepare (`prepared_export`), when the driver has no core of its own:
    one worker on every core, or more. For a store that takes spans rather than rows built elsewhere
    (`WorkerPreparedExport.builds_rows`), from `SPANS_PREPARED_FROM` workers.

    Storing a traced trial's spans in the driver (rebuilding what the worker sent, converting it to the
    collector's rows, writing them) takes it about 0.6 ms of CPU a trial more than an untraced trial, on the one
    process that writes the store. Where the workers build the SQL store's rows, the driver unpickles and inserts
    them: about 0.3 ms less of its CPU a trial, for about 0.1 ms more of a worker's, measured on two cores with two
    workers (docs/loop.md, "Traced trials"). While the driver has a core to itself (fewer workers than cores), it
    prepares them: the workers' cores are then the replay's bound."""
    if runtime is None:
        return None
    export = prepared_export(runtime)
    if export is None:
        return None
    enough = default_workers() if export.builds_rows() else max(SPANS_PREPARED_FROM, default_workers())
    return export if workers >= enough else None
