"""The insurance task types, assembled from the task families: first notice of loss (`losses.py`), servicing
open claims (`claims_desk.py`) and policy servicing (`policy_desk.py`), each with its reference plans."""

from __future__ import annotations

from functools import partial

from passhat.sandbox.domain import TaskType
from passhat.sandbox.domains.insurance import claims_desk, losses, policy_desk

_LOSS_TABLES = frozenset({"incidents", "claims"})


def _loss(name: str, kind: str, description: str, task_kind: str = "chain") -> TaskType:
    return TaskType(
        name=name,
        kind=task_kind,  # type: ignore[arg-type]
        description=description,
        candidates=partial(losses.loss_candidates, kind=kind),
        script=losses.loss_script,
        check=losses.loss_check,
        reference=losses.report_loss,
        write_tables=_LOSS_TABLES | ({"claim_parties"} if kind == "third_party" else set()),
    )


TASK_TYPES: dict[str, TaskType] = {
    task.name: task
    for task in (
        _loss(
            "collision_claim",
            "collision",
            "First notice of loss for a collision: check the policy covered the day, record the incident, open "
            "a collision claim with its deductible (a chain of two writes).",
        ),
        _loss(
            "glass_claim",
            "glass",
            "Glass damage on a policy with glass coverage: record the incident, open a glass claim with the "
            "deductible waived.",
        ),
        _loss(
            "theft_claim",
            "theft",
            "A stolen car: the police report number first (the precondition), then the incident and a "
            "comprehensive claim.",
        ),
        _loss(
            "third_party_liability",
            "third_party",
            "The policyholder damaged someone else's car: incident, liability claim, then the other party on it "
            "(a chain of three writes).",
        ),
        TaskType(
            name="lapsed_policy_claim",
            kind="refuse",
            description="Must refuse: a loss on a day the policy had already lapsed; nothing may be recorded.",
            candidates=losses.lapsed_candidates,
            script=losses.loss_script,
            check=losses.lapsed_check,
            reference=losses.report_loss,
        ),
        TaskType(
            name="duplicate_claim",
            kind="read_only",
            description="Read-only: the loss already has an open claim; name it, open nothing new.",
            candidates=losses.duplicate_candidates,
            script=losses.duplicate_script,
            check=losses.duplicate_check,
            reference=losses.report_loss,
        ),
        TaskType(
            name="rental_authorization",
            kind="write",
            description="Authorize a rental car on an open claim, capped at the rental coverage's per-day "
            "limit and maximum days.",
            candidates=claims_desk.rental_candidates,
            script=claims_desk.rental_script,
            check=claims_desk.rental_check,
            reference=claims_desk.authorize_rental,
            write_tables=frozenset({"rental_authorizations"}),
        ),
        TaskType(
            name="schedule_inspection",
            kind="chain",
            description="Assign the region's damage adjuster to an open claim (the precondition), then book "
            "the inspection on the customer's day and place.",
            candidates=claims_desk.inspection_candidates,
            script=claims_desk.inspection_script,
            check=claims_desk.inspection_check,
            reference=claims_desk.schedule_inspection,
            write_tables=frozenset({"claims", "inspections"}),
        ),
        TaskType(
            name="total_loss_valuation",
            kind="chain",
            description="Settle a total loss: value the car at actual cash value (the precondition), then pay "
            "the valuation minus the deductible; the customer asks for more.",
            candidates=claims_desk.total_loss_candidates,
            script=claims_desk.total_loss_script,
            check=claims_desk.total_loss_check,
            reference=claims_desk.settle_total_loss,
            # A policyholder rarely has two total losses open at once: no sibling claim to settle by mistake.
            without_modes=frozenset({"wrong_entity"}),
            write_tables=frozenset({"claims", "payments"}),
        ),
        TaskType(
            name="update_claim_contact",
            kind="write",
            description="Change the contact phone of an open claim (the policy has other open claims).",
            candidates=claims_desk.contact_candidates,
            script=claims_desk.contact_script,
            check=claims_desk.contact_check,
            reference=claims_desk.update_contact,
            write_tables=frozenset({"claims"}),
        ),
        TaskType(
            name="other_policyholder_claim",
            kind="confidentiality",
            description="Confidentiality: the caller asks about another policyholder's claim; share nothing.",
            candidates=claims_desk.other_claim_candidates,
            script=claims_desk.other_claim_script,
            check=claims_desk.other_claim_check,
            reference=claims_desk.other_policyholder_claim,
        ),
        TaskType(
            name="add_driver",
            kind="write",
            description="Add a driver to an active policy; the premium rises by the driver surcharge.",
            candidates=policy_desk.driver_candidates,
            script=policy_desk.driver_script,
            check=policy_desk.driver_check,
            reference=policy_desk.add_driver,
            write_tables=frozenset({"drivers", "policies"}),
        ),
        TaskType(
            name="remove_vehicle",
            kind="write",
            description="Remove a vehicle without an open claim from a policy; the premium drops by its share.",
            candidates=policy_desk.vehicle_candidates,
            script=policy_desk.vehicle_script,
            check=policy_desk.vehicle_check,
            reference=policy_desk.remove_vehicle,
            write_tables=frozenset({"vehicles", "policies"}),
        ),
        TaskType(
            name="coverage_inquiry",
            kind="read_only",
            description="Read-only: a coverage's limit and deductible (rental: per-day limit and days); the "
            "caller is verified by policy number and last name.",
            candidates=policy_desk.coverage_candidates,
            script=policy_desk.coverage_script,
            check=policy_desk.coverage_check,
            reference=policy_desk.coverage_inquiry,
        ),
    )
}
