"""Production tickets graded on their own changes: the task type's check run on what the ticket really wrote.

A replay grades the agent in the sandbox; this grades the production ticket itself. The state the ticket began
from is materialised as a replay's is (the domain's seed with the ticket's captured before-images laid over it),
the ticket's captured writes are applied to a copy of it in the order they happened, and the task type's check
runs on the difference, with the agent's captured messages as its reply. The ticket then has a verdict of its
own and, when it failed, a failure signature: a ticket whose agent said "resolved" but whose write went to
another order than its intent names is `wrong_entity`.

A ticket is graded only when what the check needs was captured: its intent, and its state writes with their
before-images (a ticket that wrote nothing counts when its service captures state: some ticket of it carries
state events). Anything missing makes the ticket *ungradable*, with the reason.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from passhat import semconv
from passhat.checks import CheckContext, ToolCallRecord, TrialRecord, Verdict, classify_failure, evaluate
from passhat.collector.replay._adapters import RowLookup, ScenarioAdapter, adapters_for, prepare, production_attempt
from passhat.collector.replay._plan import production_tickets
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.store import (
    NotReplayable,
    Period,
    ProductionVerdict,
    StateWriteRow,
    Store,
    TicketDetail,
    TicketRow,
)
from passhat.sandbox import Domain, DomainError, RowImage, apply_overlay, load_domain

log = logging.getLogger("passhat.collector.grade")

ON_DEMAND = "on demand"
"""How a verdict graded outside a period's run names its grader."""

_RESPONSE_CHECK = "response"  # the response checks' names start with it (response_contains, response_omits)


@dataclass(frozen=True)
class Ungradable:
    """A production ticket that could not be graded, and why."""

    ticket_id: str
    task_type: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"ticket_id": self.ticket_id, "task_type": self.task_type, "reason": self.reason}


@dataclass
class GradingOutcome:
    """What a grading pass did: the verdicts it stored and the tickets it could not grade."""

    verdicts: list[ProductionVerdict] = field(default_factory=list)
    ungradable: list[Ungradable] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        failed: dict[str, int] = {}
        for verdict in self.verdicts:
            if not verdict.passed:
                failed[verdict.label] = failed.get(verdict.label, 0) + 1
        return {
            "graded": len(self.verdicts),
            "passed": sum(v.passed for v in self.verdicts),
            "failed": dict(sorted(failed.items())),
            "ungradable": [u.to_dict() for u in self.ungradable],
        }


class _NotGradableError(Exception):
    pass


def _write_image(write: StateWriteRow) -> RowImage:
    """The row as a captured write left it, to lay over the state the ticket began from."""
    if write.op.startswith("bulk"):
        raise _NotGradableError(f"its {write.op} of {write.table} carries no row keys: its rows cannot be re-applied")
    if not write.key:
        raise _NotGradableError(f"a write to {write.table} has no primary key")
    if write.op == "delete":
        return RowImage(write.table, write.key, None)
    after = dict(write.after or {})
    if write.op == "insert":
        return RowImage(write.table, write.key, after)
    if write.before is None:
        raise _NotGradableError(
            f"its update of {write.table} {write.key} has no before-image (record_write(..., before=...), or "
            "passhat.instrument_sqlalchemy(engine))"
        )
    changed = write.changed or [name for name, value in after.items() if write.before.get(name) != value]
    return RowImage(write.table, write.key, {name: after[name] for name in changed if name in after}, partial=True)


def _agent_messages(spans: Sequence[Any], trace_id: str) -> tuple[list[str], bool]:
    """The agent's captured messages in the ticket's trace, and whether any carried its content."""
    texts: list[str] = []
    for span in spans:
        if span.trace_id != trace_id:
            continue
        for event in span.events:
            if event.name == semconv.EVENT_AGENT_MESSAGE and isinstance(
                event.attributes.get(semconv.MESSAGE_CONTENT), str
            ):
                texts.append(event.attributes[semconv.MESSAGE_CONTENT])
    return texts, bool(texts)


def _tool_calls(detail: TicketDetail, trace_id: str, domain: Domain) -> list[ToolCallRecord]:
    calls = []
    for call in detail.tool_calls:
        if call.trace_id != trace_id:
            continue
        try:
            arguments = json.loads(call.arguments) if call.arguments else {}
        except ValueError:
            arguments = {}
        calls.append(
            ToolCallRecord(
                name=call.tool_name,
                arguments=arguments if isinstance(arguments, dict) else {},
                outcome=call.outcome,
                error_type=call.error_type,
                error_message=call.error_message,
                is_write=call.tool_name in domain.write_tools,
            )
        )
    return calls


def _the_reply_decides(verdict: Verdict) -> bool:
    """Whether the verdict rests on the agent's reply: it has a reply check, and nothing else failed."""
    leaves = [v for v in verdict.walk() if not v.children]
    reads_reply = any(v.check.startswith(_RESPONSE_CHECK) for v in leaves)
    return reads_reply and all(v.passed or v.check.startswith(_RESPONSE_CHECK) for v in leaves)


class TicketGrader:
    """Grades production tickets of the given domains, each on its own materialised state."""

    def __init__(
        self,
        domains: Mapping[str, Domain],
        *,
        adapters: Mapping[str, ScenarioAdapter] | None = None,
        pool: SandboxPool | None = None,
    ) -> None:
        self._own_pool = pool is None
        self.pool = pool or SandboxPool()
        self.domains = dict(domains)

        def lookup_in(domain: Domain) -> RowLookup:
            return lambda table, key: self.pool.base(domain).initial.get(table, dict(key))

        lookups = {name: lookup_in(domain) for name, domain in self.domains.items()}
        self.adapters: dict[str, ScenarioAdapter] = {
            **adapters_for(list(self.domains.values()), lookups),
            **(adapters or {}),
        }

    def close(self) -> None:
        if self._own_pool:
            self.pool.close()

    def grade(
        self, ticket: TicketRow, detail: TicketDetail, *, captures_state: bool = False, graded_by: str = ON_DEMAND
    ) -> ProductionVerdict | Ungradable:
        """The ticket's verdict, or why it cannot have one. ``captures_state``: its service records state, so
        a ticket without state events wrote nothing (rather than went unobserved)."""
        try:
            return self._grade(ticket, detail, captures_state, graded_by)
        except _NotGradableError as exc:
            return Ungradable(ticket.ticket_id, ticket.task_type, str(exc))
        except (sqlite3.Error, ValueError, TypeError, KeyError) as exc:  # the grading broke, not the agent
            log.warning("grading ticket %s broke: %r", ticket.ticket_id, exc)
            return Ungradable(ticket.ticket_id, ticket.task_type, f"grading broke: {type(exc).__name__}: {exc}")

    def _grade(
        self, ticket: TicketRow, detail: TicketDetail, captures_state: bool, graded_by: str
    ) -> ProductionVerdict:
        prepared = prepare(ticket, detail, self.adapters)
        if isinstance(prepared, NotReplayable):
            raise _NotGradableError(f"{prepared.reason} ({prepared.fix})" if prepared.fix else prepared.reason)
        writes = sorted(
            (w for w in detail.state_writes if w.trace_id == ticket.trace_id), key=lambda w: (w.time_ns, w.seq)
        )
        observed = writes or any(r.trace_id == ticket.trace_id for r in detail.state_reads)
        if not observed and not captures_state:
            raise _NotGradableError(
                "no state write or read was captured, so what the ticket changed is unknown "
                "(passhat.instrument_sqlalchemy(engine), or passhat.record_write)"
            )
        images = [_write_image(w) for w in writes]
        domain = self.domains.get(prepared.domain) or load_domain(prepared.domain)
        task = domain.task_type(prepared.task_type)
        try:
            sandbox = self.pool.for_ticket(domain, prepared.images)
        except DomainError as exc:
            raise _NotGradableError(f"its captured rows cannot be laid over the {domain.name} seed: {exc}") from None
        try:
            database = sandbox.memory_copy()
            try:
                assert database.raw is not None  # a memory copy holds its connection
                for image in images:
                    try:
                        apply_overlay(database.raw, domain.metadata, [image])
                    except DomainError as exc:
                        why = f"its writes cannot be re-applied to the state it began from: {exc}"
                        raise _NotGradableError(why) from None
                diff = database.diff(sandbox.initial, domain.metadata, sandbox.rowids)
            finally:
                database.close()
            said, reply_captured = _agent_messages(detail.spans, ticket.trace_id)
            context = CheckContext(
                diff=diff,
                final_response=said[-1] if said else "",
                agent_messages=said,
                initial=sandbox.initial if task.needs_initial else None,
            )
            verdict = evaluate(task.check(prepared.scenario.intent), context)
        finally:
            self.pool.release(sandbox)
        if verdict.errors():
            raise _NotGradableError(f"its check broke: {'; '.join(verdict.errors())}")
        if not reply_captured and _the_reply_decides(verdict):
            raise _NotGradableError(
                "the check reads the agent's reply, and the ticket's messages were captured without their content "
                "(passhat.configure(capture_content=True))"
            )
        record = TrialRecord(
            passed=verdict.passed,
            verdict=verdict,
            diff=diff,
            tool_calls=_tool_calls(detail, ticket.trace_id, domain),
            termination_reason="agent_stop",
            transcript=[("agent", text) for text in said],
            final_response=context.final_response,
            expected_write_tables=set(prepared.scenario.expected_write_tables),
            error_categories=domain.errors,
        )
        signature = classify_failure(record)
        return ProductionVerdict(
            ticket_id=ticket.ticket_id,
            trace_id=ticket.trace_id,
            task_type=ticket.task_type,
            start_time_ns=ticket.start_time_ns,
            passed=verdict.passed,
            graded_at=dt.datetime.now(dt.UTC),
            domain=domain.name,
            signature=None if signature is None else signature.label,
            evidence=None if signature is None else signature.evidence,
            verdict=verdict.to_dict(),
            graded_by=graded_by,
        )


def grade_tickets(
    store: Store,
    project: str,
    tickets: Sequence[TicketRow],
    grader: TicketGrader,
    *,
    graded_by: str = ON_DEMAND,
) -> GradingOutcome:
    """Grade each ticket's first production attempt and store the verdicts (replacing earlier ones)."""
    outcome = GradingOutcome()
    details: list[tuple[TicketRow, TicketDetail]] = []
    ids = list(dict.fromkeys(t.ticket_id for t in tickets))
    found: dict[str, TicketDetail] = {}
    for start in range(0, len(ids), 500):
        found.update(store.get_tickets(project, ids[start : start + 500], source="production"))
    for ticket_id in ids:
        detail = found.get(ticket_id)
        attempt = production_attempt(detail) if detail is not None else None
        if detail is None or attempt is None:
            task_type = next(t.task_type for t in tickets if t.ticket_id == ticket_id)
            outcome.ungradable.append(Ungradable(ticket_id, task_type, "the ticket's spans are no longer stored"))
            continue
        details.append((attempt, detail))
    # A service that sent state events for any ticket captures state: its tickets without any wrote nothing.
    capturing = {
        a.service_name for a, d in details if any(w.trace_id == a.trace_id for w in (*d.state_writes, *d.state_reads))
    }
    for attempt, detail in details:
        graded = grader.grade(attempt, detail, captures_state=attempt.service_name in capturing, graded_by=graded_by)
        if isinstance(graded, Ungradable):
            outcome.ungradable.append(graded)
        else:
            outcome.verdicts.append(graded)
    for start in range(0, len(outcome.verdicts), 500):
        store.put_production_verdicts(project, outcome.verdicts[start : start + 500])
    return outcome


def grade_period(
    store: Store,
    project: str,
    period: Period,
    *,
    domains: Mapping[str, Domain] | None = None,
    adapters: Mapping[str, ScenarioAdapter] | None = None,
    pool: SandboxPool | None = None,
    graded_by: str = ON_DEMAND,
) -> GradingOutcome:
    """Grade every production ticket of the period on its own changes (see the module doc) and store the verdicts.

    ``domains`` default to retail, as for replay."""
    grader = TicketGrader(domains or {"retail": load_domain("retail")}, adapters=adapters, pool=pool)
    try:
        return grade_tickets(store, project, production_tickets(store, project, period), grader, graded_by=graded_by)
    finally:
        grader.close()
