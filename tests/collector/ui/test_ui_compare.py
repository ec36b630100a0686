"""Two runs side by side in the web UI (`/ui/runs/compare?a=RUN&b=RUN`), over a real collector."""

from __future__ import annotations

from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import PERIODS, ticket_id


def _list(page: str, testid: str) -> str:
    start = page.index(f'data-testid="{testid}"')
    return page[start : page.index("</ul>", start)]


def test_two_periods_on_the_same_tickets_give_paired_differences_and_the_flipped_tickets(ui: UiCollector) -> None:
    a, b = ui.shop.official_runs
    with ui.client(ui.shop_key) as client:
        page = client.get(f"/ui/runs/compare?a={a}&b={b}").text
    paired = page[page.index('data-testid="compare-paired"') : page.index('id="flips"')]
    assert "cancel" in paired and "refund" in paired and "exchange" in paired
    assert "-66.7 pp" in paired  # cancel pass^4: 2 of 3 tickets reliable, then none
    assert "too few tickets to tell" in paired  # 3 shared tickets a task type: no interval, said so
    assert "fewer than 5 shared tickets" in page  # the note explains why
    worse = page[
        page.index('data-testid="became-unreliable"') : page.index(
            "</ul>", page.index('data-testid="became-unreliable"')
        )
    ]
    better = page[
        page.index('data-testid="became-reliable"') : page.index("</ul>", page.index('data-testid="became-reliable"'))
    ]
    for n in (0, 1):
        assert ticket_id("shop", "cancel", n) in worse
    assert ticket_id("shop", "refund", 1) in worse and ticket_id("shop", "refund", 2) in better
    assert f"/ui/runs/{b}/tickets/{ticket_id('shop', 'refund', 2)}" in better  # a link to its attempts in B
    assert 'data-testid="compare-own"' in page


def test_runs_that_share_one_ticket_compare_it_and_say_what_is_missing(ui: UiCollector) -> None:
    official, exploratory = ui.shop.official_runs[0], ui.shop.exploratory_run
    with ui.client(ui.shop_key) as client:
        response = client.get(f"/ui/runs/compare?a={official}&b={exploratory}")
    assert response.status_code == 200
    assert "8 ticket(s) replayed by only one run are left out" in response.text


def test_the_compare_page_is_reachable_from_the_runs_list_and_a_run(ui: UiCollector) -> None:
    run = ui.shop.official_runs[1]
    with ui.client(ui.shop_key) as client:
        runs = client.get("/ui/runs").text
        page = client.get(f"/ui/runs/{run}").text
        picker = client.get("/ui/runs/compare").text
        preset = client.get(f"/ui/runs/compare?a={run}").text
    assert 'href="/ui/runs/compare"' in runs
    assert f'href="/ui/runs/compare?a={run}"' in page
    assert 'data-testid="compare-form"' in picker and PERIODS[0] in picker
    assert f'<option value="{run}" selected>' in preset


def test_an_unknown_run_is_a_clear_404_and_another_projects_run_is_unknown(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        typo = client.get(f"/ui/runs/compare?a={ui.shop.official_runs[0]}&b=run-nope")
        other = client.get(f"/ui/runs/compare?a={ui.shop.official_runs[0]}&b={ui.bank.official_runs[0]}")
    assert typo.status_code == 404 and "run-nope" in typo.text
    assert other.status_code == 404


def test_a_simulated_agent_is_labelled_once(ui: UiCollector) -> None:
    """The ReferenceAgent's name says it is a simulation: the runs list and a run's page do not add
    "(simulated)" after "ReferenceAgent (offline simulation)" (they showed both)."""
    run = ui.shop.official_runs[1]
    with ui.client(ui.shop_key) as client:
        runs = client.get("/ui/runs").text
        page = client.get(f"/ui/runs/{run}").text
    for shown in (runs, page):
        assert "ReferenceAgent (offline simulation)" in shown
        assert "(simulated)" not in shown
