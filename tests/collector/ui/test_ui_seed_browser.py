"""The seed's views and the run comparison in headless Chromium over a real collector: the k slider by keyboard,
each page at 1280, 1024 and 390 px without horizontal overflow or console errors, the traffic table with long task
type names. Screenshots go to `test-artifacts/ui/` (those in docs/images/ were taken from these pages)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from passhat.collector.store import parse_period
from tests.collector.server import new_key
from tests.collector.store.store_contract import NS, ticket_span
from tests.collector.ui import ui_data
from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.test_ui_browser import Session, browser

pytestmark = pytest.mark.slow
__all__ = ["browser"]  # the module-scoped Chromium fixture, shared with the UI's other browser tests


def test_the_k_slider_moves_with_the_keyboard_and_reads_out_both_figures_with_intervals(
    ui: UiCollector, browser: Browser
) -> None:
    desktop = Session(browser, width=1280, height=900)
    try:
        desktop.sign_in(ui.url, ui.shop_key)
        page = desktop.page
        slider = page.get_by_label("Attempts k")
        readout = page.locator("[data-k-readout]")
        marker = page.locator("[data-k-marker]")
        expect(readout).to_contain_text("k = 4: pass@4")
        at_k = float(marker.get_attribute("x1") or "nan")
        slider.focus()
        page.keyboard.press("ArrowLeft")
        expect(readout).to_contain_text("k = 3: pass@3")
        assert float(marker.get_attribute("x1") or "nan") < at_k
        page.keyboard.press("Home")
        expect(readout).to_have_text("k = 1: pass@1 " + readout.inner_text().split("pass@1 ")[1])
        expect(readout).to_contain_text("pass^1")
        page.keyboard.press("End")
        expect(readout).to_contain_text("k = 4: pass@4")
        assert float(marker.get_attribute("x1") or "nan") == at_k
        expect(slider).to_have_attribute("aria-valuetext", readout.inner_text())
        headline = page.get_by_test_id("headlines").locator("tbody tr").first
        pass_hat = readout.inner_text().split("pass^4 ")[1].split(",")[0]  # "55.6% (26–81%)"
        value, interval = pass_hat.split(" (")
        expect(headline).to_contain_text(value)
        expect(headline).to_contain_text(interval.rstrip(")"))  # the band at k = 4 is the headline's interval
        assert desktop.errors == [] and desktop.outside == []
    finally:
        desktop.close()


@contextlib.contextmanager
def _script_held_back(ui: UiCollector, browser: Browser, path: str) -> Iterator[tuple[Page, list[Route]]]:
    """A signed-in page at ``path``, server-rendered, whose ui.js request is held (in the list) until the test
    lets it go: a slow load, on which the user acts before the script runs."""
    session = Session(browser, width=1280, height=900)
    held: list[Route] = []
    try:
        session.sign_in(ui.url, ui.shop_key)
        page = session.page
        page.route("**/static/ui.js", lambda route: held.append(route))
        page.goto(f"{ui.url}{path}", wait_until="commit")
        yield page, held
    finally:
        session.close()


def test_the_slider_moved_before_the_pages_script_ran_reads_out_where_it_is(ui: UiCollector, browser: Browser) -> None:
    """On a slow load a keyboard user can move the slider before ui.js runs (the page shows it, server-rendered,
    first): the readout must then say the k the slider is at, not the k the page was rendered at. CI met this as
    a race in the test above; here the script is held back until the key was pressed."""
    with _script_held_back(ui, browser, "/ui/") as (page, held):
        slider = page.get_by_label("Attempts k")
        readout = page.locator("[data-k-readout]")
        expect(readout).to_contain_text("k = 4: pass@4")
        slider.focus()
        page.keyboard.press("ArrowLeft")
        expect(slider).to_have_value("3")
        expect(readout).to_contain_text("k = 4: pass@4")  # no script yet: nothing updated it
        assert len(held) == 1
        held[0].continue_()
        expect(readout).to_contain_text("k = 3: pass@3")
        expect(slider).to_have_attribute("aria-valuetext", readout.inner_text())


def test_the_attempt_stepper_shows_only_once_its_script_can_step(ui: UiCollector, browser: Browser) -> None:
    """Its buttons did nothing until ui.js ran: a click on a slow load was lost (a race the newcomer's-path test
    could meet too). The stepper is hidden until the script sets it up."""
    with _script_held_back(ui, browser, "/ui/runs/run-shop-2026-W47/tickets/SHOP-cancel-2") as (page, held):
        expect(page.get_by_test_id("attempts").locator("article")).to_have_count(4)
        next_attempt = page.get_by_role("button", name="Next attempt")
        expect(next_attempt).to_be_hidden()
        assert len(held) == 1
        held[0].continue_()
        next_attempt.click()
        expect(page.locator("[data-step-label]")).to_have_text("Attempt 2 of 4: pass")


def _tables_scrolling(page: Page) -> list[str | None]:
    """The tables of the page that are wider than their scrolling box (by their test id)."""
    found: list[str | None] = page.evaluate(
        "[...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > e.clientWidth)"
        ".map(e => e.querySelector('table')?.dataset.testid)"
    )
    return found


@pytest.mark.parametrize(("width", "height", "mobile"), [(1280, 900, False), (1024, 768, False), (390, 844, True)])
def test_the_seed_views_and_the_comparison_fit_the_window(
    ui: UiCollector, browser: Browser, width: int, height: int, mobile: bool
) -> None:
    session = Session(browser, width=width, height=height, mobile=mobile)
    a, b = ui.shop.official_runs
    try:
        session.sign_in(ui.url, ui.shop_key)
        pages = (
            ("overview", "/ui/", "headlines"),
            ("task-type", "/ui/task-types/refund", "task-type-headline"),
            ("compare", f"/ui/runs/compare?a={a}&b={b}", "compare-paired"),
        )
        for name, path, testid in pages:
            session.page.goto(f"{ui.url}{path}")
            expect(session.page.get_by_test_id(testid)).to_be_visible()
            # clientWidth, not innerWidth: a phone's layout viewport widens to content that overflows it.
            overflow = session.page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{path} is {overflow}px wider than a {width} px window"
            # On a desktop the traffic table does not scroll sideways: its "From" column was cut at 1280 px (the
            # demo's task type names), its long headers now fold. At 1280 no table of these pages scrolls.
            wide = _tables_scrolling(session.page)
            if width >= 1280:
                assert wide == [], f"{path}: these tables are wider than a {width} px window: {wide}"
            elif not mobile:  # at 1024 px the overview's task types too (intervals under the figures)
                assert not {"traffic", "overview"} & set(wide), f"{path}: wider than a {width} px window: {wide}"
            session.shot(f"seed-{name}-{width}")
        session.page.goto(f"{ui.url}/ui/runs")
        session.page.get_by_test_id("compare-link").click()
        expect(session.page.get_by_test_id("compare-form")).to_be_visible()
        session.page.get_by_label("A, the baseline").select_option(a)
        session.page.get_by_label("B, the candidate").select_option(b)
        session.page.get_by_role("button", name="Compare").click()
        expect(session.page.get_by_test_id("became-unreliable")).to_contain_text("SHOP-cancel-0")
        assert session.errors == [] and session.outside == []
    finally:
        session.close()


def test_the_overview_tables_fit_a_desktop_window_with_long_task_type_names(
    ui: UiCollector, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's task type names are long ("change_pending_payment"): the overview's traffic table, whose long
    headers did not fold, scrolled sideways in a 1280 px window with the demo's figures (its "From" column cut at
    the edge), and in a 1024 px one with these. Its task types table scrolled by about 160 px at 1024 px (its
    intervals beside the figures, its trend header whole); below 1200 px the intervals go under the figures."""
    names = ("change_pending_payment", "return_delivered_items", "gift_card_insufficient")
    monkeypatch.setattr(ui_data, "TASK_TYPES", names)
    monkeypatch.setattr(ui_data, "PASSES", dict(zip(names, ui_data.PASSES.values(), strict=True)))
    ui_data.seed(ui.store, "wide")
    # Production traffic in the official run's period (W47), which the calculator's shares come from.
    monday = dt.datetime.combine(parse_period(ui_data.PERIODS[1]).start, dt.time(9), tzinfo=dt.UTC)
    start = int(monday.timestamp()) * NS
    spans = [
        ticket_span(f"W47-{name}-{n}", task_type=name, start_ns=start + (i * 3 + n) * NS)
        for i, name in enumerate(names)
        for n in range(3)
    ]
    ui.store.write_batch("wide", spans)
    key = new_key(ui.store, "wide")
    for width in (1280, 1024):
        session = Session(browser, width=width, height=900)
        try:
            session.sign_in(ui.url, key)
            expect(session.page.get_by_test_id("traffic")).to_contain_text("change_pending_payment")
            wide = _tables_scrolling(session.page)
            assert wide == [], f"these tables are wider than a {width} px window: {wide}"
            session.shot(f"traffic-long-names-{width}")
        finally:
            session.close()


def test_ticket_ids_and_badges_stay_whole_beside_long_signature_lists(
    ui: UiCollector, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside a ticket's signatures (the demo's: five or six long names), a task type's sampled tickets and a run's
    tickets broke their ids at the hyphen ("T-2026-W49-" over "00185"), and "failed some" and "side by side" over
    two lines, while the signatures had room to fold: ids, badges and links now stay whole, the list folds."""
    labels = ("tool_usage.error_not_retried", "tool_usage.precondition", "policy_violation", "tool_usage.empty_lookup")
    plain = ui_data.trial

    def trial(run_id: str, task_type: str, ticket: str, attempt: int, passed: bool, started: dt.datetime) -> Any:
        row = plain(run_id, task_type, ticket, attempt, passed, started)
        return row if passed else dataclasses.replace(row, failure_label=labels[attempt % len(labels)])

    names = ("change_pending_payment", "return_delivered_items", "gift_card_insufficient")
    monkeypatch.setattr(ui_data, "trial", trial)
    monkeypatch.setattr(ui_data, "TASK_TYPES", names)
    monkeypatch.setattr(ui_data, "PASSES", {name: ((0, 1, 0), (1, 0, 2)) for name in names})
    seeded = ui_data.seed(ui.store, "wide")
    key = new_key(ui.store, "wide")
    session = Session(browser, width=1024, height=900)
    try:
        session.sign_in(ui.url, key)
        pages = (
            (f"/ui/task-types/{names[0]}", "sampled"),
            (f"/ui/runs/{seeded.official_runs[1]}", "run-tickets"),
        )
        for path, testid in pages:
            session.page.goto(f"{ui.url}{path}")
            expect(session.page.get_by_test_id(testid)).to_contain_text("tool_usage.error_not_retried")
            broken = session.page.evaluate(
                f"[...document.querySelectorAll('[data-testid={testid}] tbody :is(th a, .badge, td:last-child a)')]"
                ".filter(e => e.getClientRects().length > 1).map(e => e.textContent)"
            )
            assert broken == [], f"{path}: over two lines: {broken}"
            session.shot(f"whole-ids-{testid}-1024")
    finally:
        session.close()
