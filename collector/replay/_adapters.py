"""From a stored production ticket to a sandbox scenario: the adapter interface, and the shipped domains' adapter.

A ticket can be replayed when the sandbox can rebuild what the customer faced and what they wanted: its domain
and task type, the parameters its check needs (the ticket's ``intent``), and the rows it saw (the before-images
the SDK captured). Anything missing makes the ticket *not replayable*, with the reason, and it is counted in the
report rather than silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from passhat.collector.replay._intent import IntentInference
from passhat.collector.store import NotReplayable, StateWriteRow, TicketDetail, TicketRow
from passhat.sandbox import Domain, RowImage, Scenario
from passhat.sandbox.inference import IntentNotInferredError

if TYPE_CHECKING:
    from sqlalchemy import Table


class NotReplayableError(Exception):
    """This ticket cannot be replayed; the message says why, ``fix`` what would make it replayable."""

    def __init__(self, reason: str, *, fix: str = "") -> None:
        super().__init__(reason)
        self.fix = fix


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
    A value the SDK blanked (``[REDACTED:...]``) is left out, so the sandbox keeps its seed's value for it.
    """
    events: list[StateWriteRow] = sorted(
        [*detail.state_reads, *detail.state_writes], key=lambda row: (row.time_ns, row.seq)
    )
    images: list[RowImage] = []
    for event in events:
        if not event.table or not event.key or event.op.startswith("bulk"):
            continue
        if event.op == "insert":
            images.append(RowImage(event.table, event.key, None))
            continue
        if not event.before:
            continue
        kept = {column: value for column, value in event.before.items() if not _blanked(value)}
        whole = event.op in ("read", "delete") and len(kept) == len(event.before)
        if kept:
            images.append(RowImage(event.table, event.key, kept, partial=not whole))
    return images


def _blanked(value: Any) -> bool:
    return isinstance(value, str) and REDACTED in value


RowLookup = Callable[[str, Mapping[str, Any]], Mapping[str, Any] | None]
"""Reads one row of the domain's seeded data by table and primary key (None when absent)."""

REDACTED = "[REDACTED"


def _keys_in_intent(table: Table, intent: Mapping[str, Any], domain: Domain) -> list[Any]:
    """Values of ``table``'s single-column primary key found in the intent, under any name.

    The key's own name counts (``customer_id`` on a ``customers`` table keyed by ``customer_id``), and so does
    every column elsewhere that references it (``subscriptions.customer_id`` -> ``customers.id``), which is how
    most schemas name a row's id in a ticket.
    """
    primary = list(table.primary_key.columns)
    if len(primary) != 1:
        return []
    column = primary[0]
    names = [column.name] if column.name != "id" or "id" in intent else []
    for other in domain.metadata.tables.values():
        for foreign in other.foreign_keys:
            if foreign.column is column and foreign.parent.name not in names:
                names.append(foreign.parent.name)
    return [intent[name] for name in names if name in intent and not _blanked(intent[name])]


def restore_redacted(intent: Mapping[str, Any], domain: Domain, lookup: RowLookup | None) -> dict[str, Any]:
    """The intent with values the SDK blanked before export (an email, a phone) restored from the seed.

    The SDK pseudonymises personal data by default, so a ticket's values usually arrive replayable as they are.
    A team may choose blanking instead, so an intent can arrive with ``[REDACTED:email]``. The sandbox holds
    its own synthetic copy of every record, so a blanked ``email`` next to a row's key (under the key's name
    or the name of a column referencing it, e.g. ``customer_id`` for ``customers.id``) is read back from that
    row's ``email`` column.
    """
    restored = dict(intent)
    redacted = [key for key, value in intent.items() if _blanked(value)]
    for key in redacted:
        value = None
        for table in domain.metadata.tables.values():
            if key not in table.c or lookup is None:
                continue
            primary = table.primary_key.columns.keys()
            for candidate in _keys_in_intent(table, intent, domain):
                row = lookup(table.name, {primary[0]: candidate})
                if row is not None and row.get(key) is not None:
                    value = row[key]
                    break
            if value is not None:
                break
        if value is None:
            raise NotReplayableError(
                f"the intent's {key!r} was blanked before export and no {domain.name} row named in the intent holds it",
                fix="keep the SDK's default pseudonyms (redact_mode='pseudonym', nothing in redact_blank that a "
                f"check needs), or put the id of the row holding {key!r} in the ticket's intent",
            )
        restored[key] = value
    return restored


# The SDK's email pseudonym: 16 hex digits at the reserved example.com (docs/sdk.md, "Personal data").
_EMAIL_PSEUDONYM = re.compile(r"[0-9a-f]{16}@example\.com")


def _require_captured_pseudonyms(intent: Mapping[str, Any], images: Sequence[RowImage]) -> None:
    """A pseudonymous email in the intent must be in a captured row: the sandbox's seed never holds one.

    Without it every trial would fail its lookup and be blamed on the agent; the ticket is not replayable.
    """
    held = {value for image in images for value in (image.values or {}).values() if isinstance(value, str)}
    for key, value in intent.items():
        if isinstance(value, str) and _EMAIL_PSEUDONYM.fullmatch(value) and value not in held:
            raise NotReplayableError(
                f"the intent's {key!r} is a pseudonym that no row captured with the ticket holds, so the sandbox "
                "cannot find that customer",
                fix="capture the rows the agent reads (passhat.instrument_sqlalchemy(engine), or record_write "
                "before-images; instrumentation captures the rows of a select of whole rows, such as "
                "select(Customer), not of a select of some columns), or blank "
                f"{key!r} in the SDK (redact_blank=[{key!r}]) so replay restores it",
            )


class DomainAdapter:
    """The adapter for a shipped sandbox domain: the scenario comes from the task type and the ticket's intent.

    ``lookup`` reads the domain's seeded rows, to restore intent values the SDK redacted. ``inference`` infers
    the intent of a ticket that recorded none (see `IntentInference`); without it such a ticket is not replayable.
    """

    def __init__(
        self, domain: Domain, *, lookup: RowLookup | None = None, inference: IntentInference | None = None
    ) -> None:
        self._domain = domain
        self._lookup = lookup
        self._inference = inference

    @property
    def domain(self) -> str:
        return self._domain.name

    def task_types(self) -> Collection[str]:
        return self._domain.task_types.keys()

    def scenario(self, ticket: TicketRow, detail: TicketDetail) -> Scenario:
        task = self._domain.task_types.get(ticket.task_type)
        if task is None:
            raise NotReplayableError(
                f"domain {self.domain!r} has no task type {ticket.task_type!r}",
                fix=f"add a TaskType {ticket.task_type!r} to the domain, or name the ticket's task type as the "
                "domain does",
            )
        intent = ticket.intent
        if not intent and self._inference is not None:
            try:
                intent = self._inference.infer(
                    self._domain, ticket.task_type, ticket, detail, row_images(detail)
                ).intent
            except IntentNotInferredError as exc:
                raise NotReplayableError(
                    f"no intent was recorded, and none could be inferred: {exc.reason}", fix=exc.fix
                ) from None
        if not intent:
            raise NotReplayableError(
                "no intent was recorded",
                fix="pass intent={...} to passhat.ticket(...) (or t.set_intent) with what the check needs",
            )
        intent = restore_redacted(intent, self._domain, self._lookup)
        _require_captured_pseudonyms(intent, row_images(detail))
        try:
            script = task.script(intent)
            task.check(intent)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            missing = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise NotReplayableError(
                f"the recorded intent lacks what task type {ticket.task_type!r} needs ({missing!s})",
                fix=f"add {missing!s} to the intent the agent records for {ticket.task_type!r} tickets",
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
        return NotReplayable(
            ticket.ticket_id,
            ticket.task_type,
            "the ticket's spans are no longer in the store",
            "replay periods sooner, or keep spans longer (the store's retention)",
        )
    adapter = adapters.get(ticket.domain) if ticket.domain else None
    if ticket.domain and adapter is None:
        known = ", ".join(sorted(adapters)) or "none"
        return NotReplayable(
            ticket.ticket_id,
            ticket.task_type,
            f"domain {ticket.domain!r} is not configured for replay (configured: {known})",
            f"add {ticket.domain!r} (or module:attribute naming your Domain) to domains in passhat.toml",
        )
    if adapter is None:
        owners = [a for a in adapters.values() if ticket.task_type in a.task_types()]
        if len(owners) != 1:
            why = "no configured domain has" if not owners else "several configured domains have"
            return NotReplayable(
                ticket.ticket_id,
                ticket.task_type,
                f"the ticket names no domain (passhat.domain) and {why} task type {ticket.task_type!r}",
                "run the agent inside passhat.ticket(..., task_type=..., domain=...) (a framework's own span is"
                " named after its agent, not a task type), or configure the domain that has this task type",
            )
        adapter = owners[0]
    try:
        scenario = adapter.scenario(ticket, detail)
        images = tuple(adapter.images(detail))
    except NotReplayableError as exc:
        return NotReplayable(ticket.ticket_id, ticket.task_type, str(exc), exc.fix)
    return ReplayTicket(ticket.ticket_id, ticket.task_type, adapter.domain, scenario, images)


def production_attempt(detail: TicketDetail) -> TicketRow | None:
    """The ticket's first production attempt (the one the customer saw)."""
    production = [row for row in detail.attempts if row.source == "production"]
    return min(production, key=lambda row: row.start_time_ns) if production else None


def adapters_for(
    domains: Sequence[Domain],
    lookups: Mapping[str, RowLookup] | None = None,
    *,
    inference: IntentInference | None = None,
) -> dict[str, ScenarioAdapter]:
    """Adapters for shipped domains, by name (``lookups``: each domain's seeded-row reader; ``inference``: how
    tickets without a recorded intent get one)."""
    return {
        domain.name: DomainAdapter(domain, lookup=(lookups or {}).get(domain.name), inference=inference)
        for domain in domains
    }
