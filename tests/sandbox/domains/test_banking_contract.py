"""The banking domain's content: its task types and tables, two-factor identity, seed sizes and the fraud
chain's credit limit (what every domain must do is tested over all of them in test_every_domain.py)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from passhat.sandbox import Sandbox, available_domains, load_domain
from passhat.sandbox.domains.banking import models

TASK_TYPES = {
    "unauthorized_charge",
    "duplicate_charge",
    "refund_not_received",
    "cancelled_subscription_charged",
    "atm_cash_not_dispensed",
    "fee_reversal",
    "overdraft_fee_dispute",
    "lock_card",
    "replace_damaged_card",
    "travel_notice",
    "dispute_status_inquiry",
    "dispute_window_expired",
    "second_fee_waiver",
    "joint_holder_details",
}
TABLES = {
    "customers",
    "accounts",
    "account_holders",
    "cards",
    "merchants",
    "transactions",
    "disputes",
    "provisional_credits",
    "chargebacks",
    "fee_waivers",
    "card_replacements",
    "travel_notices",
    "fraud_flags",
}


def test_banking_is_installed_with_its_task_types_and_tables() -> None:
    assert "banking" in available_domains()
    domain = load_domain("banking")
    assert set(domain.task_types) == TASK_TYPES
    assert set(models.metadata.tables) == TABLES
    kinds = {task.name: task.kind for task in domain.task_types.values()}
    assert kinds["unauthorized_charge"] == kinds["overdraft_fee_dispute"] == "chain"
    assert kinds["dispute_status_inquiry"] == "read_only"
    assert kinds["dispute_window_expired"] == kinds["second_fee_waiver"] == "refuse"
    assert kinds["joint_holder_details"] == "confidentiality"


def test_identity_is_two_factors_and_the_policy_says_so() -> None:
    domain = load_domain("banking")
    assert domain.identity is not None and domain.identity.kind == "two_factors"
    assert [factor.tool for factor in domain.identity.factors] == ["find_customer_by_card", "verify_date_of_birth"]
    policy = domain.policy
    for rule in ("two factors", "60 days of the statement", "only the\n  duplicate", "12 months", "500.00"):
        assert rule in policy, rule


@pytest.mark.slow
def test_the_default_size_has_five_times_the_customers(banking: Sandbox) -> None:
    def customers(sandbox: Sandbox) -> int:
        with sandbox.template.connect() as connection:
            return int(connection.execute(select(func.count()).select_from(models.customers)).scalar() or 0)

    with Sandbox("banking", seed=0, size="default") as large:
        assert (customers(banking), customers(large)) == (120, 600)


def test_the_fraud_chain_credits_only_within_the_limit(banking: Sandbox) -> None:
    intents = [s.intent for s in banking.scenarios("unauthorized_charge", 300)]
    assert {i["credit"] for i in intents} == {True, False}
    assert all(i["credit"] == (i["amount"] <= models.PROVISIONAL_CREDIT_LIMIT) for i in intents)
