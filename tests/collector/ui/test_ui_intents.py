"""The same intent field shows three values across pages (production redacted, the trial's pseudonym, the
sandbox's synthetic customer): each page says which one it shows, and none shows a production clear value."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from passhat.sandbox import TrialDetails
from tests.collector.store.store_contract import new_trace_id, now_ns, ticket_span
from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import trial

TICKET = "SHOP-intent-0"
RUN = "run-shop-2026-W47"
SANDBOX_EMAIL = "daniel.sato82@example.com"  # the sandbox's own synthetic customer
PSEUDONYM = "1aa852a75c7db6c5@example.com"  # the trial tracer's pseudonym of it


def _seed(ui: UiCollector) -> str:
    production = ticket_span(TICKET, intent={"email": "[REDACTED:email]", "order_id": "O-1"}, start_ns=now_ns())
    trace = new_trace_id()
    replayed = ticket_span(
        f"{TICKET}#0", source="sandbox", trace_id=trace, intent={"email": PSEUDONYM, "order_id": "O-1"},
        run_id=RUN, attempt=0,
    )  # fmt: skip
    ui.store.write_batch("shop", [production, replayed])
    row = trial(RUN, "refund", TICKET, 0, True, dt.datetime.now(dt.UTC).replace(microsecond=0))
    details = row.details.to_json() | {
        "tool_calls": [{"name": "find_customer_by_email", "arguments": {"email": SANDBOX_EMAIL}, "outcome": "ok",
                        "error_type": None, "is_write": False}],
    }  # fmt: skip
    ui.store.add_trials("shop", [dataclasses.replace(row, trace_id=trace, details=TrialDetails.from_json(details))])
    return trace


def _text(page: str, testid: str, end: str = "section") -> str:
    found = re.search(rf'data-testid="{testid}"[^>]*>(.*?)</{end}>', page, re.S)
    assert found is not None, testid
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", found.group(1)))


def test_each_page_says_which_value_of_the_intent_it_shows(ui: UiCollector) -> None:
    trace = _seed(ui)
    with ui.client(ui.shop_key) as client:
        production = client.get(f"/ui/tickets/{TICKET}").text
        replayed = client.get(f"/ui/tickets/{TICKET}?trace={trace}").text
        attempts = client.get(f"/ui/runs/{RUN}/tickets/{TICKET}").text
    intent = _text(production, "intent")
    assert "Intent (recorded in production)" in intent
    assert "[REDACTED:email] (redacted before export)" in intent
    assert "passhat never holds the customer's value" in intent
    assert PSEUDONYM not in production and SANDBOX_EMAIL not in production

    intent = _text(replayed, "intent")
    assert "Intent (recorded by this replay trial)" in intent
    assert f"{PSEUDONYM} (a pseudonym, not the address)" in intent
    assert "The sandbox's stand-in for the production ticket's intent" in intent

    assert SANDBOX_EMAIL in attempts  # what the agent looked up in the sandbox ...
    assert "the sandbox's own synthetic records" in _text(attempts, "sandbox-data", "p")  # ... labelled as such
