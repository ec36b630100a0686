"""The report email's HTML body in headless Chromium: user markup stays text, nothing runs, nothing is fetched, the
layout fits a mail client's 640 pixels, and a screenshot is kept (the one in docs/reports.md comes from here).

Set ``PASSHAT_ARTIFACTS=DIR`` to have the screenshot copied there, and ``PASSHAT_UPDATE_DOCS_IMAGES=1`` to write
it to docs/images/report-email.png.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Dialog, Page, sync_playwright

from passhat.collector.report import OpenAlertLine, Report, ReportDigest, email_html
from passhat.collector.report._format import pct

from .report_hostile import EVIL_AGENT, EVIL_ALERT, EVIL_TASK, hostile_digest, hostile_report

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
DOCS_IMAGE = Path(__file__).resolve().parents[3] / "docs" / "images" / "report-email.png"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def _open(browser: Browser, body: str, folder: Path, *, javascript: bool = True) -> tuple[Page, list[str], list[str]]:
    """The body loaded from a file; every request the page made, and every dialog a script tried to open."""
    path = folder / "email.html"
    path.write_text(body, encoding="utf-8")
    context = browser.new_context(viewport={"width": 700, "height": 900}, java_script_enabled=javascript)
    page = context.new_page()
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.goto(path.resolve().as_uri(), wait_until="load")
    return page, requests, dialogs


def test_user_markup_in_the_email_stays_text_and_nothing_runs_or_loads(browser: Browser, tmp_path: Path) -> None:
    report = hostile_report()
    page, requests, dialogs = _open(browser, email_html(hostile_digest(report)), tmp_path)
    try:
        assert page.locator("script").count() == 0 and page.locator("img").count() == 0
        assert page.locator("style").count() == 0 and page.locator("link").count() == 0
        text = page.locator("body").inner_text()
        # The hostile names read as the user typed them: shown, not executed.
        assert f"retail/{EVIL_TASK}" in text and EVIL_AGENT in text and EVIL_ALERT in text
        assert dialogs == []
        assert requests == [page.url]  # the file itself, and nothing else
        assert pct(report.overall.weighted.pass_hat_k) in text
        width = page.evaluate("document.querySelector('table table').getBoundingClientRect().width")
        assert 0 < width <= 640
        assert page.locator("a").get_attribute("href") == "https://passhat.example.test/ui/runs/run-123"
    finally:
        page.context.close()


def test_the_email_screenshot(browser: Browser, simulated_report: Report, tmp_path: Path) -> None:
    digest = ReportDigest(
        report=simulated_report,
        project="shop",
        open_alerts=[
            OpenAlertLine(
                "refund-drop", "refund", "2026-W47", "pass^20 of refund dropped from 52.0% to 30.0% (p = 0.004)"
            )
        ],
        link="https://passhat.example.com/ui/runs/run-2026-W48-3f2a9c1e",
    )
    # As a mail client shows it: scripts off (there are none to run anyway).
    page, requests, _ = _open(browser, email_html(digest), tmp_path, javascript=False)
    try:
        text = page.locator("body").inner_text()
        assert "Simulated agent." in text and "Least reliable task types" in text and "refund-drop" in text
        shot = tmp_path / "report-email.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 20_000
        assert requests == [page.url]
    finally:
        page.context.close()
    artifacts = os.environ.get("PASSHAT_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / shot.name)
    if os.environ.get("PASSHAT_UPDATE_DOCS_IMAGES"):
        DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, DOCS_IMAGE)
