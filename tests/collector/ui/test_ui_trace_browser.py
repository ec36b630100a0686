"""The ticket's trace and its attempts in headless Chromium, on a real collector with the web UI: one clock per
trace (a child on another clock is clipped and noted), messages without their text said so, the intent as a
table, each attempt's own trace (or a plain "no trace stored"), where failing attempts depart from the passing
one, and pages that fit 1280 px and 390 px with long evidence kept inside its card. Screenshots of the ticket and
attempts pages are written to docs/images/ (linked from docs/ui.md)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from passhat.collector import CollectorSettings
from passhat.collector.store import NormalizedSpan, ReplayRun, SpanEvent, Store, TrialRow
from passhat.collector.ui import ui_router
from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, TrialResult, run_trial
from passhat.sandbox.domains.mock import domain as mock
from tests.collector.embedded import running_collector
from tests.collector.server import new_key
from tests.collector.store.store_contract import NS, ticket_span, tool_span
from tests.collector.ui.test_ui_browser import Session, browser  # noqa: F401 (the module's browser fixture)

pytestmark = pytest.mark.slow
IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
TICKET = "TR-2026-W48-00042"
RUN = "run-trace"
MODES = (None, "wrong_entity", "act_before_confirm", "no_write")
LONG_EVIDENCE = (
    "loan_id=" + "L0386-0/" * 60 + " and the rest of a very long evidence string without spaces: " + "x" * 300
)


@dataclass
class Served:
    url: str
    key: str


def _real_trials() -> list[TrialResult]:
    async def run() -> list[TrialResult]:
        with Sandbox(mock, size="default") as sandbox:
            scenario = sandbox.scenarios("renew_loan", 1)[0]
            return [
                await run_trial(
                    sandbox,
                    scenario,
                    0,
                    ReferenceAgent.factory(FlawConfig.off() if m is None else FlawConfig.forced(m)),
                )
                for m in MODES
            ]

    # Playwright's sync API holds an event loop on this thread: the trials run on a thread of their own.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def _timed(span: NormalizedSpan, end_ns: int) -> NormalizedSpan:
    span.end_time_ns = end_ns
    if span.ticket is not None:
        span.ticket.end_time_ns = end_ns
    return span


def _seed(store: Store) -> None:
    store.ensure_project("trace")
    # Fixed times and trace ids: the screenshots in docs/images come out the same on every run.
    created = dt.datetime(2026, 11, 25, 9, 0, tzinfo=dt.UTC)
    start = int(created.timestamp()) * NS
    # Production: a 413 ms ticket whose last tool span was stamped by the wall clock, days later; text not captured.
    root = _timed(
        ticket_span(
            TICKET,
            task_type="renew_loan",
            start_ns=start,
            trace_id="7a" * 16,
            intent={"loan_id": "L0386-4", "weeks": 1},
        ),
        start + 413_000_000,
    )
    root.events = [
        SpanEvent("passhat.customer_message", start + 1_000_000, {}),
        SpanEvent("passhat.agent_message", start + 300_000_000, {}),
    ]
    lookup = tool_span(root, "get_loans", offset_ns=100_000_000)
    lookup.end_time_ns = lookup.start_time_ns + 40_000_000
    late = tool_span(root, "renew_loan", offset_ns=370_243_496_000_000)
    spans = [root, lookup, late]
    # The replay: four real trials of the mock library's renew_loan (one passes, three fail by a forced mode);
    # attempts 1-3 send their traces, attempt 4's trace never reached the collector.
    rows = []
    for attempt, result in enumerate(_real_trials()):
        trace_id = f"{0x7A0000 + attempt:032x}"
        if attempt < 3:
            trial_root = _timed(
                ticket_span(
                    f"{TICKET}#{attempt}",
                    task_type="renew_loan",
                    source="sandbox",
                    trace_id=trace_id,
                    start_ns=start + (attempt + 1) * 60 * NS,
                    run_id=RUN,
                    attempt=attempt,
                ),
                start + (attempt + 1) * 60 * NS + 900_000_000,
            )
            spans.append(trial_root)
            for n, call in enumerate(result.details.tool_calls):
                child = tool_span(trial_root, call.name, offset_ns=(n + 1) * 100_000_000)
                child.end_time_ns = child.start_time_ns + 20_000_000
                spans.append(child)
        rows.append(
            TrialRow(
                run_id=RUN,
                ticket_id=TICKET,
                task_type="renew_loan",
                attempt=attempt,
                passed=result.passed,
                termination_reason=result.record.termination_reason,
                started_at=created,
                duration_s=1.5 + 0.4 * attempt,
                domain="mock",
                trace_id=trace_id,
                failure_label=result.failure_label,
                failure_evidence=None if result.passed else LONG_EVIDENCE,
                verdict=result.record.verdict.to_dict(),
                details=result.details,
            )
        )
    store.write_batch("trace", spans)
    store.create_replay_run("trace", ReplayRun(RUN, created, k=4, params={"period": "2026-W48", "tickets": [TICKET]}))
    store.add_trials("trace", rows)
    store.finish_replay_run("trace", RUN, at=created + dt.timedelta(minutes=5))


@pytest.fixture
def served(sql_store: Store) -> Iterator[Served]:
    _seed(sql_store)
    key = new_key(sql_store, "trace")
    with running_collector(sql_store, CollectorSettings(key_cache_s=0.0), routers=[ui_router()]) as running:
        yield Served(running.url, key)


def _overflow(session: Session) -> int:
    return int(session.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


def _spilling_cards(session: Session) -> list[str]:
    """Attempt cards whose content is wider than the card (it would run into the next one)."""
    return list(
        session.page.evaluate(
            "Array.from(document.querySelectorAll('article.attempt'))"
            ".filter(a => a.scrollWidth > a.clientWidth + 1).map(a => a.id)"
        )
    )


def test_the_ticket_trace_its_attempts_and_where_they_depart(served: Served, browser: Browser) -> None:  # noqa: F811
    desktop = Session(browser, width=1280, height=900)
    try:
        page = desktop.page
        desktop.sign_in(served.url, served.key)
        page.goto(f"{served.url}/ui/tickets/{TICKET}")
        expect(page.get_by_test_id("clipped-note")).to_contain_text("1 of 3 spans fall outside their parent")
        late = page.get_by_test_id("waterfall").locator("li", has_text="execute_tool renew_loan")
        expect(late).to_contain_text("outside its parent")
        late.locator("summary").click()
        expect(late.get_by_test_id("clipped")).to_contain_text("after its parent ended")
        expect(page.get_by_test_id("not-captured")).to_contain_text("2 of 2 messages were recorded without their text")
        expect(page.get_by_test_id("not-captured")).to_contain_text("capture_content=True")
        intent = page.get_by_test_id("intent")
        expect(intent.get_by_role("heading")).to_have_text("Intent (recorded in production)")
        expect(intent.locator("tbody tr")).to_have_count(2)
        expect(intent.locator("tbody tr").first).to_contain_text("L0386-4")
        expect(page.get_by_test_id("divergence").locator("li")).to_have_count(3)
        assert _overflow(desktop) <= 0
        page.screenshot(path=str(IMAGES / "ui-ticket-trace.png"), full_page=True)

        page.get_by_test_id("side-by-side").click()
        expect(page.get_by_test_id("attempts").locator("article")).to_have_count(4)
        divergence = page.get_by_test_id("divergence").locator("li")
        expect(divergence).to_have_count(3)
        expect(divergence.nth(0)).to_contain_text(re.compile(r"Attempt 2, step 3: renew_loan: loan_id="))
        expect(divergence.nth(1)).to_contain_text("before the customer confirmed")
        expect(divergence.nth(2)).to_contain_text("stopped where attempt 1 went on to call renew_loan")
        expect(page.locator("#attempt-1 [data-testid=departs]")).to_have_count(0)
        for n in (2, 3, 4):
            expect(page.locator(f"#attempt-{n} [data-testid=departs]")).to_have_count(1)
        assert _overflow(desktop) <= 0, f"the attempts page is {_overflow(desktop)} px wider than 1280"
        assert _spilling_cards(desktop) == []
        page.screenshot(path=str(IMAGES / "ui-attempts.png"), full_page=True)

        # Each attempt's own trace: its tool spans, never the production trace in its place.
        page.locator("#attempt-2").get_by_test_id("trace-link").click()
        expect(page.get_by_test_id("trace-attempt")).to_contain_text(f"attempt 2 of run {RUN}")
        waterfall = page.get_by_test_id("waterfall").locator("li")
        expect(waterfall).to_have_count(4)  # the root and the trial's three tool calls
        expect(waterfall.nth(1)).to_contain_text("find_member_by_email")
        expect(page.get_by_test_id("clipped-note")).to_have_count(0)
        page.go_back()
        page.locator("#attempt-4").get_by_test_id("trace-link").click()
        expect(page.get_by_test_id("no-trace")).to_contain_text("No trace stored for attempt 4 of run run-trace")
        expect(page.get_by_test_id("waterfall")).to_have_count(0)
        assert desktop.errors == [] and desktop.outside == []
    finally:
        desktop.close()


def test_the_ticket_and_attempts_pages_fit_a_phone(served: Served, browser: Browser) -> None:  # noqa: F811
    phone = Session(browser, width=390, height=844, mobile=True)
    try:
        phone.sign_in(served.url, served.key)
        for path in (f"/ui/tickets/{TICKET}", f"/ui/runs/{RUN}/tickets/{TICKET}"):
            phone.page.goto(f"{served.url}{path}")
            assert _overflow(phone) <= 0, f"{path} is {_overflow(phone)} px wider than the phone"
            assert _spilling_cards(phone) == []
        phone.page.screenshot(path=str(IMAGES / "ui-attempts-phone.png"), full_page=False)
        assert phone.errors == []
    finally:
        phone.close()
