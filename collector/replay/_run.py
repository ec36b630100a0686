"""A replay run: sample a period's production tickets, replay each as k sandbox trials, keep every trial.

A run records its configuration (agent, version, k, the sample) and writes trials to the store as they finish,
so a run that was interrupted resumes where it stopped: calling `replay_period` again with the same settings
finds the unfinished run and runs only the trials it lacks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import passhat
from passhat.collector.reliability import is_harness_failure
from passhat.collector.replay._adapters import (
    ReplayTicket,
    RowLookup,
    ScenarioAdapter,
    adapters_for,
    prepare,
    production_attempt,
)
from passhat.collector.replay._intent import (
    INFER_MODES,
    classified_traffic,
    classify_unnamed,
    inferred_intents,
    intent_inference,
)
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._sampling import sample_tickets
from passhat.collector.store import NotReplayable, Period, ReplayRun, Store, TicketRow, TrialRow
from passhat.sandbox import (
    AgentFactory,
    Curtailment,
    Domain,
    DomainError,
    Outcome,
    RunConfig,
    Sandbox,
    TrialResult,
    load_domain,
    run_curtailed,
    run_trial_with_retries,
)
from passhat.sandbox.inference import ModelSettings

ProgressCallback = Callable[[int, int], None]
"""Called with (trials done, trials planned) as the run goes."""


class NothingToReplayError(ValueError):
    """The period has no production tickets in the store (nothing was sampled, no run was created)."""


class ExecutorError(RuntimeError):
    """The executor chosen cannot run the trials (Ray's cluster unreachable, a secret to forward unset...)."""


@dataclass(frozen=True)
class AgentSpec:
    """The agent under test: how to build it per trial, what to call it, and which version it is."""

    factory: AgentFactory
    label: str
    version: str = ""
    simulated: bool = False


@dataclass(frozen=True)
class ReplaySettings:
    """How a period is replayed."""

    k: int = 20
    tickets_per_task_type: int = 20
    sizes: Mapping[str, int] = field(default_factory=dict)
    parallel: int = 8
    seed: int = 0
    size: str = "small"
    flush_every: int = 50
    trials: int | None = None  # trials per ticket (default: k); pass^k is estimated from all of them
    task_types: tuple[str, ...] = ()  # only these task types (default: every one)
    stop_early: bool = False
    min_trials: int = 2
    executor: str = "local"  # "local" (this process) or "ray" (workers of a Ray cluster)
    ray_address: str = "local"  # a running cluster's address ("auto", "ray://head:10001"), or "local" to start one
    ray_workers: int = 0  # worker actors, one CPU each (0: one per CPU of the cluster)
    ray_concurrency: int = 4  # trials in flight per worker
    ray_env: tuple[str, ...] = ()  # driver environment variables given to the workers (by name)
    harness_retries: int = 2  # times a trial the harness broke (infra_error, simulator_error) is run again
    infer_intent: str = "rules"  # how a ticket without a recorded intent gets one: "rules" | "model" | "off"
    intent_model: ModelSettings | None = None  # the model extractor's endpoint ([intent] in passhat.toml)

    def __post_init__(self) -> None:
        if self.infer_intent not in INFER_MODES:
            raise ValueError(f"infer_intent must be one of {', '.join(INFER_MODES)}, got {self.infer_intent!r}")
        if self.infer_intent == "model" and self.intent_model is None:
            raise ValueError("infer_intent = 'model' needs the model's settings ([intent] provider, model, base_url)")
        if self.executor not in ("local", "ray"):
            raise ValueError(f"executor must be 'local' or 'ray', got {self.executor!r}")
        if self.ray_workers < 0 or self.ray_concurrency < 1:
            raise ValueError(
                f"ray_workers must be 0 (one per CPU) or more and ray_concurrency at least 1, got "
                f"{self.ray_workers} and {self.ray_concurrency}"
            )
        if not self.ray_address.strip():
            raise ValueError("ray_address must be 'local' or a Ray cluster's address, got an empty string")
        if self.min_trials < 1:
            raise ValueError(f"min_trials must be at least 1, got {self.min_trials}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.stop_early and self.trials is not None and self.trials > self.k:
            raise ValueError(
                f"stop_early runs at most k ({self.k}) trials per ticket, not {self.trials}: "
                "drop replay.trials or replay.stop_early"
            )
        if self.trials is not None and self.trials < self.k:
            raise ValueError(f"trials per ticket ({self.trials}) must be at least k ({self.k}): pass^k needs k trials")
        if self.tickets_per_task_type < 1:
            raise ValueError(f"tickets per task type must be at least 1, got {self.tickets_per_task_type}")
        if self.parallel < 1:
            raise ValueError(f"parallel must be at least 1, got {self.parallel}")
        if self.harness_retries < 0:
            raise ValueError(f"harness_retries must be 0 or more, got {self.harness_retries}")

    @property
    def trials_per_ticket(self) -> int:
        """How many trials each sampled ticket gets (at least k)."""
        return self.trials if self.trials is not None else self.k


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


def _period_ns(period: Period) -> tuple[int, int]:
    return (
        int(period.start_datetime().timestamp() * 1_000_000_000),
        int(period.end_datetime().timestamp() * 1_000_000_000),
    )


def production_tickets(store: Store, project: str, period: Period, *, page: int = 5000) -> list[TicketRow]:
    """Every production ticket attempt that started within the period."""
    since, until = _period_ns(period)
    found: list[TicketRow] = []
    offset = 0
    while True:
        batch = store.list_tickets(
            project, source="production", since_ns=since, until_ns=until, limit=page, offset=offset
        )
        found.extend(batch)
        if len(batch) < page:
            return found
        offset += page


def _params(period: Period, agent: AgentSpec, settings: ReplaySettings) -> dict[str, Any]:
    return {
        "period": period.name,
        "k": settings.k,
        "agent": agent.label,
        "agent_version": agent.version,
        "simulated": agent.simulated,
        "tickets_per_task_type": settings.tickets_per_task_type,
        "sizes": dict(settings.sizes),
        "seed": settings.seed,
        "size": settings.size,
        "trials": settings.trials_per_ticket,
        "task_types": sorted(settings.task_types),
        "design": design(settings),
    }


def design(settings: ReplaySettings) -> dict[str, Any]:
    """The trial design a run used, as stored with it and stated in the report."""
    if not settings.stop_early:
        return {"name": "fixed", "k": settings.k}
    return {"name": "curtailed", "k": settings.k, "min_trials": min(settings.min_trials, settings.k)}


_IDENTITY = (
    "period", "k", "trials", "agent", "agent_version", "tickets_per_task_type", "sizes", "seed", "size", "task_types",
    "compare_to", "design",
)  # fmt: skip
# Runs recorded before `trials`, `task_types` and `design` were kept ran k trials per ticket over every task type.
_OLD_DEFAULTS: dict[str, Any] = {"task_types": [], "compare_to": None}


def _same_identity(run: ReplayRun, params: Mapping[str, Any]) -> bool:
    def value(key: str) -> Any:
        if key == "trials":
            return run.params.get("trials", run.k)
        if key == "design":
            return run.params.get("design", {"name": "fixed", "k": run.k})
        return run.params.get(key, _OLD_DEFAULTS.get(key))

    return all(value(key) == params[key] for key in _IDENTITY)


def find_resumable(store: Store, project: str, params: Mapping[str, Any]) -> ReplayRun | None:
    """The newest unfinished run with the same identity (period, agent, k, trials, sample settings), if any."""
    for run in store.list_replay_runs(project, limit=200):
        if run.status == "running" and _same_identity(run, params):
            return run
    return None


def find_reusable(store: Store, project: str, params: Mapping[str, Any]) -> ReplayRun | None:
    """The newest finished run with the same identity: re-running its period keeps its trials."""
    for run in store.list_replay_runs(project, limit=500):
        if run.status == "finished" and _same_identity(run, params):
            return run
    return None


def runs_for_period(store: Store, project: str, period: str) -> list[ReplayRun]:
    """Finished runs of a period, newest first."""
    return [
        run
        for run in store.list_replay_runs(project, limit=500)
        if run.status == "finished" and run.params.get("period") == period
    ]


def trial_row(run_id: str, agent: AgentSpec, result: TrialResult, *, infra_retries: Sequence[str] = ()) -> TrialRow:
    """The stored form of a graded trial: its row, the check verdict, and its details as the replayed agent.

    ``infra_retries`` say why earlier attempts of this trial were lost to the infrastructure (a worker died); the
    row records them after the harness retries the result carries (`run_trial_with_retries`)."""
    record = result.record
    signature = result.signature
    started = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=result.duration_s)
    return TrialRow(
        run_id=run_id,
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
            agent=agent.label,
            agent_version=agent.version,
            simulated=agent.simulated,
            infra_retries=(*result.harness_retries, *infra_retries),
        ),
    )


class _TrialWriter:
    """Buffers finished trials and writes them in batches, so a crash loses at most one batch in flight."""

    def __init__(self, store: Store, project: str, flush_every: int) -> None:
        self.store, self.project, self.flush_every = store, project, flush_every
        self.pending: list[TrialRow] = []
        self.written: list[TrialRow] = []
        self._last = time.monotonic()

    def add(self, row: TrialRow) -> None:
        self.pending.append(row)
        if len(self.pending) >= self.flush_every or time.monotonic() - self._last > 2.0:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.store.add_trials(self.project, self.pending)
            self.written.extend(self.pending)
            self.pending = []
        self._last = time.monotonic()


def _reused(store: Store, project: str, run: ReplayRun, progress: ProgressCallback | None) -> ReplayOutcome:
    trials = store.list_trials(project, run.run_id)
    skipped = [NotReplayable.from_dict(n) for n in run.params.get("not_replayable", [])]
    if progress is not None:
        progress(len(trials), len(trials))
    return ReplayOutcome(run, trials, skipped, dict(run.params.get("population", {})), False, 0, reused=True)


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
) -> ReplayOutcome:
    """Sample the period's production tickets per task type and replay each as trials of ``agent``.

    Each sampled ticket gets ``settings.trials_per_ticket`` trials. ``domains`` are the sandbox domains tickets
    may belong to (default: retail); ``adapters`` add adapters for your own domains. Trials are traced through
    ``runtime`` (as ``passhat.source = sandbox``) when given. ``exploratory`` says why the run is a one-off
    (settings other than the configured ones): such a run never becomes the period's figures unless promoted.
    A finished run with the same settings is reused (no trial re-runs) unless ``fresh``; an interrupted one
    is resumed. ``same_tickets_as`` replays exactly that run's sampled tickets (a paired comparison).
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
    params = _params(period, agent, settings)
    params["compare_to"] = None if same_tickets_as is None else same_tickets_as.run_id
    if not fresh:
        finished_run = find_reusable(store, project, params)
        if finished_run is not None:
            return _reused(store, project, finished_run, progress)
    existing = find_resumable(store, project, params)
    tickets = production_tickets(store, project, period)
    population: dict[str, int] = {}
    moved: dict[str, dict[str, int]] = {}
    if existing is not None:
        chosen_ids = list(existing.params.get("tickets", []))
        by_id = {t.ticket_id: t for t in tickets}
        chosen = [by_id[i] for i in chosen_ids if i in by_id]
        population = dict(existing.params.get("population", {}))
    elif same_tickets_as is not None:
        by_id = {t.ticket_id: t for t in tickets}
        chosen = [by_id[i] for i in same_tickets_as.params.get("tickets", []) if i in by_id]
        population = dict(same_tickets_as.params.get("population", {}))
        moved = dict(same_tickets_as.params.get("classified_traffic") or {})
    else:
        if inference is not None:
            known = {name for adapter in all_adapters.values() for name in adapter.task_types()}
            classified = classify_unnamed(store, project, tickets, known, domains, inference)
            moved = classified_traffic(tickets, classified)
            tickets = [replace(t, task_type=classified.get(t.ticket_id, t.task_type)) for t in tickets]
        if settings.task_types:
            tickets = [t for t in tickets if t.task_type in settings.task_types]
        samples = sample_tickets(tickets, size=settings.tickets_per_task_type, sizes=settings.sizes)
        chosen = [t for sample in samples.values() for t in sample.tickets]
        population = {name: sample.population for name, sample in samples.items()}

    earlier = existing or same_tickets_as
    if earlier is not None:  # tickets the earlier sampling classified keep the task type it gave them
        given = {tid: str(found.get("task_type") or "") for tid, found in (earlier.params.get("intents") or {}).items()}
        chosen = [replace(t, task_type=given[t.ticket_id]) if given.get(t.ticket_id) else t for t in chosen]
    if not chosen:
        raise NothingToReplayError(
            f"no production tickets of {period.name} in project {project!r}: nothing to replay "
            f"(is the agent sending traces to this collector, with passhat.ticket(...)?)"
        )
    ready: list[ReplayTicket] = []
    not_replayable: list[NotReplayable] = []
    for ticket in chosen:
        detail = store.get_ticket(project, ticket.ticket_id, source="production")
        attempt = production_attempt(detail) if detail is not None else None
        if attempt is not None and attempt.task_type != ticket.task_type:  # classified by intent inference
            attempt = replace(attempt, task_type=ticket.task_type)
        prepared = prepare(attempt or ticket, detail, all_adapters)
        if isinstance(prepared, NotReplayable):
            not_replayable.append(prepared)
        else:
            ready.append(prepared)

    if existing is None:
        run = ReplayRun(
            run_id=f"run-{period.name}-{uuid.uuid4().hex[:8]}",
            created_at=dt.datetime.now(dt.UTC),
            k=settings.k,
            params={
                **params,
                "tickets": [t.ticket_id for t in chosen],
                "population": population,
                "not_replayable": [n.to_dict() for n in not_replayable],
                "exploratory": list(exploratory),
                "intents": inferred_intents(inference, chosen),
                "classified_traffic": moved,
            },
        )
        store.create_replay_run(project, run)
    else:
        run = existing
    stored = store.list_trials(project, run.run_id)
    done = {(t.ticket_id, t.attempt) for t in stored}
    todo = [(t, a) for t in ready for a in range(settings.trials_per_ticket) if (t.ticket_id, a) not in done]

    writer = _TrialWriter(store, project, settings.flush_every)
    config = RunConfig(parallel=settings.parallel, run_id=run.run_id, harness_retries=settings.harness_retries)
    remote = None
    if settings.executor == "ray" and todo:
        from passhat.collector.replay._ray import RayTrials  # Ray is imported only when chosen

        remote = RayTrials(settings, domains, agent.factory, config, runtime)
    width = settings.parallel if remote is None else remote.slots
    limit = asyncio.Semaphore(width)
    # Under the curtailed design the total is an upper bound: tickets settle early, and the bar jumps.
    total, finished = len(done) + len(todo), len(done)
    if progress is not None:
        progress(finished, total)

    async def one(attempt: int, sandbox: Sandbox, ticket: ReplayTicket) -> TrialRow:
        nonlocal finished
        lost: tuple[str, ...] = ()
        if remote is None:
            async with limit:
                result = await run_trial_with_retries(
                    sandbox, ticket.scenario, attempt, agent.factory, config=config, runtime=runtime
                )
        else:  # a worker runs it on its own copy of the same template
            result, lost = await remote.run(ticket, attempt)
        row = trial_row(run.run_id, agent, result, infra_retries=lost)
        writer.add(row)
        finished += 1
        if progress is not None:
            progress(finished, total)
        return row

    try:
        if settings.stop_early:
            await _replay_curtailed(ready, stored, settings, domains, active_pool, one, not_replayable, width)
        elif remote is None:
            for item in ready:
                attempts = [a for t, a in todo if t is item]
                if not attempts:
                    continue
                sandbox = _sandbox_for(item, domains, active_pool, not_replayable)
                if sandbox is None:
                    continue
                try:
                    await asyncio.gather(*(one(a, sandbox, item) for a in attempts))
                finally:
                    active_pool.release(sandbox)
        else:
            await _replay_remote(ready, todo, domains, active_pool, one, not_replayable)
        writer.flush()
    finally:
        writer.flush()
        if remote is not None:
            remote.close()
        if own_pool:
            active_pool.close()
    trials = store.list_trials(project, run.run_id)
    return ReplayOutcome(run, trials, not_replayable, population, existing is not None, len(writer.written))


async def _replay_curtailed(
    ready: list[ReplayTicket],
    stored: list[TrialRow],
    settings: ReplaySettings,
    domains: Mapping[str, Domain],
    pool: SandboxPool,
    one: Callable[[int, Sandbox, ReplayTicket], Awaitable[TrialRow]],
    not_replayable: list[NotReplayable],
    width: int,
) -> None:
    """Replay tickets under the curtailed design, ``width`` tickets at a time (each one's attempts in order)."""
    known: dict[str, dict[int, Outcome]] = {}
    for row in stored:
        known.setdefault(row.ticket_id, {})[row.attempt] = _outcome(row)
    curtailment = Curtailment(min_trials=settings.min_trials)

    async def ticket(item: ReplayTicket) -> None:
        sandbox = _sandbox_for(item, domains, pool, not_replayable)
        if sandbox is None:
            return

        async def attempt(a: int) -> Outcome:
            return _outcome(await one(a, sandbox, item))

        try:
            await run_curtailed(attempt, settings.k, curtailment, known=known.get(item.ticket_id))
        finally:
            pool.release(sandbox)

    # Attempts after the first min_trials run one at a time, so tickets run side by side to keep the workers busy.
    for start in range(0, len(ready), width):
        await asyncio.gather(*(ticket(item) for item in ready[start : start + width]))


async def _replay_remote(
    ready: list[ReplayTicket],
    todo: list[tuple[ReplayTicket, int]],
    domains: Mapping[str, Domain],
    pool: SandboxPool,
    one: Callable[[int, Sandbox, ReplayTicket], Awaitable[TrialRow]],
    not_replayable: list[NotReplayable],
) -> None:
    """The fixed design on workers: every ticket's trials queued at once, the workers' free slots taking them.

    Whether a ticket's rows fit its sandbox is settled here first (the workers lay the same rows over the same
    template), so an unfit ticket is noted exactly as a local replay notes it and never sent."""
    attempts: dict[str, list[int]] = {}
    for item, attempt in todo:
        attempts.setdefault(item.ticket_id, []).append(attempt)
    sent: list[Awaitable[TrialRow]] = []
    for item in ready:
        if item.ticket_id not in attempts:
            continue
        sandbox = _sandbox_for(item, domains, pool, not_replayable)
        if sandbox is None:
            continue
        pool.release(sandbox)
        sent.extend(one(a, sandbox, item) for a in attempts[item.ticket_id])
    await asyncio.gather(*sent)


def _sandbox_for(
    item: ReplayTicket, domains: Mapping[str, Domain], pool: SandboxPool, not_replayable: list[NotReplayable]
) -> Sandbox | None:
    """The sandbox a ticket's trials start from, or None (and the ticket noted) when its rows do not fit."""
    domain = domains.get(item.domain) or load_domain(item.domain)
    try:
        return pool.for_ticket(domain, item.images)
    except DomainError as exc:  # the captured rows do not fit the sandbox's tables
        not_replayable.append(
            NotReplayable(
                item.ticket_id,
                item.task_type,
                f"its captured rows cannot be laid over the {domain.name} sandbox: {exc}",
                "make the sandbox domain's tables match the production schema the agent writes to",
            )
        )
        return None


def _outcome(row: TrialRow) -> Outcome:
    return None if is_harness_failure(row) else row.passed
