"""The insurance domain's content: its task types, tables and kinds, the policy's rules, and both seed sizes
(what every domain must do is tested over all of them in test_every_domain.py)."""

from __future__ import annotations

from sqlalchemy import create_engine, select

from passhat.sandbox import available_domains, load_domain
from passhat.sandbox.domains.insurance import models as m
from passhat.sandbox.domains.insurance import seed as insurance_seed

REQUIRED_TASK_TYPES = {
    "collision_claim",
    "glass_claim",
    "theft_claim",
    "third_party_liability",
    "rental_authorization",
    "schedule_inspection",
    "total_loss_valuation",
    "add_driver",
    "remove_vehicle",
    "update_claim_contact",
    "coverage_inquiry",
    "lapsed_policy_claim",
    "duplicate_claim",
    "other_policyholder_claim",
}
REQUIRED_TABLES = {
    "policyholders",
    "policies",
    "vehicles",
    "drivers",
    "coverages",
    "claims",
    "claim_parties",
    "incidents",
    "adjusters",
    "inspections",
    "rental_authorizations",
    "payments",
}


def test_insurance_is_installed_with_its_task_types_tables_and_kinds() -> None:
    assert "insurance" in available_domains()
    domain = load_domain("insurance")
    assert set(domain.task_types) >= REQUIRED_TASK_TYPES
    assert set(domain.metadata.tables) >= REQUIRED_TABLES
    assert {"write", "read_only", "refuse", "confidentiality", "chain"} <= {t.kind for t in domain.task_types.values()}
    assert len(domain.systems) == 7 and len(domain.tool_systems) == 20
    # Each error type maps onto a classifier category; the skipped steps of the chains are preconditions.
    for error in ("caller_not_verified", "police_report_required", "adjuster_not_assigned", "valuation_missing"):
        assert domain.errors[error] == "precondition_failed"


def test_the_policy_is_package_data_with_the_claim_rules() -> None:
    policy = load_domain("insurance").policy
    for rule in (
        "active policy on the incident date",
        "police report number",
        "One open claim per incident",
        "waive the deductible",
        "per-day limit and maximum number of days",
        "actual cash value",
    ):
        assert rule in policy, rule


def _seeded(seed: int, size: str) -> dict[str, list[tuple[object, ...]]]:
    engine = create_engine("sqlite://")
    m.metadata.create_all(engine)
    with engine.begin() as connection:
        insurance_seed.seed(connection, seed, size)
        return {
            name: [tuple(row) for row in connection.execute(select(table).order_by(*table.primary_key.columns))]
            for name, table in m.metadata.tables.items()
        }


def test_both_seed_sizes_are_deterministic_and_default_is_bigger() -> None:
    small, default = _seeded(0, "small"), _seeded(0, "default")
    assert default == _seeded(0, "default")
    assert small != _seeded(1, "small")
    assert len(default["policyholders"]) > len(small["policyholders"])
    assert all(small[name] for name in REQUIRED_TABLES), [name for name in REQUIRED_TABLES if not small[name]]
