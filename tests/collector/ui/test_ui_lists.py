"""The lists a team works with, over real HTTP: the tickets list searched, filtered, sorted, totalled and paged
by the store; a run's tickets least reliable first, a page at a time, linked to the run's report."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from passhat.collector.store import AlertEvent, ProductionVerdict, ReplayRun
from tests.collector.store.store_contract import NS, now_ns, ticket_span
from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import trial


def _rows(html: str) -> list[str]:
    return re.findall(r'<th scope="row"><a href="/ui/tickets/([^"?]+)', html)


def _total(html: str) -> str:
    found = re.search(r'data-testid="ticket-total"><strong>([\d,]+)</strong>', html)
    return found[1] if found else "none"


def test_search_covers_ids_and_intent_values_and_filters_keep_a_total(ui: UiCollector) -> None:
    start = now_ns() - 3600 * NS
    span = ticket_span("SHOP-banking-1", task_type="refund", start_ns=start, intent={"account": "ACC-77"})
    assert span.ticket is not None
    span.ticket = dataclasses.replace(span.ticket, domain="banking")
    ui.store.write_batch("shop", [span])
    with ui.client(ui.shop_key) as client:
        everything = client.get("/ui/tickets").text
        by_intent = client.get("/ui/tickets?q=acc-77").text
        by_id = client.get("/ui/tickets?q=cancel-1").text
        by_domain = client.get("/ui/tickets?domain=banking").text
        exchange = client.get("/ui/tickets?task_type=exchange&sort=task_type").text
        nothing = client.get("/ui/tickets?q=zzz-nowhere").text
        other_project = client.get("/ui/tickets?q=acc-77", headers={"authorization": f"Bearer {ui.bank_key}"}).text
    assert _total(everything) == "10" and len(_rows(everything)) == 10
    assert _rows(by_intent) == ["SHOP-banking-1"] and _total(by_intent) == "1"
    assert _rows(by_id) == ["SHOP-cancel-1"]
    assert _rows(by_domain) == ["SHOP-banking-1"]
    assert set(_rows(exchange)) == {f"SHOP-exchange-{n}" for n in range(3)} and _total(exchange) == "3"
    assert 'data-testid="no-tickets"' in nothing
    assert "SHOP-" not in other_project


def test_least_reliable_first_and_the_period_filter(ui: UiCollector) -> None:
    found = {t.ticket_id: t for t in ui.store.search_tickets("shop", source="production", limit=100)}
    wrong = found["SHOP-exchange-2"]
    ui.store.put_production_verdicts(
        "shop",
        [
            ProductionVerdict(
                ticket_id=wrong.ticket_id, trace_id=wrong.trace_id, task_type=wrong.task_type,
                start_time_ns=wrong.start_time_ns, passed=False, graded_at=dt.datetime.now(dt.UTC),
                domain="retail", signature="wrong_entity", evidence=None, verdict=None, graded_by="run-1",
            )
        ],
    )  # fmt: skip
    this_week = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=6) + dt.timedelta(minutes=4)).isocalendar()
    with ui.client(ui.shop_key) as client:
        newest = _rows(client.get("/ui/tickets").text)
        reliability = client.get("/ui/tickets?sort=verdict").text
        this_period = client.get(f"/ui/tickets?period={this_week.year}-W{this_week.week:02d}").text
        long_ago = client.get("/ui/tickets?period=2020-W10").text
        bad_period = client.get("/ui/tickets?period=last-week")
        bad_date = client.get("/ui/tickets?since=30/11/2026")
        too_long = client.get("/ui/tickets", params={"q": "x" * 401})
    assert newest[0] != "SHOP-exchange-2"
    assert _rows(reliability)[0] == "SHOP-exchange-2" and "least reliable first" in reliability
    assert len(_rows(this_period)) == 9  # the seed's tickets started about 6 hours ago, within 9 minutes
    assert 'data-testid="no-tickets"' in long_ago
    assert bad_period.status_code == 422 and "2026-W48" in bad_period.text
    assert bad_date.status_code == 422 and "2026-11-30" in bad_date.text
    assert too_long.status_code == 422 and "at most 400" in too_long.text


def test_pages_of_tickets_keep_their_filters(ui: UiCollector) -> None:
    start = now_ns() - 3 * 3600 * NS
    ui.store.write_batch("shop", [ticket_span(f"SHOP-bulk-{i:03d}", start_ns=start + i * NS) for i in range(61)])
    with ui.client(ui.shop_key) as client:
        first = client.get("/ui/tickets?q=bulk").text
        link = re.search(r'<a rel="next" href="(/ui/tickets\?[^"]+)"', first)
        assert link is not None, first
        second = client.get(link[1].replace("&amp;", "&")).text
        fragment = client.get(link[1].replace("&amp;", "&"), headers={"HX-Request": "true"}).text
    assert _total(first) == "61" and len(_rows(first)) == 50 and "showing 1–50" in first
    assert "q=bulk" in link[1] and "offset=50" in link[1]
    assert len(_rows(second)) == 11 and "showing 51–61" in second and 'rel="prev"' in second
    assert set(_rows(first)).isdisjoint(_rows(second))
    assert "<html" not in fragment and len(_rows(fragment)) == 11


def _run_rows(html: str) -> list[str]:
    table = html.split('data-testid="run-tickets"', 1)[1].split("</table>", 1)[0]
    return _rows(table)


def test_a_run_lists_its_least_reliable_tickets_first_and_links_its_report(ui: UiCollector) -> None:
    run_id = ui.shop.official_runs[1]  # W47: cancel-1 passed 0 of 4, cancel-0 1, cancel-2 2, refund-1 3
    ui.store.add_alert_event(
        "shop",
        AlertEvent(
            "report-shop-w47", "report", dt.datetime.now(dt.UTC), "report of 2026-W47 (schedule): mail: ok",
            payload={"kind": "report", "period": "2026-W47", "run_id": run_id, "trigger": "schedule"},
            deliveries={"mail": "ok"},
        ),
    )  # fmt: skip
    with ui.client(ui.shop_key) as client:
        page = client.get(f"/ui/runs/{run_id}").text
        other = client.get(f"/ui/runs/{ui.shop.official_runs[0]}").text
        alerts = client.get("/ui/alerts").text
    assert _run_rows(page)[:4] == ["SHOP-cancel-1", "SHOP-cancel-0", "SHOP-cancel-2", "SHOP-refund-1"]
    assert "9</strong> tickets, 4 failed at least once" in page
    assert 'href="/ui/alerts#report-shop-w47"' in page and 'id="report-shop-w47"' in alerts
    assert f"passhat report --period 2026-W47 --run {run_id}" in page
    assert "not written when the run finished and not sent to any channel" in other
    assert "writes it and <code>--send</code> sends it" in other


def test_a_run_whose_report_was_written_but_not_sent_says_so(ui: UiCollector) -> None:
    """The run's summary records the files its report went to: the page says written (not sent), never that it
    is still to be written."""
    when = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=21)
    written = {kind: f"/srv/reports/2026-W45/report.{kind}" for kind in ("html", "json", "md")}
    ui.store.create_replay_run("shop", ReplayRun("run-w45", when, k=4, params={"period": "2026-W45", "k": 4}))
    ui.store.add_trials("shop", [trial("run-w45", "refund", "SHOP-refund-0", a, True, when) for a in range(4)])
    ui.store.finish_replay_run("shop", "run-w45", summary={"report": written}, at=when + dt.timedelta(hours=1))
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/runs/run-w45").text
    line = re.sub(r"<[^>]+>", "", page.split('data-testid="run-report">', 1)[1].split("</dd>", 1)[0])
    assert line == (
        "written to /srv/reports/2026-W45/report.html when the run finished, not sent to any channel; "
        "passhat report --period 2026-W45 --run run-w45 --send sends it"
    )
    assert "not sent yet" not in page and "not written" not in page


def test_a_big_run_is_paged(ui: UiCollector) -> None:
    when = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=2)
    ui.store.create_replay_run("shop", ReplayRun("run-big", when, k=1, params={"period": "2026-W48"}))
    ui.store.add_trials("shop", [trial("run-big", "refund", f"BIG-{i:03d}", 0, i % 7 != 0, when) for i in range(120)])
    ui.store.finish_replay_run("shop", "run-big", at=when + dt.timedelta(hours=1))
    with ui.client(ui.shop_key) as client:
        first = client.get("/ui/runs/run-big").text
        third = client.get("/ui/runs/run-big?offset=100").text
        beyond = client.get("/ui/runs/run-big?offset=500").text
        negative = client.get("/ui/runs/run-big?offset=-1")
    failing = [f"BIG-{i:03d}" for i in range(0, 120, 7)]
    assert _run_rows(first)[: len(failing)] == failing and len(_run_rows(first)) == 50
    assert "page 1 of 3" in first and "showing 1–50" in first
    assert len(_run_rows(third)) == 20 and "page 3 of 3" in third and 'rel="next"' not in third
    assert "No ticket on this page" in beyond
    assert negative.status_code == 422
