"""Per-ticket tallies of a run, built from what a store's aggregate query returns (both stores share this).

A store counts each ticket's trials in SQL (`GROUP BY` on SQL databases, aggregates on ClickHouse) and keeps
the attempt numbers below `MASK_ATTEMPTS` as bit sets in a 64-bit integer; the few tickets with later attempts
are read back trial by trial to complete their bit sets (Python integers have no width).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from passhat.checks import NOT_AGENT_FAULT
from passhat.collector.store._rows import TicketTally, TrialRow

#: Attempts numbered below this fit the 64-bit bit sets an aggregate query builds.
MASK_ATTEMPTS = 62


def tallies_from_rows(
    counted: Iterable[Sequence[object]],
    signatures: Iterable[Sequence[object]],
    later: Mapping[str, Sequence[tuple[int, bool]]] | None = None,
) -> list[TicketTally]:
    """Tallies from the aggregate's rows, ordered by domain, task type and ticket.

    ``counted`` rows are (domain, task_type, ticket_id, trials, passes, attempts, passed, harness_errors);
    ``signatures`` rows (ticket_id, failure_label, count) of counted failed trials; ``later`` the (attempt,
    passed) of counted trials numbered from `MASK_ATTEMPTS` on, per ticket.
    """
    labels: dict[str, dict[str, int]] = {}
    for ticket_id, label, count in signatures:
        if label:
            labels.setdefault(str(ticket_id), {})[str(label)] = int(count)  # type: ignore[call-overload]
    later = later or {}
    found = []
    for domain, task_type, ticket_id, trials, passes, attempts, passed, harness in counted:
        # A store's driver gives str and int mostly (PostgreSQL's SUM a Decimal): convert only what is not.
        ticket = ticket_id if type(ticket_id) is str else str(ticket_id)
        attempts_bits = attempts if type(attempts) is int else int(attempts or 0)  # type: ignore[call-overload]
        passed_bits = passed if type(passed) is int else int(passed or 0)  # type: ignore[call-overload]
        for attempt, ok in later.get(ticket, ()):
            attempts_bits |= 1 << attempt
            if ok:
                passed_bits |= 1 << attempt
        own = labels.get(ticket)
        found.append(
            TicketTally(
                None if domain is None else domain if type(domain) is str else str(domain),
                task_type if type(task_type) is str else str(task_type),
                ticket,
                trials if type(trials) is int else int(trials or 0),  # type: ignore[call-overload]
                passes if type(passes) is int else int(passes or 0),  # type: ignore[call-overload]
                attempts_bits,
                passed_bits,
                harness if type(harness) is int else int(harness or 0),  # type: ignore[call-overload]
                dict(sorted(own.items())) if own else {},
            )
        )
    found.sort(key=lambda t: (t.domain or "", t.task_type, t.ticket_id))
    return found


def tallies_of_trials(trials: Iterable[TrialRow]) -> list[TicketTally]:
    """The same tallies computed from trial rows in memory (the reference the stores' queries are tested on)."""
    rows: dict[str, list[TrialRow]] = {}
    for trial in trials:
        rows.setdefault(trial.ticket_id, []).append(trial)
    found = []
    for ticket_id, group in rows.items():
        counted = [t for t in group if not (t.simulator_error or t.infra_error or t.failure_label in NOT_AGENT_FAULT)]
        attempts = passed = 0
        signatures: dict[str, int] = {}
        for trial in counted:
            attempts |= 1 << trial.attempt
            if trial.passed:
                passed |= 1 << trial.attempt
            elif trial.failure_label:
                signatures[trial.failure_label] = signatures.get(trial.failure_label, 0) + 1
        found.append(
            TicketTally(
                domain=group[0].domain,
                task_type=group[0].task_type,
                ticket_id=ticket_id,
                trials=len(counted),
                passes=sum(t.passed for t in counted),
                attempts=attempts,
                passed=passed,
                harness_errors=len(group) - len(counted),
                signatures=dict(sorted(signatures.items())),
            )
        )
    found.sort(key=lambda t: (t.domain or "", t.task_type, t.ticket_id))
    return found
