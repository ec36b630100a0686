"""The travel task types, assembled from the task families: changes, cancellations, services, delays and
inquiries (each family module holds its scenario generators, scripts, checks and reference plans)."""

from __future__ import annotations

from passhat.sandbox.domain import TaskType
from passhat.sandbox.domains.travel import cancellations, changes, delays, inquiries, services

_MOVE = frozenset({"segments", "seats_inventory", "payments"})
_CANCEL_REFUND = frozenset({"reservations", "segments", "seats_inventory", "payments"})
_CANCEL_CREDIT = frozenset({"reservations", "segments", "seats_inventory", "travel_credits"})

TASK_TYPES: dict[str, TaskType] = {
    task.name: task
    for task in (
        TaskType(
            name="change_flight_date",
            kind="write",
            description="Move one leg to the same flight on another date: quote, then change (fee by fare and tier).",
            candidates=changes.change_candidates,
            script=changes.change_script,
            check=changes.change_check,
            reference=changes.change_date,
            write_tables=_MOVE,
        ),
        TaskType(
            name="upgrade_cabin",
            kind="write",
            description="Upgrade one leg to a higher cabin with loyalty miles: quote, then upgrade (seats move).",
            candidates=changes.upgrade_candidates,
            script=changes.upgrade_script,
            check=changes.upgrade_check,
            reference=changes.upgrade,
            write_tables=frozenset({"segments", "seats_inventory", "loyalty_accounts"}),
        ),
        TaskType(
            name="cancel_within_24h",
            kind="write",
            description="Cancel a reservation booked less than 24 hours ago (any fare), then refund it in full.",
            candidates=cancellations.candidates_within_24h,
            script=cancellations.cancel_script,
            check=cancellations.cancel_check,
            reference=cancellations.cancel,
            write_tables=_CANCEL_REFUND,
        ),
        TaskType(
            name="cancel_refundable",
            kind="write",
            description="Cancel a refundable reservation (flex or business) after 24 hours, then refund it.",
            candidates=cancellations.candidates_refundable,
            script=cancellations.cancel_script,
            check=cancellations.cancel_check,
            reference=cancellations.cancel,
            write_tables=_CANCEL_REFUND,
        ),
        TaskType(
            name="cancel_nonrefundable",
            kind="write",
            description="Cancel a non-refundable reservation after 24 hours: what was paid becomes a travel credit.",
            candidates=cancellations.candidates_nonrefundable,
            script=cancellations.cancel_script,
            check=cancellations.cancel_check,
            reference=cancellations.cancel,
            write_tables=_CANCEL_CREDIT,
        ),
        TaskType(
            name="add_checked_bag",
            kind="write",
            description="Add checked bags to one passenger; the fee by bag count, tier and cabin is charged.",
            candidates=services.bag_candidates,
            script=services.bag_script,
            check=services.bag_check,
            reference=services.add_bags,
            write_tables=frozenset({"baggage", "payments"}),
        ),
        TaskType(
            name="seat_change",
            kind="write",
            description="Move one passenger to a named free seat of the same cabin.",
            candidates=services.seat_candidates,
            script=services.seat_script,
            check=services.seat_check,
            reference=services.change_seat,
            write_tables=frozenset({"seats_inventory"}),
        ),
        TaskType(
            name="correct_passenger_name",
            kind="write",
            description="Correct a misspelled passenger name (at most 3 characters change).",
            candidates=services.name_candidates,
            script=services.name_script,
            check=services.name_check,
            reference=services.correct_name,
            # The misspelled passenger is the only one the correction fits: no sibling to write instead.
            without_modes=frozenset({"wrong_entity"}),
            write_tables=frozenset({"reservation_passengers"}),
        ),
        TaskType(
            name="change_one_passenger",
            kind="chain",
            description="A chain: split one passenger into a reservation of their own, then change its flight.",
            candidates=changes.split_candidates,
            script=changes.split_script,
            check=changes.split_check,
            reference=changes.change_one_passenger,
            write_tables=frozenset({"reservations", "reservation_passengers", *_MOVE}),
        ),
        TaskType(
            name="delay_compensation",
            kind="write",
            description="Compensate a flown segment delayed two hours or more (by delay and tier, once per segment).",
            candidates=delays.candidates,
            script=delays.script,
            check=delays.check,
            reference=delays.compensate,
            # Another delayed segment of the same customer is rare in the seed: no sibling to aim at.
            without_modes=frozenset({"wrong_entity"}),
            write_tables=frozenset({"compensation_vouchers"}),
        ),
        TaskType(
            name="reservation_inquiry",
            kind="read_only",
            description="Read-only: a flight's departure time and the caller's seat; nothing may change.",
            candidates=inquiries.inquiry_candidates,
            script=inquiries.inquiry_script,
            check=inquiries.inquiry_check,
            reference=inquiries.inquiry,
        ),
        TaskType(
            name="basic_economy_change",
            kind="refuse",
            description="Must refuse: a date change asked for on a basic economy fare.",
            candidates=changes.basic_candidates,
            script=changes.change_script,
            check=changes.basic_check,
            reference=changes.change_date,
        ),
        TaskType(
            name="cancel_partially_flown",
            kind="refuse",
            description="Must refuse: cancelling a reservation whose first leg was flown (offer a human agent).",
            candidates=cancellations.flown_candidates,
            script=cancellations.cancel_script,
            check=cancellations.flown_check,
            reference=cancellations.cancel,
        ),
        TaskType(
            name="name_change_transfer",
            kind="refuse",
            description="Must refuse: a name change of more than 3 characters is a ticket transfer (offer a human).",
            candidates=services.transfer_candidates,
            script=services.transfer_script,
            check=services.transfer_check,
            reference=services.correct_name,
        ),
        TaskType(
            name="compensation_already_issued",
            kind="refuse",
            description="Must refuse: a second compensation for a segment already compensated (once per segment).",
            candidates=delays.compensated_candidates,
            script=delays.script,
            check=delays.compensated_check,
            reference=delays.compensate,
        ),
        TaskType(
            name="companion_reservation",
            kind="confidentiality",
            description="Confidentiality: the caller asks for a companion's seat and phone (a reservation not theirs).",
            candidates=inquiries.companion_candidates,
            script=inquiries.companion_script,
            check=inquiries.companion_check,
            reference=inquiries.companion,
        ),
    )
}
