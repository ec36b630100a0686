"""The mock domain: a tiny library (two tables, three tools, three task types) for the contract's own tests.

Not registered as an installed domain: tests use it as `passhat.sandbox.domains.mock.domain`.
"""

from __future__ import annotations

from passhat.sandbox.domain import Domain, Factor, declare_intents, one_factor
from passhat.sandbox.domains.mock import circulation, intents, members, models, seed, tasks

domain = Domain(
    name="mock",
    description="A library desk: members renew their loans.",
    metadata=models.metadata,
    seed=seed.seed,
    task_types=declare_intents(tasks.TASK_TYPES, intents.INTENT_FIELDS),
    systems=(members.system, circulation.system),
    errors={
        "no_such_record": "not_found",
        "member_not_verified": "precondition_failed",
        "renewal_limit_reached": "not_allowed",
        "bad_request": "invalid_argument",
    },
    identity=one_factor(Factor("find_member_by_email", ("email",), "member_id")),
    consent={"renew_loan": ("loan_id", "weeks")},  # "say which loan and by how many weeks, and get an explicit yes"
    policy_resource=("passhat.sandbox.domains.mock", "policy.md"),
)

__all__ = ["domain"]
