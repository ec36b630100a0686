"""report.html in headless Chromium: the k control moves the numbers, the calculator computes, nothing leaves the page.

Chromium is the Debian package (`apt-get install chromium`, listed in .ci/apt-packages), driven by Playwright with
its executable path; Playwright's own browser downloads are never used.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright

from passhat.collector.reliability import calculate
from passhat.collector.report import Report, write_report

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.slow


def _pct(value: float) -> str:
    if 0 < value < 0.001:
        return f"{100 * value:.2g}%"
    return f"{100 * value:.1f}%"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


class OpenedPage:
    """A page loaded from a file, with every request it made and every console error it printed."""

    def __init__(self, browser: Browser, path: Path) -> None:
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page: Page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.page.on("request", self._on_request)
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(self.url, wait_until="load")

    def _on_request(self, request: Request) -> None:
        self.requests.append(request.url)

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type in {"error", "warning"}:
            self.errors.append(message.text)

    def text(self, selector: str) -> str:
        return self.page.locator(selector).first.inner_text().strip()

    def left_page(self) -> list[str]:
        return [url for url in self.requests if url != self.url]


@pytest.fixture
def opened(browser: Browser, synthetic_report: Report, tmp_path: Path) -> Iterator[OpenedPage]:
    paths = write_report(synthetic_report, tmp_path / "report")
    page = OpenedPage(browser, paths["html"])
    yield page
    page.page.close()


def test_moving_k_updates_the_readout_the_marker_and_the_table(opened: OpenedPage, synthetic_report: Report) -> None:
    curve = synthetic_report.curve
    page = opened.page
    assert opened.text("#k-value") == "20"
    assert opened.text("#curve-hat") == _pct(curve.pass_hat_k[19])
    marker_before = page.locator("#curve-chart .marker").get_attribute("x1")
    dot_before = page.locator("#curve-chart .marker-dot").nth(1).get_attribute("cy")

    page.locator("#k-range").fill("3")
    assert opened.text("#k-value") == "3"
    assert opened.text("#curve-at") == _pct(curve.pass_at_k[2])
    assert opened.text("#curve-hat") == _pct(curve.pass_hat_k[2])
    assert opened.text("#curve-note").startswith("measured")
    assert page.locator("#curve-chart .marker").get_attribute("x1") != marker_before
    assert page.locator("#curve-chart .marker-dot").nth(1).get_attribute("cy") != dot_before
    assert opened.text("#task-types .k-now") == "3"
    first_row = int(page.locator("td.hat-at-k").first.get_attribute("data-row") or "0")
    own_curve = synthetic_report.task_type_curves[first_row]
    assert opened.text("td.hat-at-k").splitlines()[0] == _pct(own_curve.pass_hat_k[2])
    assert own_curve.pass_hat_k_band is not None
    low, high = own_curve.pass_hat_k_band[2]
    assert opened.text("td.hat-at-k .ci").startswith(f"[{100 * low:.1f}, {100 * high:.1f}]")

    # Dragging by keyboard, as a user would: two steps right from k = 3.
    page.locator("#k-range").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert opened.text("#k-value") == "5"
    assert opened.text("#curve-hat") == _pct(curve.pass_hat_k[4])

    page.locator("#k-range").fill("50")
    assert opened.text("#curve-note").startswith("beyond the trials run")
    assert opened.text("#curve-hat") == _pct(curve.pass_hat_k[49])
    # A task type with fewer tickets than MIN_EXTRAPOLATION_TICKETS is not extrapolated: its cell says so.
    own = synthetic_report.task_type_curves[first_row]
    assert opened.text("td.hat-at-k").splitlines()[0] == ("–" if len(own.k) < 50 else _pct(own.pass_hat_k[49]) + "*")
    page.locator("#k-range").fill("1")
    assert opened.text("#curve-gap") == "0.0 pts"  # pass@1 and pass^1 are the same number
    assert opened.errors == []


def test_calculator_matches_the_python_calculator(opened: OpenedPage) -> None:
    page = opened.page
    page.locator("#calc-rate").fill("80")
    page.locator("#calc-tickets").fill("2000")
    page.locator("#calc-noticed").fill("30")
    page.locator("#calc-k").fill("8")
    expected = calculate(success_rate=0.8, tickets_per_day=2000, noticed_share=0.3, k=8)
    assert opened.text("#calc-failed") == f"{expected.failed_tickets_per_day:,.0f}"
    assert opened.text("#calc-noticed-out") == f"{expected.noticed_failures_per_day:,.0f}"
    assert opened.text("#calc-at") == _pct(expected.pass_at_k)
    assert opened.text("#calc-hat") == _pct(expected.pass_hat_k)
    assert opened.text("#calculator .calc-k-now") == "8"

    page.locator("#calc-rate").fill("180")
    assert "success rate (%) must lie between 0 and 100" in opened.text("#calc-error")
    assert opened.text("#calc-hat") == "–"
    assert opened.errors == []


def test_no_request_leaves_the_page_and_a_screenshot_is_kept(
    opened: OpenedPage, tmp_path: Path, synthetic_report: Report
) -> None:
    opened.page.locator("#k-range").fill("10")
    shot = tmp_path / f"report-{synthetic_report.period}.png"
    opened.page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    artifacts = os.environ.get("PASSHAT_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / shot.name)
    assert opened.requests == [opened.url]
    assert opened.left_page() == []
    assert opened.errors == []


def test_the_request_watch_would_see_an_external_reference(
    browser: Browser, opened: OpenedPage, tmp_path: Path
) -> None:
    """The control for the test above: the same watch, on a copy of the page that loads an image from a port."""
    html = Path(opened.url.removeprefix("file://")).read_text(encoding="utf-8")
    leaky = html.replace('<meta http-equiv="Content-Security-Policy"', '<meta name="x-csp-removed"').replace(
        "</footer>", '<img src="http://127.0.0.1:9/pixel.png" alt=""></footer>'
    )
    path = tmp_path / "leaky.html"
    path.write_text(leaky, encoding="utf-8")
    other = OpenedPage(browser, path)
    try:
        assert other.left_page() == ["http://127.0.0.1:9/pixel.png"]
    finally:
        other.page.close()


def test_the_embedded_json_is_the_report(opened: OpenedPage, synthetic_report: Report) -> None:
    data: Any = opened.page.evaluate("JSON.parse(document.getElementById('report-data').textContent)")
    assert data["period"] == synthetic_report.period
    assert data["overall"]["pass_hat_k"] == pytest.approx(synthetic_report.overall.weighted.pass_hat_k)
    assert len(data["curve"]["k"]) == 50
