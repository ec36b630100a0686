"""report.html and the report email at a laptop's 1280 px and a phone's 390 px, in headless Chromium, offline.

No horizontal overflow (the page never scrolls sideways; wide tables stack or scroll in their own box), no console
error, no request leaving the file, the charts' legends outside their plot areas, and the attempts strip stepped by
keyboard. Set ``PASSHAT_UPDATE_DOCS_IMAGES=1`` to write the screenshots docs/reports.md shows to docs/images/.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from passhat.collector.report import Report, ReportDigest, email_html, write_report

from .report_hostile import hostile_report

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
DOCS_IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
WIDTHS = [1280, 1024, 390]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


class Opened:
    """A file opened at a width, with every request it made and every console error or warning it printed."""

    def __init__(self, browser: Browser, path: Path, width: int, *, javascript: bool = True) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=javascript)
        self.page: Page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in {"error", "warning"} else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url, wait_until="load")

    def overflow(self) -> int:
        """How many pixels the page is wider than the window (0: no horizontal scrolling)."""
        width: int = self.page.evaluate(
            "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - document.documentElement.clientWidth"
        )
        return width

    def scrolling_tables(self) -> list[str]:
        """The sections whose table scrolls sideways inside its box (a last resort: tables should fit)."""
        found: list[str] = self.page.evaluate(
            "Array.from(document.querySelectorAll('.table-wrap'))"
            ".filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.closest('section').id)"
        )
        return found

    def box(self, selector: str) -> dict[str, float]:
        found: Any = self.page.locator(selector).first.evaluate(
            "e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; }"
        )
        return {key: float(value) for key, value in found.items()}

    def text(self, selector: str) -> str:
        return self.page.locator(selector).first.inner_text().strip()


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


def test_the_overlap_check_sees_overlapping_boxes() -> None:
    """The control for the legend check below."""
    assert _overlap({"x": 0, "y": 0, "w": 10, "h": 10}, {"x": 5, "y": 5, "w": 10, "h": 10})
    assert not _overlap({"x": 0, "y": 0, "w": 10, "h": 10}, {"x": 0, "y": 10, "w": 10, "h": 10})


@pytest.fixture(scope="module")
def report_html(synthetic_report: Report, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(synthetic_report, tmp_path_factory.mktemp("report"))["html"]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_fits_the_window_and_its_legends_stay_off_the_plot(
    browser: Browser, report_html: Path, width: int, tmp_path: Path
) -> None:
    opened = Opened(browser, report_html, width)
    try:
        assert opened.overflow() <= 0
        assert opened.scrolling_tables() == []
        for chart in ("#curve svg", "#trend svg"):
            legend, plot = opened.box(f"{chart} g.legend"), opened.box(f"{chart} rect.plot-area")
            assert legend["w"] > 0 and plot["w"] > 0
            assert not _overlap(legend, plot), (chart, legend, plot)
        # The generation time reads as a date with its time zone, not an ISO string.
        assert "generated 30 Nov 2026, 06:05 UTC" in opened.text("header .sub")
        shot = tmp_path / f"report-{width}.png"
        opened.page.screenshot(path=str(shot), full_page=width > 400)
        assert shot.stat().st_size > 20_000
        if os.environ.get("PASSHAT_UPDATE_DOCS_IMAGES"):
            DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
            (DOCS_IMAGES / shot.name).write_bytes(shot.read_bytes())
        assert opened.requests == [opened.url]
        assert opened.errors == []
    finally:
        opened.context.close()


def test_the_attempts_strip_steps_by_keyboard(browser: Browser, report_html: Path) -> None:
    opened = Opened(browser, report_html, 1280)
    page = opened.page
    try:
        assert opened.text("#attempts-position") == "cards 1–4 of 20"
        assert page.locator("#attempts-prev").is_disabled()
        page.locator("#attempts-next").focus()
        page.keyboard.press("Enter")
        assert opened.text("#attempts-position") == "cards 5–8 of 20"
        strip, fifth = opened.box("#attempts-strip"), opened.box("#attempts-strip .attempt:nth-child(5)")
        assert abs(fifth["x"] - strip["x"]) < 2  # the fifth card now starts the strip
        page.keyboard.press("Shift+Tab")  # back to "previous", enabled now
        assert page.evaluate("document.activeElement.id") == "attempts-prev"
        page.keyboard.press("Enter")
        assert opened.text("#attempts-position") == "cards 1–4 of 20"
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "attempts-strip"
        page.keyboard.press("ArrowRight")
        assert opened.text("#attempts-position") == "cards 2–5 of 20"
        page.keyboard.press("End")
        assert opened.text("#attempts-position") == "cards 17–20 of 20"
        assert page.locator("#attempts-next").is_disabled()
        page.keyboard.press("Home")
        assert opened.text("#attempts-position") == "cards 1–4 of 20"
        assert opened.errors == []
    finally:
        opened.context.close()


def test_on_a_phone_the_strip_shows_one_card_and_steps(browser: Browser, report_html: Path) -> None:
    opened = Opened(browser, report_html, 390)
    try:
        assert opened.text("#attempts-position") == "card 1 of 20"
        opened.page.locator("#attempts-next").click()
        assert opened.text("#attempts-position") == "card 2 of 20"
        # Stacked rows: every cell of the task types table names its column.
        assert opened.page.locator("#task-types td[data-label='pass@1']").count() == 6
        assert opened.overflow() <= 0
    finally:
        opened.context.close()


@pytest.fixture(scope="module")
def hostile_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report whose task types and agent are long, markup-laden names."""
    return write_report(hostile_report(), tmp_path_factory.mktemp("hostile"))["html"]


@pytest.mark.parametrize("width", WIDTHS)
def test_long_names_do_not_widen_the_page(browser: Browser, hostile_html: Path, width: int) -> None:
    opened = Opened(browser, hostile_html, width)
    try:
        assert opened.overflow() <= 0
        assert opened.scrolling_tables() == []
        assert opened.errors == []
    finally:
        opened.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_email_fits_a_phone(browser: Browser, synthetic_report: Report, tmp_path: Path, width: int) -> None:
    path = tmp_path / "email.html"
    path.write_text(email_html(ReportDigest(report=synthetic_report, project="shop")), encoding="utf-8")
    opened = Opened(browser, path, width, javascript=False)
    try:
        assert opened.overflow() <= 0
        assert opened.requests == [opened.url]
        assert "pass^20" in opened.text("body")
    finally:
        opened.context.close()
