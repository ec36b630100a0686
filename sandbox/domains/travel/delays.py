"""Task family: delay compensation (by delay length and tier, once per segment), with its reference plan.
The backend issues a voucher only for a segment checked with `check_compensation` in the same conversation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, response_contains
from passhat.sandbox.agents import ReferenceRun, identify, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.data import (
    REFUSAL,
    Intent,
    data_for,
    facts_of,
    identity,
    pretty_date,
    travel_script,
)
from passhat.sandbox.domains.travel.steps import money, open_reservation, segment_on


def candidates(connection: Connection, *, compensated: bool = False) -> list[Intent]:
    """A flown segment whose flight landed two hours late or more, not compensated yet (or, for the refusal,
    compensated already)."""
    data = data_for(connection)
    found: list[Intent] = []
    for code in sorted(data.reservations):
        if not data.confirmed(code):
            continue
        reservation = data.reservations[code]
        for segment in data.segments[code]:
            flight = data.flights[segment["flight_id"]]
            amount = rules.compensation(
                flight["delay_minutes"],
                flight["status"],
                data.tier(reservation["customer_id"]),
                len(data.passengers[code]),
            )
            if (
                segment["status"] != "flown"
                or amount <= 0
                or (segment["segment_id"] in data.compensated) != compensated
            ):
                continue
            found.append(
                {
                    **identity(data, reservation["customer_id"]),
                    "reservation_id": code,
                    "segment_id": segment["segment_id"],
                    "flight_date": flight["date"],
                    "delay_minutes": flight["delay_minutes"],
                    "amount": amount,
                }
            )
    return found


def script(intent: Mapping[str, Any]) -> CustomerScript:
    hours = intent["delay_minutes"] // 60
    return travel_script(
        goal=f"Get the compensation owed for the {intent['flight_date']} flight of reservation "
        f"{intent['reservation_id']}, which was delayed.",
        opening=f"Hi, my flight on {pretty_date(intent['flight_date'])} (reservation {intent['reservation_id']}) "
        f"was over {hours} hour{'s' if hours > 1 else ''} late. Am I owed compensation?",
        facts=facts_of(intent, "reservation_id", "flight_date"),
        stated=("reservation_id", "flight_date"),
        unknown=("segment_id",),
    )


def check(intent: Mapping[str, Any]) -> Check:
    voucher = {
        "customer_id": intent["customer_id"],
        "segment_id": intent["segment_id"],
        "amount": intent["amount"],
        "reason": f"delay of {intent['delay_minutes']} minutes",
    }
    return all_of(inserted("compensation_vouchers", voucher), no_other_writes())


def compensated_candidates(connection: Connection) -> list[Intent]:
    return candidates(connection, compensated=True)


def compensated_check(intent: Mapping[str, Any]) -> Check:
    # The refusal names the flight it refuses (its date).
    return all_of(no_other_writes(), response_contains(intent["flight_date"], patterns=[REFUSAL, r"already"]))


async def compensate(run: ReferenceRun) -> None:
    """Find the flown segment, check its eligibility (the precondition), confirm, issue the voucher."""
    await identify(run)
    facts = await run.ask("Which reservation, and the date of the delayed flight?", "reservation_id", "flight_date")
    reservation = await open_reservation(run, str(facts["reservation_id"]))
    segment = await segment_on(run, reservation, str(facts["flight_date"]))
    if segment["status"] != "flown":
        await run.finish("I'm sorry, compensation is only for flights that have been flown.")
    segment_id = segment["segment_id"]

    async def check_first() -> None:
        assessed = await run.call("check_compensation", {"segment_id": segment_id})
        if not assessed.ok:
            await run.finish(
                f"I'm sorry, I cannot issue compensation for your flight {segment['number']} of "
                f"{facts['flight_date']}: {assessed.error_message}"
            )

    result = await perform_write(
        run,
        "issue_compensation",
        {"segment_id": segment_id},
        summary=f"Your flight {segment['number']} landed {segment['delay_minutes']} minutes late. I will check "
        "what compensation it earns and issue the voucher.",
        precondition=check_first,
        broken={"segment_id": ""},
    )
    await run.finish(f"Done: a compensation voucher of {money(result.data['voucher_amount'])} is on your account.")
