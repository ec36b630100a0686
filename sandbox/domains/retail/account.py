"""Retail task type on the account: change the default address, with the ReferenceAgent's plan (a simulation)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection

from passhat.checks import (
    Check,
    all_of,
    no_other_writes,
    updated,
)
from passhat.sandbox.agents import ReferenceRun, identify
from passhat.sandbox.domain import CustomerScript
from passhat.sandbox.domains.retail.data import (
    Intent,
    data_for,
    facts_of,
    identity,
    new_address,
    retail_script,
)
from passhat.sandbox.domains.retail.steps import (
    fetch_customer,
    write,
)

# -- account --------------------------------------------------------------------------------------------


def default_address_candidates(connection: Connection) -> list[Intent]:
    data = data_for(connection)
    found: list[Intent] = []
    for customer_id in sorted(data.customers):
        addresses = data.addresses[customer_id]
        if len(addresses) < 2:
            continue
        default = next(a for a in addresses if a["is_default"])
        found.append(
            {
                **identity(data, customer_id),
                "address_id": default["address_id"],
                "address": new_address(customer_id),
            }
        )
    return found


def default_address_script(intent: Mapping[str, Any]) -> CustomerScript:
    address = intent["address"]
    text = f"{address['address1']} {address['address2']}, {address['city']}, {address['state']} {address['zip']}"
    return retail_script(
        goal=f"Make {text} my default address.",
        opening=f"Hello, I moved to {text}. Please update my default address.",
        facts=facts_of(intent, "address"),
        stated=("address",),
    )


def default_address_check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("addresses", {"address_id": intent["address_id"]}, dict(intent["address"])), no_other_writes()
    )


# -- reference plan (the offline ReferenceAgent, a simulation) -------------------------------------------


async def change_default_address(run: ReferenceRun) -> None:
    """Change the customer's default address."""
    customer_id = await identify(run)
    facts = await run.ask("What is the new address?", "address")
    profile = await fetch_customer(run, customer_id)
    default = next((a for a in profile["addresses"] if a["is_default"]), None)
    if default is None:
        await run.finish("I'm sorry, I could not find a default address on your account.")
        return
    address = dict(facts["address"])
    arguments = {"customer_id": customer_id, "address_id": default["address_id"], **address}
    other = next((a for a in profile["addresses"] if not a["is_default"]), None)
    wrong = {**arguments, "address_id": other["address_id"]} if other else None
    summary = f"I will change your default address to {address['address1']}, {address['city']} {address['zip']}."
    await write(run, "modify_customer_address", arguments, summary=summary, sibling=wrong)
    await run.finish("Your default address is updated.")
