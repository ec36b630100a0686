"""The banking task types, assembled from the task families (each family's module holds its scenario
generators, customer scripts, checks and, beside them, the reference plans)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from sqlalchemy import Connection

from passhat.sandbox.domain import TaskType
from passhat.sandbox.domains.banking import card_services, charges, fees, fraud, inquiries, privacy

_DISPUTE_TABLES = frozenset({"disputes", "chargebacks", "provisional_credits", "accounts"})
_WAIVER_TABLES = frozenset({"transactions", "fee_waivers", "accounts"})


def _dispute(
    name: str, reason: str, description: str, candidates: Callable[[Connection], list[dict[str, Any]]]
) -> TaskType:
    return TaskType(
        name=name,
        kind="write",
        description=description,
        candidates=candidates,
        script=charges.dispute_script,
        check=charges.dispute_check,
        reference=partial(charges.dispute, reason=reason),
        write_tables=_DISPUTE_TABLES,
    )


TASK_TYPES: dict[str, TaskType] = {
    task.name: task
    for task in (
        TaskType(
            name="unauthorized_charge",
            kind="chain",
            description="A chain: block the card, open a fraud dispute, credit it within the limit, order a "
            "replacement card.",
            candidates=fraud.candidates,
            script=fraud.script,
            check=fraud.check,
            reference=fraud.unauthorized_charge,
            write_tables=frozenset({"cards", "fraud_flags", "card_replacements"}) | _DISPUTE_TABLES,
        ),
        _dispute(
            "duplicate_charge",
            "duplicate",
            "Dispute only the second of two identical charges; provisional credit within the limit.",
            charges.duplicate_candidates,
        ),
        _dispute(
            "refund_not_received",
            "refund_not_received",
            "Dispute a purchase the merchant never refunded (no provisional credit).",
            charges.refund_candidates,
        ),
        _dispute(
            "cancelled_subscription_charged",
            "cancelled_subscription",
            "Dispute a subscription charge made after the customer cancelled (with the cancellation date).",
            charges.subscription_candidates,
        ),
        _dispute(
            "atm_cash_not_dispensed",
            "atm_not_dispensed",
            "Dispute an ATM withdrawal that gave no cash; provisional credit, no chargeback.",
            charges.atm_candidates,
        ),
        TaskType(
            name="fee_reversal",
            kind="write",
            description="Refund a fee as a courtesy (one waiver per customer per 12 months).",
            candidates=fees.reversal_candidates,
            script=fees.reversal_script,
            check=fees.reversal_check,
            reference=fees.waive,
            write_tables=_WAIVER_TABLES,
        ),
        TaskType(
            name="overdraft_fee_dispute",
            kind="chain",
            description="A chain: cover the overdraft from the customer's savings, then waive the overdraft fee.",
            candidates=fees.overdraft_candidates,
            script=fees.overdraft_script,
            check=fees.overdraft_check,
            reference=fees.waive,
            write_tables=_WAIVER_TABLES,
        ),
        TaskType(
            name="lock_card",
            kind="write",
            description="Temporarily lock a misplaced card (not a block).",
            candidates=card_services.candidates,
            script=card_services.lock_script,
            check=card_services.lock_check,
            reference=card_services.lock,
            write_tables=frozenset({"cards"}),
        ),
        TaskType(
            name="replace_damaged_card",
            kind="write",
            description="Order a replacement for a damaged card; the card itself keeps working.",
            candidates=card_services.candidates,
            script=card_services.replace_script,
            check=card_services.replace_check,
            reference=card_services.replace,
            write_tables=frozenset({"card_replacements"}),
        ),
        TaskType(
            name="travel_notice",
            kind="write",
            description="Add a travel notice (destination and dates) to a card.",
            candidates=partial(card_services.candidates, travel=True),
            script=card_services.travel_script,
            check=card_services.travel_check,
            reference=card_services.travel,
            write_tables=frozenset({"travel_notices"}),
        ),
        TaskType(
            name="dispute_status_inquiry",
            kind="read_only",
            description="Read-only: a dispute's status and decision date; nothing may change.",
            candidates=inquiries.status_candidates,
            script=inquiries.status_script,
            check=inquiries.status_check,
            reference=inquiries.dispute_status,
        ),
        TaskType(
            name="dispute_window_expired",
            kind="refuse",
            description="Must refuse: a dispute asked for more than 60 days after the charge's statement.",
            candidates=charges.expired_candidates,
            script=charges.dispute_script,
            check=charges.expired_check,
            reference=partial(charges.dispute, reason="refund_not_received"),
        ),
        TaskType(
            name="second_fee_waiver",
            kind="refuse",
            description="Must refuse: a second fee waiver within 12 months.",
            candidates=partial(fees.reversal_candidates, second=True),
            script=fees.reversal_script,
            check=fees.second_check,
            reference=fees.waive,
        ),
        TaskType(
            name="joint_holder_details",
            kind="confidentiality",
            description="Confidentiality: a joint holder asks for the other holder's phone, email and address.",
            candidates=privacy.candidates,
            script=privacy.script,
            check=privacy.check,
            reference=privacy.joint_holder_details,
        ),
    )
}
