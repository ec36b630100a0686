"""A suite run: every chosen task of a frozen suite version run k times by one agent, each trial in the store.

A suite run is a replay run of its own kind (``params["suite"]`` names the version, its content hash, the
domains and task types chosen): no period, no sampling, never a period's official figures. It runs through the
replay's execution path (worker processes on every core, or Ray; the fixed or the curtailed design; harness
retries), writes trials as they finish, and resumes: the same agent, k, design and selection finds the
unfinished run and runs only the trials it lacks, and a finished one is reused (not one whose trials were all
lost to the harness: it measured nothing).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import passhat
from passhat.collector.replay import (
    AgentSpec,
    ProgressCallback,
    ReplaySettings,
    ReplayTicket,
    lost_to_the_harness,
    run_tickets,
)
from passhat.collector.store import ReplayRun, RunDesign, RunParams, Store, TrialRow
from passhat.collector.suite._tasks import SUITE_VERSION, Suite, SuiteError, load_suite
from passhat.sandbox import load_domain

SUITE_NOTE = "a suite run: the frozen benchmark's tasks, not a period's production tickets"


@dataclass(frozen=True)
class SuiteRunSettings:
    """What to run of the suite and how: the version, the selection, k, the design and the executor."""

    version: str = SUITE_VERSION
    domains: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()
    k: int = 20
    stop_early: bool = False
    min_trials: int = 2
    executor: str = "local"
    workers: int = 0
    parallel: int = 8
    ray_address: str = "local"
    ray_workers: int = 0
    label: str = ""
    tasks_per_type: int = 0
    """At most this many tasks of each task type (0: every one): a smaller slice, e.g. for a benchmark."""

    def replay(self, suite: Suite) -> ReplaySettings:
        """The replay settings the execution path takes (the suite's data seed and size)."""
        return ReplaySettings(
            k=self.k, parallel=self.parallel, seed=suite.spec.data_seed, size=suite.spec.size,
            stop_early=self.stop_early, min_trials=self.min_trials, executor=self.executor, workers=self.workers,
            ray_address=self.ray_address, ray_workers=self.ray_workers,
        )  # fmt: skip


@dataclass
class SuiteOutcome:
    """What a suite run did: the run, its trials, whether it resumed or reused one, and how many trials ran."""

    run: ReplayRun
    trials: list[TrialRow]
    resumed: bool
    reused: bool
    ran: int
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        """The run and how many trials, not every trial (as `ReplayOutcome`'s: `asyncio.run` formats it)."""
        return (
            f"SuiteOutcome(run={self.run.run_id!r}, k={self.run.k}, status={self.run.status!r}, "
            f"trials={len(self.trials)}, ran={self.ran}, resumed={self.resumed}, reused={self.reused}, "
            f"notes={self.notes!r})"
        )


def suite_of(run: ReplayRun) -> dict[str, Any] | None:
    """The suite block of a stored run (None when the run is not a suite run)."""
    found = run.params.get("suite")
    return dict(found) if isinstance(found, dict) else None


def design_of(k: int, stop_early: bool, min_trials: int) -> RunDesign:
    return RunDesign.curtailed(k, min_trials) if stop_early else RunDesign.fixed(k)


def _identity(agent: AgentSpec, settings: SuiteRunSettings, suite: Suite) -> dict[str, Any]:
    return {
        "version": suite.version,
        "content_hash": suite.content_hash,
        "domains": sorted(settings.domains),
        "task_types": sorted(settings.task_types),
        "agent": agent.label,
        "agent_version": agent.version,
        "k": settings.k,
        "design": design_of(settings.k, settings.stop_early, settings.min_trials).to_dict(),
        "label": settings.label,
        **({"tasks_per_type": settings.tasks_per_type} if settings.tasks_per_type else {}),
    }


def find_suite_run(store: Store, project: str, identity: dict[str, Any], status: str) -> ReplayRun | None:
    """The newest run of this identity with this status; a finished run whose trials were all lost to the harness
    (`lost_to_the_harness`: it measured nothing) is not one, so the same command runs the suite again."""
    for run in store.list_replay_runs(project, limit=500):
        block = suite_of(run)
        if run.status != status or block is None or block.get("identity") != identity:
            continue
        if status == "finished" and lost_to_the_harness(store, project, run.run_id):
            continue
        return run
    return None


async def run_suite(
    store: Store,
    project: str,
    agent: AgentSpec,
    settings: SuiteRunSettings | None = None,
    *,
    progress: ProgressCallback | None = None,
    runtime: passhat.Passhat | None = None,
    fresh: bool = False,
) -> SuiteOutcome:
    """Run the chosen part of the suite k times with ``agent``; trials are stored (traced through ``runtime``).

    An unfinished run with the same identity (interrupted: Ctrl-C, a crash) is resumed, running only the
    trials it lacks; a finished one is reused unless ``fresh`` (or unless every trial of it was lost to the
    harness: such a run measured nothing, and the suite is run again in a new run)."""
    settings = settings or SuiteRunSettings()
    suite = load_suite(settings.version)
    tasks = suite.select(domains=settings.domains, task_types=settings.task_types)
    if settings.tasks_per_type:
        tasks = [t for t in tasks if int(t.task_id.rsplit("/", 1)[1]) < settings.tasks_per_type]
    if not tasks:
        raise SuiteError("the selection holds no task: check --domains and --task-type")
    identity = _identity(agent, settings, suite)
    if not fresh:
        done = find_suite_run(store, project, identity, "finished")
        if done is not None:
            trials = store.list_trials(project, done.run_id)
            if progress is not None:
                progress(len(trials), len(trials))
            return SuiteOutcome(done, trials, resumed=False, reused=True, ran=0)
    existing = find_suite_run(store, project, identity, "running")
    replay = settings.replay(suite)
    if existing is None:
        params = RunParams(
            period=None, k=settings.k, trials=settings.k, agent=agent.label, agent_version=agent.version,
            simulated=agent.simulated, seed=suite.spec.data_seed, size=suite.spec.size,
            task_types=tuple(sorted(settings.task_types)), design=design_of(settings.k, settings.stop_early,
            settings.min_trials), tickets=tuple(t.task_id for t in tasks), exploratory=(SUITE_NOTE,),
        )  # fmt: skip
        stamp = dt.datetime.now(dt.UTC)
        run = ReplayRun(
            run_id=f"suite-{suite.version}-{stamp:%Y%m%dT%H%M}-{uuid.uuid4().hex[:6]}",
            created_at=stamp,
            k=settings.k,
            params={**params.to_dict(), "suite": {"identity": identity, "tasks": len(tasks)}},
        )
        store.create_replay_run(project, run)
    else:
        run = existing
    ready = [ReplayTicket(t.task_id, t.task_type, t.domain, t.scenario, ()) for t in tasks]
    domains = {name: load_domain(name) for name in sorted({t.domain for t in tasks})}
    ran, notes = await run_tickets(
        store, project, run.run_id, ready, agent, replay, domains, runtime=runtime, progress=progress
    )
    if runtime is not None:
        runtime.flush()
    trials = store.list_trials(project, run.run_id)
    store.finish_replay_run(project, run.run_id, summary={"trials": len(trials), "tasks": len(tasks)})
    run = store.get_replay_run(project, run.run_id) or run
    return SuiteOutcome(run, trials, resumed=existing is not None, reused=False, ran=ran,
                        notes=notes)  # fmt: skip


def suite_runs(store: Store, project: str, run_ids: Sequence[str]) -> list[ReplayRun]:
    """The stored suite runs named, or `SuiteError` saying which one is missing or not a suite run."""
    found = []
    for run_id in run_ids:
        run = store.get_replay_run(project, run_id)
        if run is None:
            raise SuiteError(f"no run {run_id!r} in project {project!r}: `passhat runs list` shows the runs")
        if suite_of(run) is None:
            raise SuiteError(f"run {run_id} is not a suite run (it replayed production tickets or a domain)")
        found.append(run)
    return found


def with_label(run: ReplayRun) -> str:
    """How a suite run is named in a table: its --label, else its agent."""
    block = suite_of(run) or {}
    identity = block.get("identity") or {}
    return str(identity.get("label") or identity.get("agent") or run.run_id)
