"""Travel's checks grade what the backend holds: the right rows, nothing missing, nothing else written, and the
final response where the task needs a disclosure, a refusal or confidentiality."""

from __future__ import annotations

from typing import Any

from passhat.checks import Verdict
from passhat.sandbox import Sandbox
from passhat.sandbox.domains.travel import cancellations, changes, delays, inquiries, services
from tests.sandbox.domains.travel_trial import grade, ok, open_trial


def first(travel: Sandbox, task_type: str) -> dict[str, Any]:
    return dict(travel.scenarios(task_type, 1)[0].intent)


def failing_tables(verdict: Verdict) -> set[str]:
    return {d.table for d in verdict.failures() if d.table}


async def test_the_reference_path_of_a_cancellation_passes_and_a_missing_refund_fails(travel: Sandbox) -> None:
    intent = first(travel, "cancel_refundable")
    code = intent["reservation_id"]
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(client, "cancel_reservation", reservation_id=code, reason=intent["reason"])
        unsettled = grade(travel, database, cancellations.cancel_check(intent))
        await ok(client, "refund_reservation", reservation_id=code)
        settled = grade(travel, database, cancellations.cancel_check(intent))
    assert settled.passed, settled.explanation
    assert not unsettled.passed and failing_tables(unsettled) == {"payments"}


async def test_a_cancellation_with_an_unrequested_seat_change_fails_naming_the_seat(travel: Sandbox) -> None:
    intent = first(travel, "cancel_within_24h")
    seat = first(travel, "seat_change")
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(client, "find_customer_by_email", email=seat["email"])
        await ok(client, "cancel_reservation", reservation_id=intent["reservation_id"], reason=intent["reason"])
        await ok(client, "refund_reservation", reservation_id=intent["reservation_id"])
        arguments = {k: seat[k] for k in ("reservation_id", "segment_id", "passenger_id", "seat")}
        await ok(client, "change_seat", **arguments)
        verdict = grade(travel, database, cancellations.cancel_check(intent))
    assert not verdict.passed
    named = {d.key["seat_id"] for d in verdict.failures() if d.check == "no_other_writes" and d.key}
    assert seat["new_seat_id"] in named


async def test_a_cancellation_for_a_reason_the_customer_did_not_give_fails(travel: Sandbox) -> None:
    intent = first(travel, "cancel_nonrefundable")
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(client, "cancel_reservation", reservation_id=intent["reservation_id"], reason="no reason given")
        await ok(client, "issue_travel_credit", reservation_id=intent["reservation_id"])
        verdict = grade(travel, database, cancellations.cancel_check(intent))
    assert not verdict.passed
    assert {d.field for d in verdict.failures() if d.field} == {"cancel_reason"}


async def test_changing_the_other_leg_fails_as_the_wrong_row(travel: Sandbox) -> None:
    intent = first(travel, "change_flight_date")
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        reservation = await ok(client, "get_reservation", reservation_id=intent["reservation_id"])
        other = next(s for s in reservation["segments"] if s["segment_id"] != intent["segment_id"])
        found = await ok(client, "search_flights", origin=other["origin"], destination=other["destination"],
                         date=intent["new_date"])  # fmt: skip
        target = next(f["flight_id"] for f in found["flights"] if f["number"] == other["number"])
        arguments = {
            "reservation_id": intent["reservation_id"],
            "segment_id": other["segment_id"],
            "new_flight_id": target,
        }
        await ok(client, "quote_change", **arguments)
        await ok(client, "change_flight", **arguments)
        verdict = grade(travel, database, changes.change_check(intent))
    assert not verdict.passed
    unexpected = [d for d in verdict.failures() if d.check == "no_other_writes" and d.table == "segments"]
    assert [d.key for d in unexpected] == [{"segment_id": other["segment_id"]}]


async def test_moving_everyone_when_one_passenger_asked_fails(travel: Sandbox) -> None:
    intent = first(travel, "change_one_passenger")
    arguments = {
        "reservation_id": intent["reservation_id"],
        "segment_id": intent["segment_id"],
        "new_flight_id": intent["new_flight_id"],
    }
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(client, "quote_change", **arguments)
        await ok(client, "change_flight", **arguments)  # the whole reservation, no split
        verdict = grade(travel, database, changes.split_check(intent))
    assert not verdict.passed
    missing = {d.table for d in verdict.failures() if d.check == "inserted"}
    assert {"reservations", "segments"} <= missing
    assert any(d.check == "no_other_writes" and d.table == "segments" for d in verdict.failures())


async def test_the_split_then_change_chain_passes(travel: Sandbox) -> None:
    intent = first(travel, "change_one_passenger")
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        split = await ok(client, "split_reservation", reservation_id=intent["reservation_id"],
                         passenger_ids=[intent["passenger_id"]])  # fmt: skip
        segment = f"{split['reservation_id']}-{intent['sequence']}"
        arguments = {
            "reservation_id": split["reservation_id"],
            "segment_id": segment,
            "new_flight_id": intent["new_flight_id"],
        }
        await ok(client, "quote_change", **arguments)
        await ok(client, "change_flight", **arguments)
        verdict = grade(travel, database, changes.split_check(intent))
    assert verdict.passed, verdict.explanation


async def test_bags_on_the_wrong_passenger_fail(travel: Sandbox) -> None:
    intent = first(travel, "add_checked_bag")
    others = [
        s.intent
        for s in travel.scenarios("add_checked_bag", 200)
        if s.intent["reservation_id"] == intent["reservation_id"]
    ]
    other = next(i["passenger_id"] for i in others if i["passenger_id"] != intent["passenger_id"])
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(
            client, "add_checked_bags", reservation_id=intent["reservation_id"], passenger_id=other, bags=intent["bags"]
        )
        verdict = grade(travel, database, services.bag_check(intent))
    assert not verdict.passed
    assert any(d.field == "passenger_id" for d in verdict.failures())


async def test_an_upgrade_that_leaves_the_miles_untouched_fails(travel: Sandbox) -> None:
    intent = first(travel, "upgrade_cabin")
    arguments = {
        "reservation_id": intent["reservation_id"],
        "segment_id": intent["segment_id"],
        "new_cabin": intent["cabin"],
    }
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(client, "quote_change", **arguments)
        await ok(client, "upgrade_cabin", **arguments)
        upgraded = grade(travel, database, changes.upgrade_check(intent))
        with database.engine.begin() as connection:  # a backend that forgot to take the miles
            connection.exec_driver_sql(
                "UPDATE loyalty_accounts SET miles = miles + 1 WHERE loyalty_id = ?", (intent["loyalty_id"],)
            )
        wrong = grade(travel, database, changes.upgrade_check(intent))
    assert upgraded.passed, upgraded.explanation
    assert not wrong.passed and {d.field for d in wrong.failures() if d.field} == {"miles"}


async def test_a_voucher_for_another_amount_fails(travel: Sandbox) -> None:
    intent = first(travel, "delay_compensation")
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(client, "check_compensation", segment_id=intent["segment_id"])
        await ok(client, "issue_compensation", segment_id=intent["segment_id"])
        right = grade(travel, database, delays.check(intent))
        wrong = grade(travel, database, delays.check({**intent, "amount": intent["amount"] + 50}))
    assert right.passed, right.explanation
    assert not wrong.passed


async def test_read_only_answers_are_graded_on_what_the_agent_said(travel: Sandbox) -> None:
    inquiry = first(travel, "reservation_inquiry")
    companion = first(travel, "companion_reservation")
    async with open_trial(travel) as (_, database):
        told = grade(
            travel,
            database,
            inquiries.inquiry_check(inquiry),
            f"It departs at {inquiry['departs']}, seat {inquiry['seat']}.",
        )
        vague = grade(travel, database, inquiries.inquiry_check(inquiry), f"It departs at {inquiry['departs']}.")
        refused = grade(travel, database, inquiries.companion_check(companion), "I'm sorry, I cannot share that.")
        leaked = grade(
            travel,
            database,
            inquiries.companion_check(companion),
            f"I cannot say, but it is seat {companion['secret_seat']}.",
        )
    assert told.passed and not vague.passed
    assert refused.passed and not leaked.passed
    assert [d.check for d in leaked.failures() if d.check != "all_of"] == ["response_omits"]
