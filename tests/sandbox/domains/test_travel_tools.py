"""The travel MCP tools through a real in-memory MCP client: identification, the fare rules, refusals in the
domain's vocabulary, and the amounts the backend charges, refunds, credits and grants."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from passhat.sandbox import Sandbox
from passhat.sandbox.domains.travel import models as m
from passhat.sandbox.domains.travel import rules
from passhat.sandbox.domains.travel.data import TravelData, data_for
from tests.sandbox.domains.travel_trial import call, ok, open_trial


def data(travel: Sandbox) -> TravelData:
    with travel.template.connect() as connection:
        return data_for(connection)


def holder(travel: Sandbox, code: str) -> dict[str, Any]:
    return data(travel).customers[data(travel).reservations[code]["customer_id"]]


def first(travel: Sandbox, task_type: str) -> dict[str, Any]:
    return dict(travel.scenarios(task_type, 1)[0].intent)


async def test_nothing_is_shown_or_changed_before_the_customer_is_identified(travel: Sandbox) -> None:
    intent = first(travel, "cancel_refundable")
    async with open_trial(travel) as (client, _):
        success, payload = await call(client, "get_reservation", reservation_id=intent["reservation_id"])
        assert not success and payload["error"] == "not_identified"
        success, payload = await call(client, "cancel_reservation", reservation_id=intent["reservation_id"], reason="x")
        assert not success and payload["error"] == "not_identified"
        found = await ok(client, "find_customer_by_reservation", reservation_id=intent["reservation_id"].lower(),
                         last_name=intent["last_name"].upper())  # fmt: skip
        assert found == {"customer_id": intent["customer_id"]}
        reservation = await ok(client, "get_reservation", reservation_id=intent["reservation_id"])
    assert reservation["customer_id"] == intent["customer_id"] and reservation["paid"] == intent["amount"]


async def test_another_holder_s_reservation_is_refused_as_permission_denied(travel: Sandbox) -> None:
    intent = first(travel, "companion_reservation")
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        success, payload = await call(client, "get_reservation", reservation_id=intent["reservation_id"])
    assert not success and payload["error"] == "not_your_reservation"
    assert travel.domain.errors["not_your_reservation"] == "permission_denied"


async def test_a_basic_economy_fare_cannot_be_quoted_for_a_change(travel: Sandbox) -> None:
    intent = first(travel, "basic_economy_change")
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        arguments = {"reservation_id": intent["reservation_id"], "segment_id": intent["segment_id"]}
        success, payload = await call(client, "quote_change", **arguments, new_flight_id=intent["new_flight_id"])
        assert not success and payload["error"] == "fare_rules" and "basic" in payload["message"]
        success, payload = await call(client, "upgrade_cabin", **arguments, new_cabin="business")
    assert not success and payload["error"] == "quote_required"


async def test_a_change_needs_its_quote_and_charges_the_fee_after_the_tier_s_waiver(travel: Sandbox) -> None:
    intent = first(travel, "change_flight_date")
    arguments = {
        "reservation_id": intent["reservation_id"],
        "segment_id": intent["segment_id"],
        "new_flight_id": intent["new_flight_id"],
    }
    facts = data(travel)
    reservation = facts.reservations[intent["reservation_id"]]
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        success, payload = await call(client, "change_flight", **arguments)
        assert not success and payload["error"] == "quote_required"
        quote = await ok(client, "quote_change", **arguments)
        changed = await ok(client, "change_flight", **arguments)
        with database.engine.connect() as connection:
            flight = connection.execute(
                select(m.segments.c.flight_id).where(m.segments.c.segment_id == intent["segment_id"])
            ).scalar()
    fee = (
        facts.fares[reservation["fare_id"]]["change_fee"]
        * rules.CHANGE_FEE_SHARE[facts.tier(reservation["customer_id"])]
    )
    assert quote["change_fee"] == round(fee * len(facts.passengers[intent["reservation_id"]]), 2)
    assert changed["charged"] == quote["total"] == intent["charge"]
    assert flight == intent["new_flight_id"]


async def test_a_partially_flown_reservation_cannot_be_cancelled(travel: Sandbox) -> None:
    intent = first(travel, "cancel_partially_flown")
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        success, payload = await call(client, "cancel_reservation", reservation_id=intent["reservation_id"], reason="x")
    assert not success and payload["error"] == "already_flown"


async def test_money_is_settled_only_after_the_cancellation_and_by_the_fare_rules(travel: Sandbox) -> None:
    intent = first(travel, "cancel_nonrefundable")
    code = intent["reservation_id"]
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        success, payload = await call(client, "issue_travel_credit", reservation_id=code)
        assert not success and payload["error"] == "not_cancelled"
        assert travel.domain.errors["not_cancelled"] == "precondition_failed"
        await ok(client, "cancel_reservation", reservation_id=code, reason=intent["reason"])
        success, payload = await call(client, "refund_reservation", reservation_id=code)
        assert not success and payload["error"] == "fare_rules" and "travel credit" in payload["message"]
        credit = await ok(client, "issue_travel_credit", reservation_id=code)
        success, payload = await call(client, "issue_travel_credit", reservation_id=code)
    assert credit["credit"] == intent["amount"] and credit["expires"] == "2027-06-10"
    assert not success and payload["error"] == "already_settled"


async def test_any_fare_is_refunded_within_24_hours_of_booking(travel: Sandbox) -> None:
    facts = data(travel)
    scenarios = [s.intent for s in travel.scenarios("cancel_within_24h", 40)]
    intent = next(i for i in scenarios if not facts.fare(i["reservation_id"])["refundable"])
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        await ok(client, "cancel_reservation", reservation_id=intent["reservation_id"], reason=intent["reason"])
        refund = await ok(client, "refund_reservation", reservation_id=intent["reservation_id"])
    assert refund["refunded"] == intent["amount"] > 0


async def test_a_name_correction_of_more_than_three_characters_is_refused(travel: Sandbox) -> None:
    intent = first(travel, "correct_passenger_name")
    arguments = {"reservation_id": intent["reservation_id"], "passenger_id": intent["passenger_id"]}
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        success, payload = await call(client, "correct_passenger_name", **arguments, first_name="Bartholomew",
                                      last_name=intent["last_name"])  # fmt: skip
        assert not success and payload["error"] == "name_change_too_large"
        first_name, last_name = intent["correct_name"].split(" ", 1)
        corrected = await ok(client, "correct_passenger_name", **arguments, first_name=first_name, last_name=last_name)
    assert corrected["first_name"] == first_name


async def test_compensation_needs_its_check_and_is_issued_once_per_segment(travel: Sandbox) -> None:
    intent = first(travel, "delay_compensation")
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        success, payload = await call(client, "issue_compensation", segment_id=intent["segment_id"])
        assert not success and payload["error"] == "eligibility_not_checked"
        checked = await ok(client, "check_compensation", segment_id=intent["segment_id"])
        issued = await ok(client, "issue_compensation", segment_id=intent["segment_id"])
        success, payload = await call(client, "issue_compensation", segment_id=intent["segment_id"])
    assert checked["amount"] == issued["voucher_amount"] == intent["amount"]
    assert not success and payload["error"] == "already_compensated"


async def test_a_short_delay_earns_no_compensation(travel: Sandbox) -> None:
    facts = data(travel)
    code, segment = next(
        (code, s)
        for code in sorted(facts.reservations)
        for s in facts.segments[code]
        if s["status"] == "flown" and facts.flights[s["flight_id"]]["delay_minutes"] < 120 and facts.confirmed(code)
    )
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=holder(travel, code)["email"])
        success, payload = await call(client, "check_compensation", segment_id=segment["segment_id"])
    assert not success and payload["error"] == "not_eligible"


async def test_a_taken_seat_or_one_in_another_cabin_is_refused(travel: Sandbox) -> None:
    intent = first(travel, "seat_change")
    facts = data(travel)
    flight_id = intent["new_seat_id"].split("/")[0]
    taken = next(s for s in facts.seats[flight_id] if s["passenger_id"] and s["passenger_id"] != intent["passenger_id"])
    cabin = next(s for s in facts.segments[intent["reservation_id"]] if s["segment_id"] == intent["segment_id"])[
        "cabin"
    ]
    elsewhere = next(s for s in facts.seats[flight_id] if s["cabin"] != cabin)
    arguments = {k: intent[k] for k in ("reservation_id", "segment_id", "passenger_id")}
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        results = [await call(client, "change_seat", **arguments, seat=seat) for seat in (elsewhere["seat"], "99Z")]
        if taken["cabin"] == cabin:
            results.append(await call(client, "change_seat", **arguments, seat=taken["seat"]))
    errors = [payload["error"] for success, payload in results if not success]
    assert errors[:2] == ["fare_rules", "no_such_record"]
    assert errors[2:] in ([], ["seat_unavailable"])


async def test_a_fourth_bag_is_refused_and_bag_fees_follow_the_tier(travel: Sandbox) -> None:
    intent = first(travel, "add_checked_bag")
    arguments = {"reservation_id": intent["reservation_id"], "passenger_id": intent["passenger_id"]}
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        quote = await ok(client, "quote_bags", **arguments, bags=intent["bags"])
        added = await ok(client, "add_checked_bags", **arguments, bags=intent["bags"])
        success, payload = await call(client, "add_checked_bags", **arguments, bags=rules.MAX_BAGS)
        invalid, zero = await call(client, "add_checked_bags", **arguments, bags=0)
    assert quote["fees"] == added["fees"] == intent["fees"]
    assert not success and payload["error"] == "bag_limit"
    assert not invalid and zero["error"] == "bad_request"


async def test_an_upgrade_beyond_the_account_s_miles_is_insufficient_funds(travel: Sandbox) -> None:
    intent = first(travel, "upgrade_cabin")
    arguments = {
        "reservation_id": intent["reservation_id"],
        "segment_id": intent["segment_id"],
        "new_cabin": intent["cabin"],
    }
    async with open_trial(travel) as (client, database):
        await ok(client, "find_customer_by_email", email=intent["email"])
        quote = await ok(client, "quote_change", **arguments)
        with database.engine.begin() as connection:  # the holder spent their miles elsewhere meanwhile
            connection.execute(
                m.loyalty_accounts.update()
                .where(m.loyalty_accounts.c.loyalty_id == intent["loyalty_id"])
                .values(miles=0)
            )
        success, payload = await call(client, "upgrade_cabin", **arguments)
    assert quote["miles"] > 0
    assert not success and payload["error"] == "insufficient_miles"
    assert travel.domain.errors["insufficient_miles"] == "insufficient_funds"


async def test_a_split_leaves_someone_on_the_original_reservation(travel: Sandbox) -> None:
    intent = first(travel, "change_one_passenger")
    code = intent["reservation_id"]
    everyone = [p["passenger_id"] for p in data(travel).passengers[code]]
    async with open_trial(travel) as (client, _):
        await ok(client, "find_customer_by_email", email=intent["email"])
        success, payload = await call(client, "split_reservation", reservation_id=code, passenger_ids=everyone)
        assert not success and payload["error"] == "bad_request"
        split = await ok(client, "split_reservation", reservation_id=code, passenger_ids=[intent["passenger_id"]])
        moved = await ok(client, "get_reservation", reservation_id=split["reservation_id"])
    assert split["reservation_id"] == intent["new_reservation_id"]
    assert [p["passenger_id"] for p in moved["passengers"]] == [intent["passenger_id"]]
