"""The web UI's overall headline is the weekly report's: the same period's figures weighted by the same traffic,
the same value and interval; the pooled figure beside it is labelled as such, and the curve's band at the run's k
is the headline's interval."""

from __future__ import annotations

import datetime as dt
import html
import json
import re

import httpx

from passhat.collector import CollectorSettings
from passhat.collector.loop import report_input_for
from passhat.collector.report import build_report
from passhat.collector.store import ReplayRun, Store, parse_period
from passhat.collector.ui import ui_router
from tests.collector.server import new_key, running_collector
from tests.collector.store.store_contract import NS, ticket_span
from tests.collector.ui.ui_data import trial

PERIOD = "2026-W47"
K = 4
#: task type -> (production tickets in the period, passes out of K of each replayed ticket)
PLAN = {
    "refund": (40, (4, 4, 3, 4, 2)),
    "exchange": (12, (4, 4, 4, 4, 4)),
    "cancel": (6, (1, 0, 4, 2, 3)),
}


def _seed(store: Store) -> str:
    store.ensure_project("shop")
    period = parse_period(PERIOD)
    first_day = dt.datetime.combine(period.start, dt.time(9), tzinfo=dt.UTC)
    spans = []
    for task_type, (volume, _) in PLAN.items():
        for n in range(volume):
            when = first_day + dt.timedelta(days=n % 5, minutes=n)
            start_ns = int(when.timestamp()) * NS
            spans.append(ticket_span(f"P-{task_type}-{n}", task_type=task_type, start_ns=start_ns))
    store.write_batch("shop", spans)
    run_id = f"run-{PERIOD}"
    created = first_day + dt.timedelta(days=7)
    tickets = [f"P-{t}-{i}" for t, (_, passes) in PLAN.items() for i in range(len(passes))]
    params = {"period": PERIOD, "k": K, "agent": "ReferenceAgent (offline simulation)", "simulated": True,
              "tickets": tickets}  # fmt: skip
    store.create_replay_run("shop", ReplayRun(run_id, created, k=K, params=params))
    store.add_trials(
        "shop",
        [
            trial(run_id, task_type, f"P-{task_type}-{i}", a, a < passed, created)
            for task_type, (_, passes) in PLAN.items()
            for i, passed in enumerate(passes)
            for a in range(K)
        ],
    )
    store.finish_replay_run("shop", run_id, at=created + dt.timedelta(hours=1))
    return run_id


def test_the_overall_headline_is_the_weekly_reports_traffic_weighted_figure(sql_store: Store) -> None:
    run_id = _seed(sql_store)
    run = sql_store.get_replay_run("shop", run_id)
    assert run is not None
    report = build_report(report_input_for(sql_store, "shop", parse_period(PERIOD), run))
    weighted = report.overall.weighted
    assert weighted.pass_hat_k is not None and weighted.pass_hat_k_ci is not None
    # The traffic matters here: unweighted, cancel's poor tickets count as much as refund's.
    assert abs(weighted.pass_hat_k - report.overall.unweighted.pass_hat_k) > 0.02  # type: ignore[operator]

    page = _overview(sql_store)
    table = page[page.index('data-testid="headlines"') : page.index("</table>", page.index('data-testid="headlines"'))]
    rows = table.split("</tr>")
    assert "weighted by traffic" in rows[1] and "every ticket once" in rows[2]  # rows[0] is the header
    # The curve drawn is the weighted headline's: its value and band at k are the report's figure and interval.
    found = re.search(r'data-kcurve="([^"]+)"', page)
    assert found is not None
    curve = json.loads(html.unescape(found.group(1)))
    assert curve["k"][-1] == K
    assert abs(curve["pass_hat_k"][-1] - weighted.pass_hat_k) < 1e-6
    assert abs(curve["pass_hat_k_low"][-1] - weighted.pass_hat_k_ci[0]) < 1e-6
    assert abs(curve["pass_hat_k_high"][-1] - weighted.pass_hat_k_ci[1]) < 1e-6
    assert weighted.pass_at_k_ci is not None and abs(curve["pass_at_k_low"][-1] - weighted.pass_at_k_ci[0]) < 1e-6
    # ... and the headline row prints that interval, with the tickets behind it.
    low, high = weighted.pass_hat_k_ci
    assert f"{100 * low:.0f}–{100 * high:.0f}%" in rows[1] and ">15<" in rows[1].replace(" ", "")


def _overview(store: Store) -> str:
    """The overview page as a signed-in member of the project sees it, over real HTTP."""
    key = new_key(store, "shop")
    settings, auth = CollectorSettings(key_cache_s=0.0), {"authorization": f"Bearer {key}"}
    with (
        running_collector(store, settings, routers=[ui_router()]) as running,
        httpx.Client(base_url=running.url, headers=auth, timeout=30) as client,
    ):
        return client.get("/ui/").text


def _cell(row: str, n: int) -> str:
    cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)
    return re.sub(r"<[^>]+>", " ", cells[n])


def test_a_day_of_traffic_on_the_overview_is_the_weekly_reports(sql_store: Store) -> None:
    """The overview's failing customers a day and tickets a day are the report's expected failed tickets a day
    and its daily volume: the period's own traffic over its days with traffic (5 here), not the last 28 days."""
    run_id = _seed(sql_store)
    run = sql_store.get_replay_run("shop", run_id)
    assert run is not None
    report = build_report(report_input_for(sql_store, "shop", parse_period(PERIOD), run))
    failed, volume = report.overall.expected_failed_tickets_per_day, report.overall.measured_daily_volume
    assert failed is not None and volume == 58 / 5

    page = _overview(sql_store)
    section = page[page.index('id="traffic"') : page.index("</section>", page.index('id="traffic"'))]
    basis = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section[section.index('data-testid="traffic-basis"') :]))
    assert f"Measured: {volume:.1f} production tickets a day in {PERIOD}" in basis
    assert "5 days with traffic" in basis
    total = next(r for r in section.split("</tr>") if 'class="total"' in r)
    assert f"{failed:.1f}" == _cell(total, 2).split()[0]  # failing customers a day, as the report's failed a day
    assert re.search(r"\d+\.\d–\d+\.\d", _cell(total, 2))  # with its interval
    per_type = {t.task_type: t for t in report.task_types}
    for row in section.split("</tr>"):
        name = re.search(r'<th scope="row">([a-z]+)</th>', row)
        if name and name.group(1) in per_type:
            expected = per_type[name.group(1)]
            assert f"({expected.daily_volume:.1f} a day)" in _cell(row, 1)
            assert f"{expected.expected_failed_tickets_per_day:.1f}" == _cell(row, 2).split()[0]
            assert f"{expected.tickets_sampled} tickets" in _cell(row, 4)  # the sample behind the figure
