"""The retail domain: refunds, returns, exchanges and order changes (few entities, short chains)."""

from __future__ import annotations

from passhat.sandbox.domain import Domain
from passhat.sandbox.domains.retail import models, seed, tasks, tools

domain = Domain(
    name="retail",
    description="Online retail customer service: returns, exchanges, cancellations and order changes.",
    metadata=models.metadata,
    seed=seed.seed,
    build_server=tools.build_server,
    policy_resource=("passhat.sandbox.domains.retail", "policy.md"),
    task_types=tasks.TASK_TYPES,
    lookup_tools=tools.LOOKUP_TOOLS,
    write_tools=tools.WRITE_TOOLS,
)

__all__ = ["domain"]
