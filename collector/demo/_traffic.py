"""A simulated production agent: the ReferenceAgent serving a shipped domain's tickets, traced with the SDK.

This is how the demo produces "real" traffic without a model: tickets arrive over a week with a volume skewed
across task types, each handled once by the agent against the domain's backend, and each traced exactly as an
instrumented production agent would be (source = production), with its intent and the before-images of the rows
it changed. It is a simulation and is labelled as one wherever its figures appear.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import datetime as dt
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import passhat
from passhat.collector.replay import ReplayTicket, WorkerProcesses, profile_for, relay
from passhat.collector.store import Period
from passhat.sandbox import AgentFactory, RunConfig, Sandbox, Scenario, run_trial

_ticket_start: contextvars.ContextVar[tuple[int, int]] = contextvars.ContextVar("passhat_demo_ticket_start")


def simulated_clock() -> int:
    """Nanoseconds on the simulated calendar: the ticket's arrival time plus the real time spent since."""
    try:
        arrival, started = _ticket_start.get()
    except LookupError:
        return time.time_ns()
    return arrival + (time.monotonic_ns() - started)


@dataclass(frozen=True)
class TrafficPlan:
    """Which tickets arrive when: ``count`` tickets over ``period``, task types weighted by ``weights``."""

    period: Period
    count: int
    weights: Mapping[str, float]
    seed: int = 0
    prefix: str = "T"


@dataclass(frozen=True)
class Arrival:
    """One production ticket: its id, when it arrived, and the scenario behind it."""

    ticket_id: str
    at: dt.datetime
    scenario: Scenario


def skewed_weights(task_types: Sequence[str], *, seed: int = 0, exponent: float = 1.1) -> dict[str, float]:
    """A Zipf-like traffic mix: a few task types take most tickets, as in real support queues."""
    order = list(task_types)
    random.Random(f"mix/{seed}").shuffle(order)
    return {name: 1.0 / (rank + 1) ** exponent for rank, name in enumerate(order)}


def plan_arrivals(plan: TrafficPlan, scenarios: Mapping[str, Sequence[Scenario]]) -> list[Arrival]:
    """Deterministic arrivals: each ticket draws a task type by weight, one of its scenarios, and a time."""
    rng = random.Random(f"traffic/{plan.seed}/{plan.period.name}")
    names = [name for name in plan.weights if scenarios.get(name)]
    if not names:
        raise ValueError("no task type in the traffic mix has scenarios to draw from")
    weights = [plan.weights[name] for name in names]
    start = plan.period.start_datetime()
    span = (plan.period.end_datetime() - start).total_seconds()
    arrivals = []
    for index in range(plan.count):
        task_type = rng.choices(names, weights)[0]
        base = rng.choice(scenarios[task_type])
        ticket_id = f"{plan.prefix}-{plan.period.name}-{index:05d}"
        at = start + dt.timedelta(seconds=rng.uniform(0, span))
        # The ticket is its own case: its id decides how hard it is for the simulated agent.
        arrivals.append(Arrival(ticket_id, at, dataclasses.replace(base, scenario_id=ticket_id)))
    return sorted(arrivals, key=lambda a: a.at)


async def serve_traffic(
    sandbox: Sandbox,
    arrivals: Sequence[Arrival],
    agent: AgentFactory,
    runtime: passhat.Passhat,
    *,
    parallel: int = 16,
    progress: Callable[[int], None] | None = None,
    processes: WorkerProcesses | None = None,
) -> int:
    """Handle every arrival once, as production; returns how many tickets ended in a failed check.

    With ``processes`` the tickets are handled in those worker processes (every core), each trace placed at its
    ticket's arrival time and sent through ``runtime`` as if handled here."""
    limit = asyncio.Semaphore(parallel)
    config = RunConfig(parallel=parallel)
    failed = 0
    if processes is not None:
        return await _serve_in_workers(processes, arrivals, agent, config, runtime, progress)

    async def handle(arrival: Arrival) -> None:
        nonlocal failed
        async with limit:
            _ticket_start.set((int(arrival.at.timestamp() * 1e9), time.monotonic_ns()))
            result = await run_trial(
                sandbox,
                arrival.scenario,
                0,
                agent,
                config=config,
                runtime=runtime,
                ticket_id=arrival.ticket_id,
                production=True,
            )
        failed += not result.passed
        if progress is not None:
            progress(1)

    await asyncio.gather(*(handle(a) for a in arrivals))
    return failed


async def _serve_in_workers(
    processes: WorkerProcesses,
    arrivals: Sequence[Arrival],
    agent: AgentFactory,
    config: RunConfig,
    runtime: passhat.Passhat,
    progress: Callable[[int], None] | None,
) -> int:
    profile = await processes.profile(profile_for(agent, config, runtime))
    failed = 0

    async def handle(arrival: Arrival) -> None:
        nonlocal failed
        scenario = arrival.scenario
        item = ReplayTicket(arrival.ticket_id, scenario.task_type, scenario.domain, scenario, ())
        answer, _ = await processes.run(profile, item, 0, ticket_id=arrival.ticket_id, production=True)
        roots = [span for span in answer.spans if span.parent is None and span.start_time is not None]
        if roots:  # the trace as the simulated clock would have stamped it: from the ticket's arrival
            shift = int(arrival.at.timestamp() * 1e9) - min(span.start_time or 0 for span in roots)
            relay(runtime, [span.shifted(shift) for span in answer.spans])
        failed += not answer.result.passed
        if progress is not None:
            progress(1)

    await asyncio.gather(*(handle(a) for a in arrivals))
    return failed
