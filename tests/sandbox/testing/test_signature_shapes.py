"""The failure shapes a careful reader names, reproduced in the shipped domains where they occur."""

from __future__ import annotations

import asyncio

import pytest

from passhat.sandbox.testing import mutate_scenario
from passhat.sandbox.trial import Sandbox

SHAPES = [
    # A chain stopped before its last step, on a row an earlier step touched: unresolved, not a wrong value.
    ("banking", "overdraft_fee_dispute", "dropped_write", "unresolved"),
    ("insurance", "total_loss_valuation", "dropped_write", "unresolved"),
    ("travel", "change_one_passenger", "dropped_write", "unresolved"),
    # A wrong fact in a refusal or an answer: a policy violation, whatever errors the backend gave first.
    ("banking", "second_fee_waiver", "wrong_fact", "policy_violation"),
    ("travel", "compensation_already_issued", "wrong_fact", "policy_violation"),
    ("retail", "order_status_inquiry", "wrong_fact", "policy_violation"),
    # A value written wrong on the right row, and a write before the customer's yes.
    ("banking", "overdraft_fee_dispute", "wrong_value", "wrong_value"),
    ("consulting", "license_reclaim", "before_consent", "policy_violation"),
]


@pytest.mark.parametrize(("domain", "task_type", "mutation", "label"), SHAPES)
def test_each_shape_gets_its_name(
    domain: str, task_type: str, mutation: str, label: str, request: pytest.FixtureRequest
) -> None:
    sandbox: Sandbox = request.getfixturevalue(domain)  # the session's sandbox of that domain
    scenario = sandbox.scenarios(task_type, 1)[0]
    mutated = asyncio.run(mutate_scenario(sandbox, scenario))
    found = {m.mutation: m for m in mutated if m.mutation in ("reference", mutation)}
    assert found["reference"].agrees, found["reference"].describe()
    assert found[mutation].expected == label
    assert found[mutation].seen == label, found[mutation].describe()


def test_a_refusal_that_states_the_wrong_date_of_the_last_waiver_fails(banking: Sandbox) -> None:
    scenario = banking.scenarios("second_fee_waiver", 1)[0]
    mutated = asyncio.run(mutate_scenario(banking, scenario))
    (wrong,) = [m for m in mutated if m.mutation == "wrong_fact"]
    assert wrong.detail.startswith(f"{scenario.intent['last_waived_on']} said as ")
    assert wrong.seen == "policy_violation"
