"""From a stored production ticket to a sandbox scenario: the adapter interface, and the shipped domains' adapter.

A ticket can be replayed when the sandbox can rebuild what the customer faced and what they wanted: its domain
and task type, the parameters its check needs (the ticket's ``intent``), and the rows it saw (the before-images
the SDK captured). Anything missing makes the ticket *not replayable*, with the reason, and it is counted in the
report rather than silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from passhat.collector.store import NotReplayable, StateWriteRow, TicketDetail, TicketRow
from passhat.sandbox import Domain, RowImage, Scenario


class NotReplayableError(Exception):
    """This ticket cannot be replayed; the message says why and what would fix it."""


@dataclass(frozen=True)
class ReplayTicket:
    """A sampled ticket ready to replay: its scenario and the rows to lay over the domain's seed."""

    ticket_id: str
    task_type: str
    domain: str
    scenario: Scenario
    images: tuple[RowImage, ...]


class ScenarioAdapter(Protocol):
    """Turns stored production tickets of one domain into sandbox scenarios.

    Implement this for your own backend's domain; passhat ships `DomainAdapter` for its domains.
    `scenario` raises `NotReplayableError` with a reason a person can act on.
    """

    @property
    def domain(self) -> str: ...

    def task_types(self) -> Collection[str]: ...

    def scenario(self, ticket: TicketRow, detail: TicketDetail) -> Scenario: ...

    def images(self, detail: TicketDetail) -> list[RowImage]: ...


def row_images(detail: TicketDetail) -> list[RowImage]:
    """The rows a ticket saw, as they were when it began, from its captured reads and writes (earliest first).

    A read gives the whole row; an update gives the columns it changed, as they were; a delete gives the row it
    removed; an insert means the row did not exist yet. Bulk writes carry no keys and cannot be restored.
    """
    events: list[StateWriteRow] = sorted(
        [*detail.state_reads, *detail.state_writes], key=lambda row: (row.time_ns, row.seq)
    )
    images: list[RowImage] = []
    for event in events:
        if not event.table or not event.key or event.op.startswith("bulk"):
            continue
        if event.op == "read":
            if event.before:
                images.append(RowImage(event.table, event.key, event.before))
        elif event.op == "insert":
            images.append(RowImage(event.table, event.key, None))
        elif event.op == "delete":
            if event.before:
                images.append(RowImage(event.table, event.key, event.before))
        elif event.before:
            images.append(RowImage(event.table, event.key, event.before, partial=True))
    return images


RowLookup = Callable[[str, Mapping[str, Any]], Mapping[str, Any] | None]
"""Reads one row of the domain's seeded data by table and primary key (None when absent)."""

REDACTED = "[REDACTED"


def restore_redacted(intent: Mapping[str, Any], domain: Domain, lookup: RowLookup | None) -> dict[str, Any]:
    """The intent with values the SDK redacted before export (an email, a phone) restored from the seed.

    The SDK never lets personal data leave the agent's process, so a ticket's intent may arrive with
    ``[REDACTED:email]`` in place of the customer's email. The sandbox holds its own synthetic copy of every
    record, so a redacted ``email`` next to a ``customer_id`` is read back from ``customers.email``: any table
    whose single-column primary key is in the intent and which has a column named like the redacted key.
    """
    restored = dict(intent)
    redacted = [key for key, value in intent.items() if isinstance(value, str) and REDACTED in value]
    for key in redacted:
        value = None
        for table in domain.metadata.tables.values():
            primary = [column.name for column in table.primary_key.columns]
            if len(primary) != 1 or primary[0] not in intent or key not in table.c or lookup is None:
                continue
            row = lookup(table.name, {primary[0]: intent[primary[0]]})
            if row is not None and row.get(key) is not None:
                value = row[key]
                break
        if value is None:
            raise NotReplayableError(
                f"the intent's {key!r} was redacted before export and the {domain.name} data cannot restore it"
            )
        restored[key] = value
    return restored


class DomainAdapter:
    """The adapter for a shipped sandbox domain: the scenario comes from the task type and the ticket's intent.

    ``lookup`` reads the domain's seeded rows, to restore intent values the SDK redacted.
    """

    def __init__(self, domain: Domain, *, lookup: RowLookup | None = None) -> None:
        self._domain = domain
        self._lookup = lookup

    @property
    def domain(self) -> str:
        return self._domain.name

    def task_types(self) -> Collection[str]:
        return self._domain.task_types.keys()

    def scenario(self, ticket: TicketRow, detail: TicketDetail) -> Scenario:
        task = self._domain.task_types.get(ticket.task_type)
        if task is None:
            raise NotReplayableError(f"domain {self.domain!r} has no task type {ticket.task_type!r}")
        intent = ticket.intent
        if not intent:
            raise NotReplayableError(
                "no intent was recorded: pass intent={...} to passhat.ticket(...) with what the check needs"
            )
        intent = restore_redacted(intent, self._domain, self._lookup)
        try:
            script = task.script(intent)
            task.check(intent)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            missing = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise NotReplayableError(
                f"the recorded intent lacks what task type {ticket.task_type!r} needs ({missing!s})"
            ) from None
        return Scenario(
            domain=self.domain,
            task_type=ticket.task_type,
            scenario_id=ticket.ticket_id,
            intent=dict(intent),
            script=script,
            expected_write_tables=task.write_tables,
        )

    def images(self, detail: TicketDetail) -> list[RowImage]:
        return row_images(detail)


def prepare(
    ticket: TicketRow, detail: TicketDetail | None, adapters: Mapping[str, ScenarioAdapter]
) -> ReplayTicket | NotReplayable:
    """Pick the ticket's adapter (by its domain, else the one adapter owning its task type) and build its scenario."""
    if detail is None:
        return NotReplayable(ticket.ticket_id, ticket.task_type, "the ticket's spans are no longer in the store")
    adapter = adapters.get(ticket.domain) if ticket.domain else None
    if ticket.domain and adapter is None:
        known = ", ".join(sorted(adapters)) or "none"
        return NotReplayable(
            ticket.ticket_id, ticket.task_type, f"domain {ticket.domain!r} is not configured for replay ({known})"
        )
    if adapter is None:
        owners = [a for a in adapters.values() if ticket.task_type in a.task_types()]
        if len(owners) != 1:
            why = "no configured domain has" if not owners else "several configured domains have"
            return NotReplayable(
                ticket.ticket_id,
                ticket.task_type,
                f"the ticket names no domain (passhat.domain) and {why} task type {ticket.task_type!r}",
            )
        adapter = owners[0]
    try:
        scenario = adapter.scenario(ticket, detail)
        images = tuple(adapter.images(detail))
    except NotReplayableError as exc:
        return NotReplayable(ticket.ticket_id, ticket.task_type, str(exc))
    return ReplayTicket(ticket.ticket_id, ticket.task_type, adapter.domain, scenario, images)


def production_attempt(detail: TicketDetail) -> TicketRow | None:
    """The ticket's first production attempt (the one the customer saw)."""
    production = [row for row in detail.attempts if row.source == "production"]
    return min(production, key=lambda row: row.start_time_ns) if production else None


def adapters_for(
    domains: Sequence[Domain], lookups: Mapping[str, RowLookup] | None = None
) -> dict[str, ScenarioAdapter]:
    """Adapters for shipped domains, by name (``lookups``: each domain's seeded-row reader)."""
    return {domain.name: DomainAdapter(domain, lookup=(lookups or {}).get(domain.name)) for domain in domains}
