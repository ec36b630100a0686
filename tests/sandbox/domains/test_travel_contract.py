"""The travel domain's content: its task types and systems, the policy's rules, the default seed's size, and
chains whose skipped step the backend refuses as a precondition (what every domain must do is tested over all of
them in test_every_domain.py)."""

from __future__ import annotations

import asyncio
import random

from sqlalchemy import create_engine, func, select

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, available_domains, load_domain, run_trials
from passhat.sandbox.domains.travel.models import metadata
from passhat.sandbox.domains.travel.seed import seed

TASK_TYPES = {
    "change_flight_date": "write",
    "upgrade_cabin": "write",
    "cancel_within_24h": "write",
    "cancel_refundable": "write",
    "cancel_nonrefundable": "write",
    "add_checked_bag": "write",
    "seat_change": "write",
    "correct_passenger_name": "write",
    "change_one_passenger": "chain",
    "delay_compensation": "write",
    "reservation_inquiry": "read_only",
    "basic_economy_change": "refuse",
    "cancel_partially_flown": "refuse",
    "name_change_transfer": "refuse",
    "compensation_already_issued": "refuse",
    "companion_reservation": "confidentiality",
}


def test_travel_is_installed_with_its_task_types_and_systems() -> None:
    assert "travel" in available_domains()
    domain = load_domain("travel")
    assert {name: task.kind for name, task in domain.task_types.items()} == TASK_TYPES
    assert [system.name for system in domain.systems] == [
        "profiles", "inventory", "reservations", "payments", "baggage", "compensation", "support"
    ]  # fmt: skip
    assert len(domain.metadata.tables) == 14 and domain.grade == "benchmark"


def test_the_policy_is_package_data_with_the_fare_and_compensation_rules() -> None:
    policy = " ".join(load_domain("travel").policy.replace("*", "").split()).lower()
    for rule in ("Basic economy fares cannot be changed", "Within 24 hours of booking", "travel credit",
                 "Only once per segment", "3 characters", "partially flown reservation cannot be cancelled",
                 "silver", "platinum"):  # fmt: skip
        assert rule.lower() in policy, rule


def test_the_default_seed_holds_more_than_twice_the_reservations(travel: Sandbox) -> None:
    engine = create_engine("sqlite://")
    metadata.create_all(engine)
    with engine.begin() as connection:
        seed(connection, 0, "default")
        big = connection.execute(select(func.count()).select_from(metadata.tables["reservations"])).scalar_one()
    assert big > 2 * len(travel.initial.table("reservations").rows)


def _skipped_quote(scenario_id: str) -> int:
    """An attempt whose identification keeps its chance of skipping (index 0) and whose quote loses it (1)."""
    for attempt in range(200):
        draws = [random.Random(f"{scenario_id}#{attempt}#skip_precondition#{i}").random() for i in (0, 1)]
        if draws[0] >= 0.5 > draws[1]:
            return attempt
    raise AssertionError("no such attempt")


def test_a_change_without_its_quote_is_refused_as_a_precondition(travel: Sandbox) -> None:
    # Under per-step rates the quote is the change's own precondition: skipping it (after identifying the
    # customer properly) reaches change_flight, which the backend refuses with quote_required.
    scenario = travel.scenarios("change_flight_date", 1)[0]
    flaws = FlawConfig(rates={"skip_precondition": 0.5}, vary_by_scenario=False)
    attempt = _skipped_quote(scenario.scenario_id)
    results = asyncio.run(run_trials(travel, [scenario], attempt + 1, ReferenceAgent.factory(flaws)))
    result = results[attempt]
    assert result.signature is not None and result.signature.label == "tool_usage.precondition"
    calls = [(c.name, c.error_type) for c in result.record.tool_calls]
    assert ("find_customer_by_email", None) in calls and ("quote_change", None) not in calls
    assert calls[-1] == ("change_flight", "quote_required")
