"""A replay run: sample a period's production tickets, replay each as k sandbox trials, keep every trial.

A run records its parameters (`RunParams`: agent, version, k, the sample) and writes trials to the store as they
finish, so a run that was interrupted resumes where it stopped: calling `replay_period` again with the same
settings finds the unfinished run and runs only the trials it lacks. Planning (which run, which tickets, which
trials) is `_plan`; running and keeping the trials is `_trials`, on `_execute`'s executors (worker processes, Ray,
or this process).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import passhat
from passhat.collector.replay._adapters import RowLookup, ScenarioAdapter, adapters_for
from passhat.collector.replay._execute import EarlyWorkers
from passhat.collector.replay._intent import inferred_intents, intent_inference
from passhat.collector.replay._plan import (
    check_chosen,
    choose_tickets,
    design_of,
    find_resumable,
    find_reusable,
    has_production_tickets,
    nothing_to_replay,
    prepare_tickets,
)
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._processes import WorkerProcesses
from passhat.collector.replay._settings import AgentSpec, ProgressCallback, ReplaySettings
from passhat.collector.replay._trials import heap_frozen, run_stored_trials
from passhat.collector.store import NotReplayable, Period, ReplayRun, RunParams, Store, TrialRow
from passhat.sandbox import Domain, load_domain


@dataclass
class ReplayOutcome:
    """What a replay run did: the run, all its trials, the tickets it could not replay, and the population."""

    run: ReplayRun
    trials: list[TrialRow]
    not_replayable: list[NotReplayable]
    population: dict[str, int]
    resumed: bool
    ran: int
    reused: bool = False  # a finished run with the same settings: its trials were kept, none re-run
    notes: list[str] = field(default_factory=list)  # how the trials ran, when not as configured (one core: why)

    def __repr__(self) -> str:
        """The run and how many trials, not every trial: Python 3.11's `asyncio.run` formats the repr of the
        result its main task returned as it ends, and the full one of a replay's outcome read back every trial's
        details (a second of CPU and 10 MB of text at 1,800 trials, each time `asyncio.run(replay_period(...))`
        returned)."""
        return (
            f"ReplayOutcome(run={self.run.run_id!r}, k={self.run.k}, status={self.run.status!r}, "
            f"trials={len(self.trials)}, ran={self.ran}, not_replayable={len(self.not_replayable)}, "
            f"resumed={self.resumed}, reused={self.reused}, notes={self.notes!r})"
        )


def _reused(store: Store, project: str, run: ReplayRun, progress: ProgressCallback | None) -> ReplayOutcome:
    trials = store.list_trials(project, run.run_id)
    params = RunParams.of(run)
    if progress is not None:
        progress(len(trials), len(trials))
    return ReplayOutcome(run, trials, list(params.not_replayable), dict(params.population), False, 0, reused=True)


def run_params(
    period: Period, agent: AgentSpec, settings: ReplaySettings, same_tickets_as: ReplayRun | None = None
) -> RunParams:
    """The parameters that make a run of ``period`` what it is (its identity), before its tickets are chosen."""
    return RunParams(
        period=period.name,
        k=settings.k,
        trials=settings.trials_per_ticket,
        agent=agent.label,
        agent_version=agent.version,
        simulated=agent.simulated,
        tickets_per_task_type=settings.tickets_per_task_type,
        sizes=dict(settings.sizes),
        seed=settings.seed,
        size=settings.size,
        task_types=tuple(sorted(settings.task_types)),
        design=design_of(settings.k, settings.stop_early, settings.min_trials),
        compare_to=None if same_tickets_as is None else same_tickets_as.run_id,
    )


async def replay_period(
    store: Store,
    project: str,
    period: Period,
    agent: AgentSpec,
    *,
    domains: Mapping[str, Domain] | None = None,
    adapters: Mapping[str, ScenarioAdapter] | None = None,
    settings: ReplaySettings | None = None,
    runtime: passhat.Passhat | None = None,
    pool: SandboxPool | None = None,
    progress: ProgressCallback | None = None,
    exploratory: Sequence[str] = (),
    fresh: bool = False,
    same_tickets_as: ReplayRun | None = None,
    processes: WorkerProcesses | None = None,
) -> ReplayOutcome:
    """Sample the period's production tickets per task type and replay each as trials of ``agent``.

    Each sampled ticket gets ``settings.trials_per_ticket`` trials. ``domains`` are the sandbox domains tickets
    may belong to (default: retail); ``adapters`` add adapters for your own domains. Trials are traced through
    ``runtime`` (as ``passhat.source = sandbox``) when given. ``exploratory`` says why the run is a one-off
    (settings other than the configured ones): such a run never becomes the period's figures unless promoted.
    A finished run with the same settings is reused (no trial re-runs) unless ``fresh``; an interrupted one
    is resumed. ``same_tickets_as`` replays exactly that run's sampled tickets (a paired comparison).
    Trials run in worker processes, one per core (``settings.workers``), or in ``processes`` when given.
    """
    settings = settings or ReplaySettings()
    domains = dict(domains) if domains is not None else {"retail": load_domain("retail")}
    own_pool = pool is None
    active_pool = pool or SandboxPool(seed=settings.seed, size=settings.size)

    def lookup_in(domain: Domain) -> RowLookup:
        return lambda table, key: active_pool.base(domain).initial.get(table, dict(key))

    lookups = {name: lookup_in(domain) for name, domain in domains.items()}
    inference = intent_inference(settings, active_pool)
    all_adapters: dict[str, ScenarioAdapter] = {
        **adapters_for(list(domains.values()), lookups, inference=inference),
        **(adapters or {}),
    }
    identity = run_params(period, agent, settings, same_tickets_as)
    if not fresh:
        finished_run = find_reusable(store, project, identity)
        if finished_run is not None:
            return _reused(store, project, finished_run, progress)
    if same_tickets_as is None and not has_production_tickets(store, project, period):
        raise nothing_to_replay(project, period)  # before any worker starts
    # Workers of its own start now and build their templates while this process plans.
    early = (
        EarlyWorkers() if processes is not None else await EarlyWorkers.start(settings, domains, agent.factory, runtime)
    )
    # planning and running: the collector leaves the process's older heap alone; the early workers end with it
    with heap_frozen(), contextlib.closing(early):
        existing = find_resumable(store, project, identity)
        chosen, population, moved = choose_tickets(
            store, project, period, identity, resumed=existing, same_as=same_tickets_as,
            inference=inference, adapters=all_adapters, domains=domains,
        )  # fmt: skip
        check_chosen(store, project, period, identity, chosen, same_tickets_as)
        ready, not_replayable = prepare_tickets(store, project, chosen, all_adapters)
        if existing is None:
            params = dataclasses.replace(
                identity,
                tickets=tuple(t.ticket_id for t in chosen),
                population=population,
                not_replayable=tuple(not_replayable),
                exploratory=tuple(exploratory),
                intents=inferred_intents(inference, chosen),
                classified_traffic=moved,
            )
            run = ReplayRun(
                run_id=f"run-{period.name}-{uuid.uuid4().hex[:8]}",
                created_at=dt.datetime.now(dt.UTC),
                k=settings.k,
                params=params.to_dict(),
            )
            store.create_replay_run(project, run)
        else:
            run = existing
        try:
            processes = processes or await early.ready()
            stored, written, notes = await run_stored_trials(
                store, project, run.run_id, ready, agent, settings, domains, active_pool,
                runtime=runtime, progress=progress, not_replayable=not_replayable, processes=processes,
            )  # fmt: skip
        finally:
            if own_pool:
                active_pool.close()
    # The run's trials are the ones found stored and the ones written here, in the store's order: not read back.
    trials = sorted([*stored, *written], key=lambda row: (row.ticket_id, row.attempt))
    outcome = ReplayOutcome(run, trials, not_replayable, population, existing is not None, len(written))
    outcome.notes.extend(notes)
    return outcome
