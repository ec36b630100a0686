"""The auto-insurance backend's tables (SQLAlchemy Core, one MetaData): policies, their vehicles, drivers and
coverages, and the claims filed against them with everything claim intake produces."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

metadata = MetaData()

policyholders = Table(
    "policyholders",
    metadata,
    Column("policyholder_id", String, primary_key=True),
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    Column("email", String, nullable=False, unique=True),
    Column("phone", String, nullable=False),
    Column("zip", String, nullable=False),
    Column("region", String, nullable=False),  # north | south | east | west | central
)

policies = Table(
    "policies",
    metadata,
    Column("policy_id", String, primary_key=True),  # the policy number, e.g. AUT-482913-K
    Column("policyholder_id", String, ForeignKey("policyholders.policyholder_id"), nullable=False, index=True),
    Column("status", String, nullable=False),  # active | lapsed
    Column("term_start", String, nullable=False),
    Column("term_end", String, nullable=False),
    Column("lapsed_on", String, nullable=True),  # the first day without cover, for a lapsed policy
    Column("premium", Float, nullable=False),  # annual premium, USD
)

vehicles = Table(
    "vehicles",
    metadata,
    Column("vehicle_id", String, primary_key=True),
    Column("policy_id", String, ForeignKey("policies.policy_id"), nullable=False, index=True),
    Column("vin", String, nullable=False, unique=True),
    Column("year", Integer, nullable=False),
    Column("make", String, nullable=False),
    Column("model", String, nullable=False),
    Column("actual_cash_value", Float, nullable=False),  # what the car is worth today, USD
    Column("annual_premium", Float, nullable=False),  # its share of the policy's premium
    Column("status", String, nullable=False),  # active | removed
    Column("removed_on", String, nullable=True),
    Column("removal_reason", String, nullable=True),
)

drivers = Table(
    "drivers",
    metadata,
    Column("driver_id", Integer, primary_key=True, autoincrement=True),
    Column("policy_id", String, ForeignKey("policies.policy_id"), nullable=False, index=True),
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    Column("license_number", String, nullable=False),
    Column("date_of_birth", String, nullable=False),
    Column("relationship", String, nullable=False),  # named_insured | spouse | child | other
    Column("status", String, nullable=False),  # active | excluded
    Column("added_on", String, nullable=False),
)

coverages = Table(
    "coverages",
    metadata,
    Column("coverage_id", String, primary_key=True),
    Column("policy_id", String, ForeignKey("policies.policy_id"), nullable=False, index=True),
    Column("kind", String, nullable=False),  # liability | collision | comprehensive | glass | rental | roadside
    Column("limit_amount", Float, nullable=False),
    Column("deductible", Float, nullable=False),
    Column("per_day_limit", Float, nullable=True),  # rental only
    Column("max_days", Integer, nullable=True),  # rental only
)

incidents = Table(
    "incidents",
    metadata,
    Column("incident_id", Integer, primary_key=True, autoincrement=True),
    Column("policy_id", String, ForeignKey("policies.policy_id"), nullable=False, index=True),
    Column("vehicle_id", String, ForeignKey("vehicles.vehicle_id"), nullable=False, index=True),
    Column("kind", String, nullable=False),  # collision | glass | theft | third_party
    Column("occurred_on", String, nullable=False),
    Column("location", String, nullable=False),
    Column("description", Text, nullable=False),
    Column("police_report_number", String, nullable=True),
    Column("reported_on", String, nullable=False),
)

adjusters = Table(
    "adjusters",
    metadata,
    Column("adjuster_id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("region", String, nullable=False),
    Column("specialty", String, nullable=False),  # auto_damage | total_loss
    Column("phone", String, nullable=False),
)

claims = Table(
    "claims",
    metadata,
    Column("claim_id", Integer, primary_key=True, autoincrement=True),
    Column("policy_id", String, ForeignKey("policies.policy_id"), nullable=False, index=True),
    Column("incident_id", Integer, ForeignKey("incidents.incident_id"), nullable=False, index=True),
    Column("vehicle_id", String, ForeignKey("vehicles.vehicle_id"), nullable=False),
    Column("coverage", String, nullable=False),  # the coverage kind the claim is under
    Column("status", String, nullable=False),  # open | settled | closed | denied
    Column("deductible", Float, nullable=False),  # what the policyholder pays on this claim
    Column("contact_phone", String, nullable=False),
    Column("contact_email", String, nullable=False),
    Column("opened_on", String, nullable=False),
    Column("adjuster_id", String, ForeignKey("adjusters.adjuster_id"), nullable=True),
    Column("total_loss", Boolean, nullable=False, default=False),  # the adjuster's finding after inspection
    Column("valuation", Float, nullable=True),  # total-loss valuation (the vehicle's actual cash value)
)

claim_parties = Table(
    "claim_parties",
    metadata,
    Column("party_id", Integer, primary_key=True, autoincrement=True),
    Column("claim_id", Integer, ForeignKey("claims.claim_id"), nullable=False, index=True),
    Column("role", String, nullable=False),  # third_party | witness | passenger
    Column("name", String, nullable=False),
    Column("phone", String, nullable=False),
    Column("insurer", String, nullable=False),
    Column("vehicle_plate", String, nullable=False),
)

inspections = Table(
    "inspections",
    metadata,
    Column("inspection_id", Integer, primary_key=True, autoincrement=True),
    Column("claim_id", Integer, ForeignKey("claims.claim_id"), nullable=False, index=True),
    Column("adjuster_id", String, ForeignKey("adjusters.adjuster_id"), nullable=False),
    Column("scheduled_on", String, nullable=False),
    Column("location", String, nullable=False),
    Column("status", String, nullable=False),  # scheduled | completed
)

rental_authorizations = Table(
    "rental_authorizations",
    metadata,
    Column("authorization_id", Integer, primary_key=True, autoincrement=True),
    Column("claim_id", Integer, ForeignKey("claims.claim_id"), nullable=False, index=True),
    Column("daily_rate", Float, nullable=False),
    Column("days", Integer, nullable=False),
    Column("total", Float, nullable=False),
    Column("status", String, nullable=False),  # authorized
    Column("authorized_on", String, nullable=False),
)

payments = Table(
    "payments",
    metadata,
    Column("payment_id", Integer, primary_key=True, autoincrement=True),
    Column("claim_id", Integer, ForeignKey("claims.claim_id"), nullable=False, index=True),
    Column("kind", String, nullable=False),  # repair | total_loss
    Column("amount", Float, nullable=False),
    Column("payee", String, nullable=False),
    Column("status", String, nullable=False),  # issued
    Column("issued_on", String, nullable=False),
)

notes = Table(
    "notes",
    metadata,
    Column("note_id", Integer, primary_key=True, autoincrement=True),
    Column("policyholder_id", String, nullable=True),
    Column("kind", String, nullable=False),  # transfer
    Column("body", Text, nullable=False),
    Column("created_on", String, nullable=False),
)

TODAY = "2026-06-10"
"""The sandbox's fixed 'today': incident dates, terms and new rows' dates are computed from it."""

COVERAGE_FOR_LOSS: dict[str, tuple[str, ...]] = {
    "collision": ("collision",),
    "glass": ("glass", "comprehensive"),
    "theft": ("comprehensive",),
    "third_party": ("liability",),
}
"""Which coverage kinds pay for which kind of loss, in the order they apply (glass before comprehensive)."""

RENTAL_COVERAGES = ("collision", "comprehensive")
"""A rental car is authorized only on a claim under one of these (the policyholder's own car is off the road)."""

REMOVAL_REASONS = ("sold", "no longer driven", "total loss")
RELATIONSHIPS = ("spouse", "child", "other")
YOUNG_DRIVER_AGE = 25
YOUNG_DRIVER_SURCHARGE = 480.0
DRIVER_SURCHARGE = 150.0
"""A new driver adds this to the annual premium (more when under YOUNG_DRIVER_AGE on TODAY)."""
