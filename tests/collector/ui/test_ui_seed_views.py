"""The seed's views in the web UI, over a real collector: headline figures overall and per domain, the curve over k
whose value at the run's k is the headline, the mixture, the traffic calculator and signature shares."""

from __future__ import annotations

import datetime as dt
import html
import json
import re

from passhat.collector.store import parse_period
from tests.collector.store.store_contract import NS, ticket_span
from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import PERIODS, K


def _curve(page: str) -> dict[str, list[float]]:
    found = re.search(r'data-kcurve="([^"]+)"', page)
    assert found, "the page has no k curve"
    data: dict[str, list[float]] = json.loads(html.unescape(found.group(1)))
    return data


def test_the_overview_shows_the_pooled_and_per_domain_headlines_with_intervals_and_counts(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/").text
    table = page[page.index('data-testid="headlines"') : page.index("</table>", page.index('data-testid="headlines"'))]
    assert "All task types" in table and "retail" in table
    # W47: 9 tickets of 4 trials; pooled pass^4 = 5 of 9 tickets passed every attempt (refund 2, exchange 3, cancel 0).
    assert "55.6%" in table and ">9<" in table.replace(" ", "") and ">36<" in table.replace(" ", "")
    assert table.count("–") >= 6  # every figure has its interval


def test_the_curve_at_the_runs_k_is_the_headline_figure(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/").text
    curve = _curve(page)
    assert curve["k"] == list(range(1, K + 1))
    assert round(curve["pass_hat_k"][-1], 6) == round(5 / 9, 6)
    low, high = curve["pass_hat_k_low"][-1], curve["pass_hat_k_high"][-1]
    headline = page[page.index('data-testid="headlines"') :]
    assert f"{100 * low:.0f}–{100 * high:.0f}%" in headline.split("</tr>")[1]  # the same interval in the headline row
    assert 'type="range"' in page and f'max="{K}"' in page


def test_the_overview_shows_the_mixture_with_the_fits_uncertainty(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/").text
    mixture = page[page.index('data-testid="mixture"') :]
    mixture = mixture[: mixture.index("</table>")]
    assert "Share of tickets" in mixture and "Per-attempt success" in mixture
    assert mixture.count("<small>") >= 2  # shares and rates carry intervals
    assert "rough sketch" in page  # 9 tickets: the page says how little a fit of so few says


def test_signatures_are_shares_of_each_periods_failed_trials(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/").text
    table = page[page.index('data-testid="signature-shares"') :]
    table = table[: table.index("</table>")]
    assert all(p in table for p in PERIODS)
    # W46: 2 failed trials, W47: 10; every one labelled wrong_entity.
    assert table.count("100.0%") == 2 and "Failed trials" in table


def test_the_task_type_page_shows_its_headline_curve_mixture_and_signature_shares(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/task-types/refund").text
        old = client.get(f"/ui/task-types/cancel?period={PERIODS[0]}").text
    assert 'data-testid="task-type-headline"' in page and 'data-testid="mixture"' in page
    curve = _curve(page)
    assert round(curve["pass_hat_k"][-1], 6) == round(2 / 3, 6)  # refund W47: passes (4, 3, 4) of 4
    assert round(_curve(old)["pass_hat_k"][-1], 6) == round(2 / 3, 6)  # cancel W46: (4, 4, 3)
    assert 'data-testid="signature-shares"' in page


def test_the_traffic_calculator_takes_tickets_a_day_and_refuses_a_typo_politely(ui: UiCollector) -> None:
    # The calculator's shares are those of the official run's period (W47): 3 production tickets per task type.
    monday = dt.datetime.combine(parse_period(PERIODS[1]).start, dt.time(9), tzinfo=dt.UTC)
    start = int(monday.timestamp()) * NS
    spans = [
        ticket_span(f"W47-{task_type}-{n}", task_type=task_type, start_ns=start + (i * 3 + n) * NS)
        for i, task_type in enumerate(("refund", "exchange", "cancel"))
        for n in range(3)
    ]
    ui.store.write_batch("shop", spans)
    with ui.client(ui.shop_key) as client:
        measured = client.get("/ui/").text
        chosen = client.get("/ui/?daily=900").text
        typo = client.get("/ui/?daily=lots")
    assert 'data-testid="traffic"' in measured
    # 9 production tickets in W47, 3 per task type: each a third of 900 a day; cancel W47 failed 9 of 12
    # attempts pooled (pass@1 = 0.25), so 300 × 0.75 = 225 failing customers a day.
    table = chosen[chosen.index('data-testid="traffic"') :]
    assert "225.0" in table and "33.3%" in table
    assert typo.status_code == 200 and "must be a number" in typo.text
