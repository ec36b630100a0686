"""The banking MCP tools through a real in-memory MCP client: two-factor identity, refusals in the domain's
words, and the writes the policy's steps make."""

from __future__ import annotations

from sqlalchemy import select

from passhat.sandbox import Sandbox
from passhat.sandbox.domains.banking import models as m
from tests.sandbox.domains.banking_trial import call, must, open_trial, verify


async def test_every_account_tool_refuses_an_unverified_caller(banking: Sandbox) -> None:
    intent = banking.scenarios("lock_card", 1)[0].intent
    async with open_trial(banking) as (client, _):
        refused, error = await call(client, "get_customer", customer_id=intent["customer_id"])
        assert not refused and error["error"] == "caller_not_verified"
        refused, error = await call(client, "lock_card", card_id=intent["card_id"], reason="misplaced")
        assert not refused and error["error"] == "caller_not_verified"


async def test_one_factor_is_not_enough_and_a_wrong_birth_date_fails(banking: Sandbox) -> None:
    intent = banking.scenarios("lock_card", 1)[0].intent
    async with open_trial(banking) as (client, _):
        skipped, error = await call(
            client, "verify_date_of_birth", customer_id=intent["customer_id"], date_of_birth=intent["date_of_birth"]
        )
        assert not skipped and error["error"] == "verification_incomplete"
        found = await must(
            client, "find_customer_by_card", last_name=intent["last_name"], card_last_four=intent["card_last_four"]
        )
        assert found == {"customer_id": intent["customer_id"], "first_name": intent["first_name"], "verified": False}
        refused, error = await call(client, "get_customer", customer_id=intent["customer_id"])
        assert not refused and error["error"] == "caller_not_verified"
        wrong, error = await call(
            client, "verify_date_of_birth", customer_id=intent["customer_id"], date_of_birth="1900-01-01"
        )
        assert not wrong and error["error"] == "identity_mismatch"
        await must(
            client, "verify_date_of_birth", customer_id=intent["customer_id"], date_of_birth=intent["date_of_birth"]
        )
        profile = await must(client, "get_customer", customer_id=intent["customer_id"])
    assert intent["card_id"] in {card["card_id"] for card in profile["cards"]}


async def test_a_fraud_dispute_needs_the_card_blocked_first(banking: Sandbox) -> None:
    intent = banking.scenarios("unauthorized_charge", 1)[0].intent
    dispute = {"transaction_id": intent["transaction_id"], "reason": "unauthorized", "amount": intent["amount"]}
    async with open_trial(banking) as (client, database):
        await verify(client, intent)
        refused, error = await call(client, "open_dispute", **dispute)
        assert not refused and error["error"] == "card_not_blocked"
        refused, error = await call(client, "order_replacement_card", card_id=intent["card_id"], reason="fraud")
        assert not refused and error["error"] == "card_not_blocked"
        await must(client, "block_card", card_id=intent["card_id"], reason="fraud")
        opened = await must(client, "open_dispute", **dispute)
        again, error = await call(client, "open_dispute", **dispute)
        assert not again and error["error"] == "already_disputed"
        with database.engine.connect() as connection:
            flags = connection.execute(select(m.fraud_flags).where(m.fraud_flags.c.card_id == intent["card_id"]))
            chargebacks = connection.execute(
                select(m.chargebacks).where(m.chargebacks.c.dispute_id == opened["dispute_id"])
            ).all()
            assert [row.status for row in flags] == ["open"] and len(chargebacks) == 1


async def test_provisional_credit_is_limited_to_eligible_disputes_within_the_limit(banking: Sandbox) -> None:
    big = next(s.intent for s in banking.scenarios("unauthorized_charge", 400) if s.intent["amount"] > 500)
    refund = banking.scenarios("refund_not_received", 1)[0].intent
    async with open_trial(banking) as (client, _):
        await verify(client, big)
        await must(client, "block_card", card_id=big["card_id"], reason="fraud")
        opened = await must(
            client, "open_dispute", transaction_id=big["transaction_id"], reason="unauthorized", amount=big["amount"]
        )
        refused, error = await call(
            client, "issue_provisional_credit", dispute_id=opened["dispute_id"], amount=big["amount"]
        )
        assert not refused and error["error"] == "credit_limit_exceeded"
    async with open_trial(banking) as (client, _):
        await verify(client, refund)
        opened = await must(
            client,
            "open_dispute",
            transaction_id=refund["transaction_id"],
            reason="refund_not_received",
            amount=refund["amount"],
        )
        refused, error = await call(
            client, "issue_provisional_credit", dispute_id=opened["dispute_id"], amount=refund["amount"]
        )
        assert not refused and error["error"] == "credit_not_eligible"


async def test_disputes_close_sixty_days_after_the_statement(banking: Sandbox) -> None:
    intent = banking.scenarios("dispute_window_expired", 1)[0].intent
    async with open_trial(banking) as (client, _):
        await verify(client, intent)
        refused, error = await call(
            client,
            "open_dispute",
            transaction_id=intent["transaction_id"],
            reason="refund_not_received",
            amount=intent["amount"],
        )
    assert not refused and error["error"] == "dispute_window_closed"
    assert intent["statement_date"] in error["message"]


async def test_a_second_waiver_within_twelve_months_is_refused(banking: Sandbox) -> None:
    intent = banking.scenarios("second_fee_waiver", 1)[0].intent
    async with open_trial(banking) as (client, _):
        await verify(client, intent)
        refused, error = await call(
            client, "waive_fee", transaction_id=intent["transaction_id"], amount=intent["amount"]
        )
    assert not refused and error["error"] == "waiver_limit_reached"
    assert intent["last_waived_on"] in error["message"]


async def test_a_fee_on_an_overdrawn_account_waits_for_the_transfer(banking: Sandbox) -> None:
    intent = banking.scenarios("overdraft_fee_dispute", 1)[0].intent
    async with open_trial(banking) as (client, _):
        await verify(client, intent)
        refused, error = await call(
            client, "waive_fee", transaction_id=intent["transaction_id"], amount=intent["amount"]
        )
        assert not refused and error["error"] == "account_overdrawn"
        await must(
            client,
            "transfer_between_accounts",
            from_account_id=intent["savings_id"],
            to_account_id=intent["account_id"],
            amount=intent["transfer"],
        )
        waived = await must(client, "waive_fee", transaction_id=intent["transaction_id"], amount=intent["amount"])
    assert waived["balance"] == intent["balance_after"]


async def test_bad_arguments_are_refusals_in_the_domain_vocabulary(banking: Sandbox) -> None:
    intent = banking.scenarios("travel_notice", 1)[0].intent
    async with open_trial(banking) as (client, _):
        await verify(client, intent)
        for name, arguments in (
            ("lock_card", {"card_id": intent["card_id"], "reason": "lost it somewhere"}),
            (
                "add_travel_notice",
                {
                    "card_id": intent["card_id"],
                    "destination": "Peru",
                    "start_date": "2026-07-10",
                    "end_date": "2026-07-01",
                },
            ),
            (
                "add_travel_notice",
                {
                    "card_id": intent["card_id"],
                    "destination": "Peru",
                    "start_date": "2026-07-01",
                    "end_date": "2026-12-01",
                },
            ),
            ("transfer_between_accounts", {"from_account_id": "A0", "to_account_id": "A0", "amount": 5.0}),
        ):
            refused, error = await call(client, name, **arguments)
            assert not refused and error["error"] in banking.domain.errors, (name, error)
        refused, error = await call(client, "lock_card", card_id="K99999", reason="misplaced")
        assert not refused and error["error"] == "no_such_card"


async def test_each_server_keeps_its_own_verified_caller(banking: Sandbox) -> None:
    intent = banking.scenarios("lock_card", 1)[0].intent
    async with open_trial(banking) as (first, _):
        await verify(first, intent)
        async with open_trial(banking) as (second, _):
            refused, error = await call(second, "get_customer", customer_id=intent["customer_id"])
            assert not refused and error["error"] == "caller_not_verified"
        await must(first, "get_customer", customer_id=intent["customer_id"])
