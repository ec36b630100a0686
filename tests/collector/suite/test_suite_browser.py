"""`passhat suite table --html` in headless Chromium: step through the domains, drag k, the seed's points drawn,
and nothing leaves the page. Chromium is Debian's (/usr/bin/chromium) driven by Playwright, as the report's test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from passhat.collector.suite import suite_table, write_html
from tests.collector.suite.conftest import StoredRuns

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


def _cell(page: Page, run_id: str, column: str) -> str:
    return page.locator(f"tr[data-run='{run_id}'] td.{column}").first.inner_text().split("\n")[0].strip()


def test_the_html_table_steps_through_domains_and_drags_k(
    browser: Browser, stored_runs: StoredRuns, tmp_path: Path
) -> None:
    table = suite_table(stored_runs.store, "default", [stored_runs.sloppy, stored_runs.careful])
    path = write_html(table, tmp_path / "suite.html")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(path.resolve().as_uri(), wait_until="load")

    # The first domain, its ranking (careful first) and its figures as the table computed them.
    assert page.locator("#domain-name").inner_text() == "retail"
    ranked = page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.run)")
    assert ranked == [stored_runs.careful, stored_runs.sloppy]
    sloppy = table.cells["retail"][stored_runs.sloppy]
    assert _cell(page, stored_runs.sloppy, "at1") == f"{100 * sloppy['pass_at_1']:.1f}%"
    assert _cell(page, stored_runs.sloppy, "hatk") == f"{100 * sloppy['pass_hat_k']:.1f}%"

    # Drag k to 1: pass^1 is pass@1.
    page.locator("#k").fill("1")
    assert page.locator("#k-value").inner_text() == "1" and page.locator("#h-hat-k").inner_text() == "pass^1"
    assert _cell(page, stored_runs.sloppy, "hatk") == _cell(page, stored_runs.sloppy, "at1")

    # Step to the next domain (button, then the arrow key) and back round to retail.
    page.locator("#next").click()
    assert page.locator("#domain-name").inner_text() == "travel"
    page.keyboard.press("ArrowRight")
    assert page.locator("#domain-name").inner_text() == "overall"
    page.locator("#prev").click()
    page.locator("#prev").click()
    assert page.locator("#domain-name").inner_text() == "retail"

    # The seed's three published points are drawn, with the agents' curves.
    seeds = page.locator("[data-seed]").evaluate_all("nodes => nodes.map(n => n.dataset.seed)")
    assert seeds == ["pass@1", "pass@20", "pass^20"]
    assert page.locator("text=seed pass^20 25.3%").count() == 1
    assert page.locator("polyline[data-curve='pass_hat_k']").count() == 2
    assert page.locator("#pairs tr").count() == 1
    assert page.get_by_text("simulation").count() >= 2

    assert [url for url in requests if url != path.resolve().as_uri()] == []
    assert errors == []
    page.close()
