"""The mock domain's three task types, assembled from its task families (renewals, inquiries)."""

from __future__ import annotations

from passhat.sandbox.domain import TaskType
from passhat.sandbox.domains.mock import inquiries, renewals

TASK_TYPES: dict[str, TaskType] = {
    task.name: task
    for task in (
        TaskType(
            name="renew_loan",
            kind="write",
            description="Renew one loan by the weeks the member asks for.",
            candidates=renewals.renewal_candidates,
            script=renewals.script,
            check=renewals.check,
            reference=renewals.renew,
            write_tables=frozenset({"loans"}),
        ),
        TaskType(
            name="renew_several_loans",
            kind="chain",
            description="A chain: renew two to four loans, one write each, in order.",
            candidates=renewals.chain_candidates,
            script=renewals.script,
            check=renewals.check,
            reference=renewals.renew,
            write_tables=frozenset({"loans"}),
        ),
        TaskType(
            name="loan_inquiry",
            kind="read_only",
            description="Read-only: when a book is due back; nothing may change.",
            candidates=inquiries.candidates,
            script=inquiries.script,
            check=inquiries.check,
            reference=inquiries.due_date,
        ),
    )
}
