"""Task family: an unauthorized charge, a chain of four writes (block, dispute, credit, replace).

The policy's order is also the backend's: a fraud dispute needs the card blocked first, so an agent that skips
the block gets its dispute rejected (`card_not_blocked`, a precondition). The provisional credit is issued only
within the limit, and a blocked card is always replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Check, all_of, inserted, no_other_writes, updated
from passhat.sandbox.agents import ReferenceRun, perform_write
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.banking import models as m
from passhat.sandbox.domains.banking.data import Intent, bank_script, charge_of, data_for, facts_of, identity
from passhat.sandbox.domains.banking.rules import balance_after_credit, credit_amount_allowed, decision_due
from passhat.sandbox.domains.banking.steps import (
    card_by_digits,
    disputed_ids,
    find_charge,
    money,
    other_active_card,
    sibling_charge,
    verified_profile,
)


def candidates(connection: Connection) -> list[Intent]:
    """Every open card purchase on an active card of a customer with another active card (the card a wrong
    agent blocks) and another open purchase on the same card (the charge a wrong agent disputes)."""
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        if len(data.active_cards(customer_id)) < 2:
            continue
        for account in data.primary_accounts(customer_id):
            rows = data.by_account[account["account_id"]]
            for charge in rows:
                card = data.cards.get(charge["card_id"] or "")
                if charge["kind"] != "purchase" or card is None or card["status"] != "active":
                    continue
                if not data.open_charge(charge) or not data.unique(customer_id, charge):
                    continue
                others = [
                    t for t in rows if t is not charge and t["card_id"] == card["card_id"] and data.open_charge(t)
                ]
                if not any(t["kind"] == "purchase" for t in others):
                    continue
                credit = credit_amount_allowed("unauthorized", charge["amount"])
                found.append(
                    {
                        **identity(data, customer_id, card),
                        **charge_of(charge),
                        "card_id": card["card_id"],
                        "merchant_id": charge["merchant_id"],
                        "network": card["network"],
                        "address": data.customers[customer_id]["address"],
                        "credit": credit,
                        "balance_after": balance_after_credit(account, charge["amount"]) if credit else None,
                    }
                )
    return found


def script(intent: Mapping[str, Any]) -> CustomerScript:
    what = f"a charge of {money(intent['amount'])} from {intent['charge']} on {intent['date']}"
    return bank_script(
        goal=f"Report {what} on my card ending {intent['card_last_four']} that I did not make, get it refunded "
        "and get a new card.",
        opening=f"Hi, there's {what} on my card ending {intent['card_last_four']} that I never made.",
        facts=facts_of(intent, "charge", "amount", "date"),
        stated=("card_last_four", "charge", "amount", "date"),
    )


def check(intent: Mapping[str, Any]) -> Check:
    card_id, amount = intent["card_id"], intent["amount"]
    steps = [
        updated("cards", {"card_id": card_id}, {"status": "blocked", "status_reason": "fraud"}),
        inserted("fraud_flags", {"customer_id": intent["customer_id"], "card_id": card_id, "status": "open"}),
        inserted(
            "disputes",
            {
                "transaction_id": intent["transaction_id"],
                "account_id": intent["account_id"],
                "customer_id": intent["customer_id"],
                "reason": "unauthorized",
                "amount": amount,
                "status": "open",
                "decision_due": decision_due(),
            },
        ),
        inserted("chargebacks", {"merchant_id": intent["merchant_id"], "network": intent["network"], "amount": amount}),
        inserted("card_replacements", {"card_id": card_id, "reason": "fraud", "ship_to": intent["address"]}),
    ]
    if intent["credit"]:
        steps += [
            inserted("provisional_credits", {"account_id": intent["account_id"], "amount": amount, "status": "issued"}),
            updated("accounts", {"account_id": intent["account_id"]}, {"balance": intent["balance_after"]}),
        ]
    return all_of(*steps, no_other_writes())


async def unauthorized_charge(run: ReferenceRun) -> None:
    """Block the card, open a fraud dispute, credit it within the limit, order a replacement."""
    customer_id, profile = await verified_profile(run)
    await run.ask("Which charge is it: the merchant, the amount and the date?", "charge", "amount", "date")
    charge, rows = await find_charge(run, profile)
    disputed = await disputed_ids(run, customer_id)
    card = card_by_digits(profile, run.facts.get("card_last_four")) or {"card_id": charge["card_id"]}
    card_id, amount = str(charge["card_id"]), float(charge["amount"])
    if card["card_id"] != card_id:
        await run.finish("I'm sorry, that charge was not made with the card you named; please check the statement.")
    other = other_active_card(profile, card_id)
    # The block is the dispute's precondition: the flawed agent skips it and the dispute is rejected.
    if not run.take_flaw("skip_precondition"):
        await perform_write(
            run,
            "block_card",
            {"card_id": card_id, "reason": "fraud"},
            summary=f"To protect you I will block the card ending {run.facts.get('card_last_four')} for good and "
            "flag it for fraud.",
            sibling={"card_id": other["card_id"], "reason": "fraud"} if other else None,
            broken={"card_id": card_id, "reason": "suspicious"},
        )
    wrong = sibling_charge(rows, charge, disputed, lambda t: t["kind"] == "purchase" and t["card_id"] == card_id)
    opened = await perform_write(
        run,
        "open_dispute",
        {"transaction_id": charge["transaction_id"], "reason": "unauthorized", "amount": amount},
        summary=f"I will open a fraud dispute for {money(amount)} from {charge['description']} on "
        f"{charge['posted_on']}.",
        sibling={"transaction_id": wrong["transaction_id"], "reason": "unauthorized", "amount": wrong["amount"]}
        if wrong
        else None,
        broken={"transaction_id": charge["transaction_id"], "reason": "fraud", "amount": amount},
    )
    dispute_id = opened.data["dispute_id"]
    credited = ""
    if credit_amount_allowed("unauthorized", amount):
        await perform_write(
            run,
            "issue_provisional_credit",
            {"dispute_id": dispute_id, "amount": amount},
            summary=f"I will credit {money(amount)} provisionally while we investigate.",
            broken={"dispute_id": dispute_id, "amount": 0},
        )
        credited = f" {money(amount)} is credited provisionally while we investigate."
    else:
        credited = (
            f" Disputes above {money(m.PROVISIONAL_CREDIT_LIMIT)} get no provisional credit; the amount comes back "
            "if the dispute is decided in your favour."
        )
    await perform_write(
        run,
        "order_replacement_card",
        {"card_id": card_id, "reason": "fraud"},
        summary="I will order a replacement card to your address on file.",
        broken={"card_id": card_id, "reason": "compromised"},
    )
    await run.finish(
        f"Done: the card is blocked, dispute {dispute_id} is open (decision by {opened.data['decision_due']})."
        f"{credited} A replacement card arrives in about 7 days."
    )
