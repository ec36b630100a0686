"""Which trace a ticket page shows: the production trace, or one replay attempt's own (stored as `TICKET#N`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from passhat.collector.store import Store, TicketDetail, TrialRow
from passhat.collector.ui._trace import TraceView, trace_view


@dataclass(frozen=True)
class ChosenTrace:
    """The trace a ticket page draws, or why it draws none."""

    view: TraceView | None
    trial: TrialRow | None = None  # the replay attempt the trace belongs to
    missing: str | None = None  # set when the asked-for trace is not stored


def trial_ticket_id(ticket_id: str, attempt: int) -> str:
    """The ticket id a replay attempt's own trace carries (how `run_trial` names it)."""
    return f"{ticket_id}#{attempt}"


def chosen_trace(
    store: Store,
    project: str,
    ticket_id: str,
    trace: str | None,
    detail: TicketDetail | None,
    trials: Sequence[TrialRow],
) -> ChosenTrace:
    """The trace `trace` of this ticket: one of its own attempts, else a replay attempt's trace stored under
    `TICKET#N`; never another attempt's trace in its place. No `trace`: the production trace (else the first)."""
    if detail is not None:
        own = trace_view(detail, trace, fallback=not trace)
        if own is not None:
            return ChosenTrace(own)
    if not trace:
        return ChosenTrace(None)
    trial = next((t for t in trials if t.trace_id == trace), None)
    if trial is None:
        return ChosenTrace(None, missing=f"This ticket has no trace {trace}.")
    stored = store.get_ticket(project, trial_ticket_id(ticket_id, trial.attempt), source="sandbox")
    view = trace_view(stored, trace, fallback=False) if stored is not None else None
    if view is None:
        return ChosenTrace(
            None,
            trial,
            missing=f"No trace stored for attempt {trial.attempt + 1} of run {trial.run_id}: the replay ran without "
            "sending its traces to this collector (its trial row and verdict are stored).",
        )
    return ChosenTrace(view, trial)
