"""The web UI in headless Chromium: a newcomer's path from the login to a ticket's k attempts, on a desktop and
on a phone; another project's key sees none of it; nothing is requested beyond 127.0.0.1; no console errors.

Chromium is Debian's (`/usr/bin/chromium`), driven by Playwright through its executable path. Screenshots go to
`test-artifacts/ui/` at the repository root (ignored by git); the path is printed with `-s` or on failure.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect, sync_playwright

from passhat.collector.store import ReplayRun, Store
from tests.collector.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS
from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import trial

pytestmark = pytest.mark.slow
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "ui"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


class Session:
    """A browser context that records every request leaving 127.0.0.1 (and refuses it) and every console error."""

    def __init__(self, browser: Browser, *, width: int, height: int, mobile: bool = False) -> None:
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context: BrowserContext = browser.new_context(
            viewport={"width": width, "height": height}, is_mobile=mobile, has_touch=mobile
        )
        self.context.route("**/*", self._route)
        self.page: Page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in {"error", "warning"} else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _route(self, route: Route) -> None:
        host = urlsplit(route.request.url).hostname
        if host == "127.0.0.1" or route.request.url.startswith(("data:", "about:")):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def sign_in(self, url: str, key: str) -> None:
        self.page.goto(f"{url}/ui/")
        expect(self.page).to_have_url(re.compile(r"/ui/login\?next="))
        self.page.get_by_label("Project API key").fill(key)
        self.page.keyboard.press("Enter")
        expect(self.page.get_by_test_id("project")).to_be_visible()

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def desktop(browser: Browser) -> Iterator[Session]:
    session = Session(browser, width=1280, height=900)
    yield session
    session.close()


def test_from_the_overview_to_a_tickets_attempts_side_by_side(ui: UiCollector, desktop: Session) -> None:
    page = desktop.page
    desktop.sign_in(ui.url, ui.shop_key)
    overview = page.get_by_test_id("overview")
    expect(overview.locator("tbody tr").first).to_contain_text("cancel")
    expect(page.get_by_text("1 open alert")).to_be_visible()
    desktop.shot("1-overview-1280")

    overview.get_by_role("link", name="cancel").click()
    expect(page.get_by_role("heading", name="cancel", exact=True)).to_be_visible()
    expect(page.get_by_test_id("periods")).to_contain_text("2026-W47")
    # htmx (a deferred script) binds the filters once the page has loaded; a change made before that is sent again
    # then (test_a_filter_changed_while_the_page_still_loads_is_not_lost). This path is the usual one: after it.
    page.wait_for_load_state("load")
    page.get_by_label("Outcome").select_option("all_failed")  # an htmx fragment replaces the list
    expect(page.get_by_test_id("sampled").locator("tbody tr")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"outcome=all_failed"))
    desktop.shot("2-task-type")

    page.get_by_test_id("sampled").get_by_role("link", name="SHOP-cancel-1").click()
    expect(page.get_by_role("heading", name="Ticket SHOP-cancel-1")).to_be_visible()
    waterfall = page.get_by_test_id("waterfall")
    expect(waterfall.locator("li")).to_have_count(4)
    refund = waterfall.locator("li", has_text="execute_tool refund_order")
    expect(refund.get_by_text("gen_ai.tool.name")).to_be_hidden()
    refund.locator("summary").click()
    expect(refund.get_by_text("gen_ai.tool.name")).to_be_visible()
    expect(page.get_by_test_id("conversation")).to_contain_text("shop: my order")
    expect(page.get_by_test_id("write").first).to_contain_text("refunded")
    desktop.shot("3-ticket-trace")

    page.get_by_test_id("side-by-side").last.click()
    attempts = page.get_by_test_id("attempts").locator("article")
    expect(attempts).to_have_count(4)
    expect(page.get_by_test_id("verdict")).to_have_text(["fail", "fail", "fail", "fail"])
    page.get_by_role("button", name="Next attempt").click()
    expect(page.locator("[data-step-label]")).to_have_text("Attempt 2 of 4: fail")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("[data-step-label]")).to_have_text("Attempt 1 of 4: fail")
    desktop.shot("4-attempts")
    assert desktop.outside == []
    assert desktop.errors == []


def test_a_filter_changed_while_the_page_still_loads_is_not_lost(ui: UiCollector, desktop: Session) -> None:
    """htmx, a deferred script, is held back: the outcome chosen before it binds the form still filters the list
    once it has (and the task type's page before held no such list: its 3 sampled tickets)."""
    page = desktop.page
    desktop.sign_in(ui.url, ui.shop_key)
    held: list[Route] = []
    page.route("**/static/htmx.min.js", lambda route: held.append(route))
    page.goto(f"{ui.url}/ui/task-types/cancel", wait_until="commit")
    outcome = page.get_by_label("Outcome")
    expect(outcome).to_be_visible()
    expect(page.get_by_test_id("sampled").locator("tbody tr")).to_have_count(3)
    outcome.select_option("all_failed")
    page.wait_for_timeout(200)
    assert len(held) == 1, "htmx should still be held back"
    held[0].continue_()
    expect(page.get_by_test_id("sampled").locator("tbody tr")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"outcome=all_failed"))
    assert desktop.errors == []


def test_without_htmx_a_filter_change_still_filters(ui: UiCollector, desktop: Session) -> None:
    """htmx failed to load (blocked): changing a filter submits its form, and the page comes back filtered."""
    page = desktop.page
    desktop.sign_in(ui.url, ui.shop_key)
    page.route("**/static/htmx.min.js", lambda route: route.abort())
    page.goto(f"{ui.url}/ui/task-types/cancel")
    page.get_by_label("Outcome").select_option("all_failed")
    expect(page).to_have_url(re.compile(r"outcome=all_failed"))
    expect(page.get_by_test_id("sampled").locator("tbody tr")).to_have_count(1)
    expect(page.get_by_label("Outcome")).to_have_value("all_failed")


def test_watch_the_verdict_flip_across_attempts(ui: UiCollector, desktop: Session) -> None:
    page = desktop.page
    desktop.sign_in(ui.url, ui.shop_key)
    page.goto(f"{ui.url}/ui/runs/run-shop-2026-W47/tickets/SHOP-cancel-2")
    label = page.locator("[data-step-label]")
    seen = []
    for _ in range(4):
        seen.append(label.inner_text())
        page.get_by_role("button", name="Next attempt").click()
    assert seen == [
        f"Attempt {n} of 4: {v}" for n, v in zip(range(1, 5), ["pass", "pass", "fail", "fail"], strict=True)
    ]
    assert desktop.errors == []


def test_ticket_search_updates_in_place_and_keeps_the_url(ui: UiCollector, desktop: Session) -> None:
    page = desktop.page
    desktop.sign_in(ui.url, ui.shop_key)
    page.get_by_role("link", name="Tickets").click()
    page.get_by_label("Ticket id or intent value").fill("shop-exchange")  # any case, anywhere in the id
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_test_id("tickets").locator("tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("ticket-total")).to_have_text("3 ticket attempts match")
    expect(page).to_have_url(re.compile(r"q=shop-exchange"))
    page.wait_for_load_state("load")  # the usual path: htmx has bound the filters
    page.get_by_label("Sort").select_option("least reliable first")
    expect(page).to_have_url(re.compile(r"sort=verdict"))
    expect(page.get_by_test_id("tickets").locator("tbody tr")).to_have_count(3)
    page.get_by_label("Source").select_option("sandbox")
    expect(page.get_by_test_id("no-tickets")).to_be_visible()
    assert desktop.errors == []


def test_another_projects_key_sees_none_of_the_first(ui: UiCollector, desktop: Session) -> None:
    page = desktop.page
    desktop.sign_in(ui.url, ui.bank_key)
    expect(page.get_by_test_id("project")).to_have_text("bank")
    for path in ("/ui/", "/ui/tickets?ticket=SHOP", "/ui/runs", "/ui/alerts", "/ui/task-types/cancel"):
        page.goto(f"{ui.url}{path}")
        assert "SHOP-" not in page.content() and "run-shop" not in page.content()
    response = page.goto(f"{ui.url}/ui/tickets/SHOP-cancel-1")
    assert response is not None and response.status == 404
    response = page.goto(f"{ui.url}/ui/runs/run-shop-2026-W47/tickets/SHOP-cancel-1")
    assert response is not None and response.status == 404
    assert desktop.outside == []


def _wide_run(store: Store) -> str:
    """A run as wide as the demo's: k = 20 attempts of tickets with long ids and task types."""
    when = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=3)
    names = [("return_delivered_items", f"T-2026-W48-0111{n}") for n in range(3)]
    params = {"period": "2026-W48", "k": 20, "tickets": [t for _, t in names], "tickets_per_task_type": 3}
    store.create_replay_run("shop", ReplayRun("run-2026-W48-804d9380", when, k=20, params=params))
    store.add_trials(
        "shop", [trial("run-2026-W48-804d9380", name, t, a, a % 3 > 0, when) for name, t in names for a in range(20)]
    )
    store.finish_replay_run("shop", "run-2026-W48-804d9380", at=when + dt.timedelta(hours=1))
    return "run-2026-W48-804d9380"


def test_the_pages_fit_a_phone(ui: UiCollector, browser: Browser) -> None:
    phone = Session(browser, width=390, height=844, mobile=True)
    wide = _wide_run(ui.store)
    try:
        phone.sign_in(ui.url, ui.shop_key)
        for name, path in (("overview", "/ui/"), ("ticket", "/ui/tickets/SHOP-refund-0"),
                           ("attempts", "/ui/runs/run-shop-2026-W47/tickets/SHOP-cancel-2"),
                           ("run", "/ui/runs/run-shop-2026-W47"), ("wide-run", f"/ui/runs/{wide}")):  # fmt: skip
            phone.page.goto(f"{ui.url}{path}")
            root = "document.documentElement"
            overflow = phone.page.evaluate(f"{root}.scrollWidth - {root}.clientWidth")
            assert overflow <= 0, f"{path} is {overflow}px wider than the phone"
            phone.shot(f"phone-{name}")
        assert phone.errors == []
    finally:
        phone.close()


def test_everything_is_reachable_by_keyboard(ui: UiCollector, desktop: Session) -> None:
    page = desktop.page
    desktop.sign_in(ui.url, ui.shop_key)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "passhat"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Overview"
    unlabelled = page.evaluate(
        "Array.from(document.querySelectorAll('input, select')).filter(e => e.type !== 'hidden' && !e.labels.length)"
        ".length"
    )
    assert unlabelled == 0


def test_a_running_runs_progress_updates_in_place(ui: UiCollector, desktop: Session) -> None:
    started = dt.datetime.now(dt.UTC)
    tickets = ui.shop.tickets[:2]
    ui.store.create_replay_run(
        "shop", ReplayRun("run-live", started, k=2, params={"period": "2026-W48", "tickets": tickets})
    )
    ui.store.add_trials("shop", [trial("run-live", "refund", tickets[0], 0, True, started)])
    desktop.sign_in(ui.url, ui.shop_key)
    desktop.page.goto(f"{ui.url}/ui/runs/run-live")
    expect(desktop.page.locator("#progress")).to_contain_text("1 of 4 trials")
    ui.store.add_trials("shop", [trial("run-live", "refund", tickets[0], 1, False, started)])
    expect(desktop.page.locator("#progress")).to_contain_text("2 of 4 trials", timeout=15_000)
    assert desktop.errors == []
