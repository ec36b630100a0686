"""Verdicts in the web UI: production tickets with their own verdict and signature, replayed tickets with their
attempts' tally, both filterable in the ticket list (over real HTTP and in headless Chromium), and the verdict on
the ticket page."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from passhat.collector.store import ProductionVerdict, Store
from tests.collector.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS
from tests.collector.ui.conftest import UiCollector

WRONG = "SHOP-refund-0"
RIGHT = "SHOP-cancel-0"


def _grade(store: Store) -> None:
    """SHOP-refund-0 graded wrong_entity (its agent said resolved), SHOP-cancel-0 passed; the rest ungraded."""
    found = {t.ticket_id: t for t in store.search_tickets("shop", source="production", limit=100)}
    wrong, right = found[WRONG], found[RIGHT]
    failed = ProductionVerdict(
        ticket_id=WRONG, trace_id=wrong.trace_id, task_type=wrong.task_type, start_time_ns=wrong.start_time_ns,
        passed=False, graded_at=dt.datetime.now(dt.UTC), domain="retail", signature="wrong_entity",
        evidence="refunded order O-2, not O-1",
        verdict={"passed": False, "check": "refund", "children": [], "diagnostics": [
            {"check": "no_other_writes", "message": "orders O-2: status changed, which nothing expected"}
        ]},
        graded_by="run-shop-2026-W47",
    )  # fmt: skip
    passed = dataclasses.replace(
        failed, ticket_id=RIGHT, trace_id=right.trace_id, task_type=right.task_type,
        start_time_ns=right.start_time_ns, passed=True, signature=None, evidence=None,
        verdict={"passed": True, "check": "cancel", "children": [], "diagnostics": []},
    )  # fmt: skip
    store.put_production_verdicts("shop", [failed, passed])


def _rows(html: str) -> list[str]:
    return re.findall(r'<th scope="row"><a href="/ui/tickets/([^"?]+)\?', html)


def test_the_ticket_list_shows_and_filters_production_verdicts(ui: UiCollector) -> None:
    _grade(ui.store)
    with ui.client(ui.shop_key) as client:
        listed = client.get("/ui/tickets?source=production").text
        failed = client.get("/ui/tickets?verdict=failed").text
        passed = client.get("/ui/tickets?verdict=passed").text
        by_signature = client.get("/ui/tickets?signature=wrong_entity").text
        ungraded = client.get("/ui/tickets?verdict=ungraded").text
        fragment = client.get("/ui/tickets?verdict=failed", headers={"HX-Request": "true"}).text
        trials = client.get("/ui/tickets?verdict=failed&source=sandbox").text
        other_type = client.get("/ui/tickets?verdict=failed&task_type=exchange").text
    assert "Verdict</th>" in listed and "not graded" in listed and "wrong_entity" in listed
    assert _rows(failed) == [WRONG] and "wrong_entity" in failed and "resolved" in failed
    assert _rows(passed) == [RIGHT]
    assert _rows(by_signature) == [WRONG]
    assert WRONG not in _rows(ungraded) and RIGHT not in _rows(ungraded) and len(_rows(ungraded)) >= 4
    assert _rows(fragment) == [WRONG] and "<form" not in fragment
    assert _rows(trials) == [] and _rows(other_type) == []  # every filter applies together
    assert "<option selected>failed</option>" in failed  # the chosen filter stays chosen


def test_replayed_tickets_show_their_attempts_tally_and_filter_by_it(ui: UiCollector) -> None:
    tallies = ui.store.trial_tallies("shop", ui.shop.tickets)
    all_passed = sorted(t for t, (good, total) in tallies.items() if good == total)
    some_failed = sorted(t for t, (good, total) in tallies.items() if good < total)
    assert all_passed and some_failed, "the seeded runs hold both kinds of ticket"
    with ui.client(ui.shop_key) as client:
        listed = client.get("/ui/tickets?source=production").text
        every = client.get("/ui/tickets?replays=all_passed").text
        some = client.get("/ui/tickets?replays=some_failed").text
        never = client.get("/ui/tickets?replays=not_replayed").text
    good, total = tallies[some_failed[0]]
    assert f"{good}/{total} passed" in listed
    assert sorted(_rows(every)) == all_passed
    assert sorted(_rows(some)) == some_failed
    assert _rows(never) == []


def test_the_ticket_page_shows_the_production_verdict(ui: UiCollector) -> None:
    _grade(ui.store)
    with ui.client(ui.shop_key) as client:
        wrong = client.get(f"/ui/tickets/{WRONG}").text
        other = client.get("/ui/tickets/SHOP-exchange-1").text
    assert "Production verdict" in wrong and "wrong_entity" in wrong
    assert "orders O-2: status changed, which nothing expected" in wrong and "refunded order O-2, not O-1" in wrong
    assert "Not graded" in other and "passhat grade --period" in other


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.mark.slow
def test_choosing_a_verdict_filters_the_list_in_place(ui: UiCollector, browser: Browser) -> None:
    _grade(ui.store)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        page = context.new_page()
        # The browser's own favicon request is not the page's: the UI declares no icon.
        page.on(
            "console",
            lambda m: errors.append(m.text) if m.type == "error" and "favicon" not in m.location["url"] else None,
        )
        page.goto(f"{ui.url}/ui/login")
        page.get_by_label("Project API key").fill(ui.shop_key)
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("project")).to_be_visible()
        page.goto(f"{ui.url}/ui/tickets")
        page.get_by_label("Verdict").select_option("failed")
        rows = page.get_by_test_id("tickets").locator("tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text(WRONG)
        expect(rows.first.get_by_test_id("verdict")).to_contain_text("wrong_entity")
        expect(page).to_have_url(re.compile(r"verdict=failed"))
        page.get_by_label("Verdict").select_option("")
        page.get_by_label("Replays").select_option("not_replayed")
        expect(page.get_by_test_id("no-tickets")).to_be_visible()
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0
        assert errors == [], errors
    finally:
        context.close()
