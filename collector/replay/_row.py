"""A graded trial as the store keeps it: built where the trial ran (a worker process), so the driver only writes.

A replay's trials run in worker processes; each sends back its trial's stored row (`TrialRow`, its details'
JSON document built) rather than the whole graded result, which the driver would unpickle, convert and encode
again, serially, for every trial. `RowSpec` says what a row needs beyond the trial: the run and the replayed agent.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from passhat.collector.store import TrialRow
from passhat.sandbox import TrialResult


@dataclass(frozen=True)
class RowSpec:
    """The run a trial belongs to and the replayed agent it is recorded as (`AgentSpec` without its factory)."""

    run_id: str
    agent: str
    agent_version: str
    simulated: bool


def row_of(spec: RowSpec, result: TrialResult, *, infra_retries: Sequence[str] = ()) -> TrialRow:
    """The stored form of a graded trial: its row, the check verdict, and its details as the replayed agent.

    ``infra_retries`` say why earlier attempts of this trial were lost to the infrastructure (a worker died); the
    row records them after the harness retries the result carries (`run_trial_with_retries`)."""
    record = result.record
    signature = result.signature
    started = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=result.duration_s)
    return TrialRow(
        run_id=spec.run_id,
        ticket_id=result.scenario.scenario_id,
        task_type=result.scenario.task_type,
        attempt=result.attempt,
        passed=result.passed,
        termination_reason=record.termination_reason,
        started_at=started,
        duration_s=result.duration_s,
        domain=result.scenario.domain,
        trace_id=result.trace_id,
        failure_label=None if signature is None else signature.label,
        failure_evidence=None if signature is None else signature.evidence,
        verdict=record.verdict.to_dict(),
        simulator_error=record.simulator_error,
        infra_error=record.infra_error,
        details=dataclasses.replace(
            result.details,
            agent=spec.agent,
            agent_version=spec.agent_version,
            simulated=spec.simulated,
            infra_retries=(*result.harness_retries, *infra_retries),
        ),
    )


def with_lost(row: TrialRow, lost: Sequence[str]) -> TrialRow:
    """The row of a trial that lost workers before this run of it finished: the losses recorded after the
    harness retries (as `row_of` records them)."""
    if not lost:
        return row
    details = dataclasses.replace(row.details, infra_retries=(*row.details.infra_retries, *lost))
    return dataclasses.replace(row, details=details)
