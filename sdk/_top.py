"""``passhat.ticket``: the module-level entry point, bound to the global instance (or the open ticket's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from passhat._ticket import Ticket, active_runtime


def ticket(
    ticket_id: str,
    *,
    task_type: str,
    intent: Mapping[str, Any] | None = None,
    source: str | None = None,
    domain: str | None = None,
    conversation_id: str | None = None,
    agent_name: str | None = None,
    replay_run_id: str | None = None,
    trial_attempt: int | None = None,
    attributes: Mapping[str, Any] | None = None,
) -> Ticket:
    """Open the root span of one customer ticket: ``with passhat.ticket("T-1", task_type="refund") as t:``.

    ``intent`` holds the parameters a check needs (order id, items …). ``source`` is ``production`` (the
    configured default) or ``sandbox`` for replay trials, which also set ``replay_run_id`` and
    ``trial_attempt``. Production tickets are head-sampled by :func:`passhat.is_sampled`; sandbox ones never.
    Works with ``with`` and ``async with``. Opened inside another ticket, it belongs to that ticket's instance
    (as the SDK's tool spans do): an agent's own ticket opened inside a replay's trial is part of the trial's trace,
    never a production ticket of the instance the agent's module configured. Opened inside another open ticket of
    another id (outside a sandbox trial), it is a ticket of its own: a trace of its own, linked to the open one, with
    one warning logged; of the same id, it continues the open ticket.
    """
    return Ticket(
        active_runtime(),
        ticket_id,
        task_type=task_type,
        intent=intent,
        source=source,
        domain=domain,
        conversation_id=conversation_id,
        agent_name=agent_name,
        replay_run_id=replay_run_id,
        trial_attempt=trial_attempt,
        attributes=attributes,
    )
