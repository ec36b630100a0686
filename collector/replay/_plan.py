"""Planning a replay run: which run it is (new, resumed, or a finished one reused), which tickets, which trials.

Nothing here runs a trial: these functions read the store and decide (`replay_period` calls them in order),
`_execute` runs what they decided.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from passhat.collector.replay._adapters import ReplayTicket, ScenarioAdapter, prepare, production_attempt
from passhat.collector.replay._intent import IntentInference, classified_traffic, classify_unnamed
from passhat.collector.replay._sampling import sample_tickets
from passhat.collector.replay._settings import NothingToReplayError
from passhat.collector.store import (
    NotReplayable,
    Period,
    ReplayRun,
    RunDesign,
    RunParams,
    Store,
    TicketDetail,
    TicketRow,
    TrialRow,
)
from passhat.sandbox import Domain

DETAILS_AT_ONCE = 500
"""Tickets whose details (attempts, spans, tool calls, rows) planning reads in one go."""


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


def has_production_tickets(store: Store, project: str, period: Period) -> bool:
    """Whether any production ticket started within the period (one row read)."""
    since, until = _period_ns(period)
    return bool(store.list_tickets(project, source="production", since_ns=since, until_ns=until, limit=1))


def nothing_to_replay(
    project: str, period: Period, *, task_types: Sequence[str] = (), present: Iterable[str] = ()
) -> NothingToReplayError:
    """The error of a period without production tickets, and what to check. ``task_types``: the task types asked
    for, when the period has tickets but none of those (``present``: the task types it has)."""
    if task_types:
        have = sorted(set(present))
        asked = ", ".join(repr(name) for name in task_types)
        close = [m for name in task_types for m in difflib.get_close_matches(name, have, n=1) if m not in task_types]
        hint = f"; did you mean {', '.join(repr(m) for m in close)}?" if close else ""
        listed = ", ".join(have) if have else "none"
        return NothingToReplayError(
            f"no production tickets of task type {asked} in {period.name} in project {project!r}: nothing to "
            f"replay{hint} (the period's task types: {listed}); check --task-type"
        )
    return NothingToReplayError(
        f"no production tickets of {period.name} in project {project!r}: nothing to replay "
        f"(is the agent sending traces to this collector, with passhat.ticket(...)?)"
    )


def check_chosen(
    store: Store,
    project: str,
    period: Period,
    params: RunParams,
    chosen: Sequence[TicketRow],
    same_as: ReplayRun | None,
) -> None:
    """`NothingToReplayError` when the run has no ticket to replay, or when a task type asked for has none in the
    period (a typo, never dropped silently beside the others); saying which, and what the period (or the compared
    run) has."""
    got = {ticket.task_type for ticket in chosen}
    missing = [name for name in params.task_types if name not in got]
    if missing:
        present = {ticket.task_type for ticket in production_tickets(store, project, period)}
        absent = [name for name in missing if name not in present]
        if not absent and not chosen and same_as is not None:
            raise NothingToReplayError(
                f"run {same_as.run_id} replayed no ticket of task type {', '.join(missing)}: nothing to compare "
                f"(its task types: {', '.join(sorted(RunParams.of(same_as).population))})"
            )
        if absent or not chosen:
            raise nothing_to_replay(project, period, task_types=absent or missing, present=present)
    if not chosen:
        raise nothing_to_replay(project, period)


def find_resumable(store: Store, project: str, params: RunParams) -> ReplayRun | None:
    """The newest unfinished run with the same identity (period, agent, k, trials, sample settings), if any."""
    for run in store.list_replay_runs(project, limit=200):
        if run.status == "running" and RunParams.of(run).same_run_as(params):
            return run
    return None


def lost_to_the_harness(store: Store, project: str, run_id: str) -> bool:
    """Whether every trial of the run was lost to the harness (it has trials, and none speaks about the agent).

    Such a run measured nothing (an agent service that was down, a tool server that would not start): it is
    never reused as a finished run with its settings, so the same command runs it again once the cause is fixed.
    """
    tallies = store.ticket_tallies(project, run_id)
    return not any(t.trials for t in tallies) and any(t.harness_errors for t in tallies)


def find_reusable(store: Store, project: str, params: RunParams) -> ReplayRun | None:
    """The newest finished run with the same identity: re-running its period keeps its trials (a run whose
    trials were all lost to the harness is not reused: see `lost_to_the_harness`)."""
    for run in store.list_replay_runs(project, limit=500):
        if (
            run.status == "finished"
            and RunParams.of(run).same_run_as(params)
            and not lost_to_the_harness(store, project, run.run_id)
        ):
            return run
    return None


def choose_tickets(
    store: Store,
    project: str,
    period: Period,
    params: RunParams,
    *,
    resumed: ReplayRun | None,
    same_as: ReplayRun | None,
    inference: IntentInference | None = None,
    adapters: Mapping[str, ScenarioAdapter] | None = None,
    domains: Mapping[str, Domain] | None = None,
) -> tuple[list[TicketRow], dict[str, int], dict[str, dict[str, int]]]:
    """The run's tickets, each task type's population, and the traffic intent inference classified: a resumed
    run's own, a compared run's, or a new sample (tickets naming no known task type classified first)."""
    tickets = production_tickets(store, project, period)
    earlier = resumed or same_as
    if earlier is not None:
        recorded = RunParams.of(earlier)
        by_id = {t.ticket_id: t for t in tickets}
        chosen = [by_id[i] for i in recorded.tickets if i in by_id]
        # Tickets the earlier sampling classified keep the task type it gave them.
        given = {tid: str(found.get("task_type") or "") for tid, found in recorded.intents.items()}
        chosen = [replace(t, task_type=given[t.ticket_id]) if given.get(t.ticket_id) else t for t in chosen]
        moved = {day: dict(moves) for day, moves in recorded.classified_traffic.items()}
        population = dict(recorded.population)
        if params.task_types:  # a compared run's tickets of the task types asked for only
            chosen = [t for t in chosen if t.task_type in params.task_types]
            population = {name: count for name, count in population.items() if name in params.task_types}
        return chosen, population, moved
    moved = {}
    if inference is not None:
        known = {name for adapter in (adapters or {}).values() for name in adapter.task_types()}
        classified = classify_unnamed(store, project, tickets, known, domains or {}, inference)
        moved = classified_traffic(tickets, classified)
        tickets = [replace(t, task_type=classified.get(t.ticket_id, t.task_type)) for t in tickets]
    if params.task_types:
        tickets = [t for t in tickets if t.task_type in params.task_types]
    samples = sample_tickets(tickets, size=params.tickets_per_task_type, sizes=params.sizes)
    chosen = [t for sample in samples.values() for t in sample.tickets]
    return chosen, {name: sample.population for name, sample in samples.items()}, moved


def prepare_tickets(
    store: Store, project: str, chosen: list[TicketRow], adapters: Mapping[str, ScenarioAdapter]
) -> tuple[list[ReplayTicket], list[NotReplayable]]:
    """Each chosen ticket as a scenario ready to replay, or the reason it cannot be."""
    ready: list[ReplayTicket] = []
    not_replayable: list[NotReplayable] = []
    details: dict[str, TicketDetail] = {}
    ids = [ticket.ticket_id for ticket in chosen]
    for start in range(0, len(ids), DETAILS_AT_ONCE):  # a few queries for many tickets, not five a ticket
        details.update(store.get_tickets(project, ids[start : start + DETAILS_AT_ONCE], source="production"))
    for ticket in chosen:
        detail = details.get(ticket.ticket_id)
        attempt = production_attempt(detail) if detail is not None else None
        if attempt is not None and attempt.task_type != ticket.task_type:  # classified by intent inference
            attempt = replace(attempt, task_type=ticket.task_type)
        prepared = prepare(attempt or ticket, detail, adapters)
        if isinstance(prepared, NotReplayable):
            not_replayable.append(prepared)
        else:
            ready.append(prepared)
    return ready, not_replayable


def trials_left(ready: list[ReplayTicket], stored: list[TrialRow], trials: int) -> list[tuple[ReplayTicket, int]]:
    """The (ticket, attempt) pairs of the run not stored yet."""
    done = {(t.ticket_id, t.attempt) for t in stored}
    return [(t, a) for t in ready for a in range(trials) if (t.ticket_id, a) not in done]


def design_of(k: int, stop_early: bool, min_trials: int) -> RunDesign:
    """The trial design a run uses, as stored with it and stated in the report."""
    return RunDesign.curtailed(k, min_trials) if stop_early else RunDesign.fixed(k)
