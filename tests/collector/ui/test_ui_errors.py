"""A client's mistake on a /ui/ page is an HTML page in the UI's layout with one sentence saying what is wrong and
what to do (4xx, never the API's JSON); an unknown task type is a 404; /api/ keeps its JSON errors."""

from __future__ import annotations

import re

import pytest

from tests.collector.store.store_contract import now_ns, ticket_span
from tests.collector.ui.conftest import UiCollector


def _message(page: str) -> str:
    found = re.search(r'data-testid="error">([^<]*)</p>', page)
    assert found is not None, page[:400]
    return found.group(1)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/ui/tickets?offset=-1", "offset should be greater than or equal to 0, not &#39;-1&#39;: use a page&#39;s"),
        ("/ui/runs/run-shop-2026-W47?offset=x", "offset should be a valid integer, not &#39;x&#39;"),
        ("/ui/task-types/cancel?period=" + "9" * 101, "period should have at most 100 characters"),
        ("/ui/tickets?period=bad", "cannot read the period &#39;bad&#39;: write an ISO week like 2026-W48"),
        ("/ui/tickets?since=yesterday", "dates look like 2026-11-30"),
    ],
)
def test_a_bad_address_is_an_html_page_saying_what_to_do(ui: UiCollector, path: str, says: str) -> None:
    with ui.client(ui.shop_key) as client:
        response = client.get(path)
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert page.startswith("<!doctype html>") and '<nav aria-label="Main">' in page  # the UI's own layout
    assert 'data-testid="project">shop<' in page
    message = _message(page)
    assert says in message
    assert message.count("ISO week") <= 1 and message.count(":") <= 2  # one sentence, said once
    assert '"detail"' not in page and "Input should" not in page


def test_a_bad_address_before_signing_in_is_an_html_page_without_the_menu(ui: UiCollector) -> None:
    with ui.client() as client:
        response = client.get("/ui/tickets?offset=-1")
    assert response.status_code == 422 and response.headers["content-type"].startswith("text/html")
    assert "offset should be greater than or equal to 0" in _message(response.text)
    assert '<nav aria-label="Main">' not in response.text


def test_the_api_keeps_its_json_errors(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        response = client.get("/api/tickets?limit=-1")
    assert response.status_code == 422 and response.headers["content-type"] == "application/json"
    assert response.json()["detail"][0]["loc"] == ["query", "limit"]


def test_an_unknown_task_type_is_a_404_and_a_known_one_without_a_run_keeps_its_page(ui: UiCollector) -> None:
    ui.store.write_batch("shop", [ticket_span("SHOP-new-0", task_type="gift_card", start_ns=now_ns())])
    with ui.client(ui.shop_key) as client:
        unknown = client.get("/ui/task-types/nope")
        fragment = client.get("/ui/task-types/nope?outcome=all_failed", headers={"hx-request": "true"})
        other_project = client.get("/ui/task-types/gift_card", headers={"authorization": f"Bearer {ui.bank_key}"})
        new = client.get("/ui/task-types/gift_card")
    assert unknown.status_code == 404 and fragment.status_code == 404 and other_project.status_code == 404
    assert "There is no task type nope in project shop." in unknown.text
    assert '<a href="/ui/">Back to the overview</a>' in unknown.text
    assert new.status_code == 200 and "No official run has replayed tickets of this task type yet." in new.text
