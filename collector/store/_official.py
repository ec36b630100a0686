"""Which run of a period is the period's: the official run, exploratory one-offs, and promotion.

The rule, stated once: **the official run of a (project, period) is the finished run made official most
recently.** A run with the configured settings is made official when it finishes; a one-off run (settings other
than the configured ones: fewer tickets, another k, one task type, another agent) is *exploratory* and is never
official unless `promote_run` makes it so (at the time of promotion). Only the official run gives the period's
report figures, its alerts and the baselines of later periods.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from passhat.collector.store._interface import Store, StoreError
from passhat.collector.store._period import parse_period
from passhat.collector.store._rows import ReplayRun
from passhat.collector.store._run_params import RunParams

RunRole = Literal["official", "exploratory", "superseded", "running", "failed"]


def exploratory_reasons(run: ReplayRun) -> list[str]:
    """Why the run is a one-off (empty for a run with the configured settings)."""
    return list(RunParams.of(run).exploratory)


def promoted_at(run: ReplayRun) -> dt.datetime | None:
    """When the run was promoted to official (None if it never was)."""
    text = (run.summary or {}).get("promoted_at")
    return dt.datetime.fromisoformat(text) if isinstance(text, str) else None


def official_since(run: ReplayRun) -> dt.datetime | None:
    """When the run became official: its promotion, else (with the configured settings) when it finished."""
    if run.status != "finished":
        return None
    promoted = promoted_at(run)
    if promoted is not None:
        return promoted
    if exploratory_reasons(run):
        return None
    return run.finished_at or run.created_at


def period_runs(store: Store, project: str, period: str, *, limit: int = 1000) -> list[ReplayRun]:
    """Every run of a period (any status), newest first."""
    return [run for run in store.list_replay_runs(project, limit=limit) if RunParams.of(run).period == period]


def official_run(store: Store, project: str, period: str) -> ReplayRun | None:
    """The period's official run (see the module docstring), or None when no run qualifies."""
    return choose_official(period_runs(store, project, period))


def latest_official_run(store: Store, project: str, *, limit: int = 500) -> ReplayRun | None:
    """The official run of the latest period (by its dates) that has one: what the project's current figures
    are (the collector's /metrics gauges). Runs of no period (generated scenarios, suites) never are."""
    by_period: dict[str, list[ReplayRun]] = {}
    for run in store.list_replay_runs(project, limit=limit):
        period = RunParams.of(run).period
        if period:
            by_period.setdefault(period, []).append(run)
    officials = [(name, chosen) for name, runs in by_period.items() if (chosen := choose_official(runs)) is not None]
    if not officials:
        return None
    return max(officials, key=lambda pair: _period_order(*pair))[1]


def _period_order(name: str, run: ReplayRun) -> tuple[dt.date, dt.date]:
    """A period's place in time: its end, then its start. A `since-2026-11-20` period ran up to its run."""
    try:
        period = parse_period(name)
    except ValueError:
        made = run.created_at.astimezone(dt.UTC).date() + dt.timedelta(days=1)
        try:
            return (made, dt.date.fromisoformat(name.removeprefix("since-")[:10]))
        except ValueError:
            return (made, made)
    return (period.end, period.start)


def choose_official(runs: Sequence[ReplayRun]) -> ReplayRun | None:
    """Of one period's runs, the one made official most recently."""
    ranked = [(since, run) for run in runs if (since := official_since(run)) is not None]
    if not ranked:
        return None
    return max(ranked, key=lambda pair: (pair[0], pair[1].created_at))[1]


def role_of(run: ReplayRun, official: ReplayRun | None) -> RunRole:
    """How a run stands in its period: official, exploratory, superseded (was official), running or failed."""
    if run.status == "running":
        return "running"
    if run.status != "finished":
        return "failed"
    if official is not None and run.run_id == official.run_id:
        return "official"
    return "superseded" if official_since(run) is not None else "exploratory"


@dataclass(frozen=True)
class RunListing:
    """One row of `passhat runs list`."""

    run: ReplayRun
    role: RunRole

    def to_dict(self) -> dict[str, Any]:
        params = RunParams.of(self.run)
        return {
            "run_id": self.run.run_id,
            "period": params.period,
            "role": self.role,
            "status": self.run.status,
            "k": self.run.k,
            "trials_per_ticket": params.trials,
            "tickets": len(params.tickets),
            "agent": params.agent,
            "agent_version": params.agent_version,
            "exploratory": list(params.exploratory),
            "compare_to": params.compare_to,
            "created_at": self.run.created_at.isoformat(),
            "finished_at": None if self.run.finished_at is None else self.run.finished_at.isoformat(),
            "promoted_at": None if (p := promoted_at(self.run)) is None else p.isoformat(),
        }


def list_runs(store: Store, project: str, *, period: str | None = None, limit: int = 200) -> list[RunListing]:
    """Runs newest first with their role in their period."""
    runs = store.list_replay_runs(project, limit=limit)
    if period is not None:
        runs = [run for run in runs if RunParams.of(run).period == period]
    by_period: dict[str, list[ReplayRun]] = {}
    for run in runs:
        by_period.setdefault(str(RunParams.of(run).period), []).append(run)
    officials = {name: choose_official(members) for name, members in by_period.items()}
    return [RunListing(run, role_of(run, officials[str(RunParams.of(run).period)])) for run in runs]


def promote_run(store: Store, project: str, run_id: str, *, at: dt.datetime | None = None) -> ReplayRun:
    """Make a finished run its period's official run; returns the run as stored afterwards."""
    run = store.get_replay_run(project, run_id)
    if run is None:
        raise StoreError(f"no replay run {run_id!r} in project {project!r}: `passhat runs list` shows the runs")
    if run.status != "finished":
        raise StoreError(f"run {run_id} is {run.status}, not finished: only a finished run can be promoted")
    if not RunParams.of(run).period:
        raise StoreError(
            f"run {run_id} replayed generated scenarios or graded sessions, not a period's tickets: only a run of "
            "a period (`passhat replay --period P`) can become that period's official run"
        )
    when = (at or dt.datetime.now(dt.UTC)).isoformat()
    summary = {**(run.summary or {}), "promoted_at": when}
    store.finish_replay_run(project, run_id, status="finished", summary=summary, at=run.finished_at)
    promoted = store.get_replay_run(project, run_id)
    assert promoted is not None
    return promoted


def keep_promotion(previous: Mapping[str, Any] | None, summary: dict[str, Any]) -> dict[str, Any]:
    """A new summary for a run, keeping the promotion recorded in its previous one."""
    if previous and "promoted_at" in previous:
        return {**summary, "promoted_at": previous["promoted_at"]}
    return summary
