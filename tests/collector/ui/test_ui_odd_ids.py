"""Ticket ids and task types with any characters (`/`, `%`, `#`, `?`, spaces, unicode) open every page of the web
UI, and every link to them, followed as a browser would, leads to the same page."""

from __future__ import annotations

import datetime as dt
import html.parser
import re
import urllib.parse

import pytest

from passhat.collector.store import ReplayRun, Store
from tests.collector.store.store_contract import NS, now_ns, ticket_span, tool_span
from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import trial

ODD_TASK_TYPES = ["refund/partial", "100% off", "café #1", "what? now"]
PROJECT = "shop"
RUN = "run-odd-2026-W47"


def _ticket(task_type: str) -> str:
    return f"T-{task_type}/x%2Fy#3"


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _seed_odd(store: Store) -> None:
    start = now_ns() - 3600 * NS
    spans = []
    for index, task_type in enumerate(ODD_TASK_TYPES):
        root = ticket_span(_ticket(task_type), task_type=task_type, start_ns=start + index * 60 * NS)
        spans += [root, tool_span(root, "get_order", reads=1, offset_ns=NS // 2)]
    store.write_batch(PROJECT, spans)
    when = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=1)
    tickets = [_ticket(t) for t in ODD_TASK_TYPES]
    params = {"period": "2026-W47", "k": 2, "agent": "ReferenceAgent (offline simulation)", "simulated": True,
              "tickets_per_task_type": 1, "sizes": {}, "seed": 0, "tickets": tickets}  # fmt: skip
    store.create_replay_run(PROJECT, ReplayRun(RUN, when, k=2, params=params))
    store.add_trials(PROJECT, [trial(RUN, t, _ticket(t), a, a == 0, when) for t in ODD_TASK_TYPES for a in range(2)])
    store.finish_replay_run(PROJECT, RUN, at=when + dt.timedelta(hours=2))


class _Links(html.parser.HTMLParser):
    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href and href.startswith("/ui/"):
            self.hrefs.append(href)


@pytest.fixture
def odd(ui: UiCollector) -> UiCollector:
    _seed_odd(ui.store)
    return ui


@pytest.mark.parametrize("task_type", ODD_TASK_TYPES)
def test_a_task_type_with_any_characters_has_its_page(odd: UiCollector, task_type: str) -> None:
    with odd.client(odd.shop_key) as client:
        page = client.get(f"/ui/task-types/{_q(task_type)}")
        fragment = client.get(f"/ui/task-types/{_q(task_type)}?outcome=failed", headers={"HX-Request": "true"})
    assert page.status_code == 200, page.text[:300]
    assert fragment.status_code == 200
    escaped = task_type.replace("&", "&amp;")
    assert escaped in page.text
    assert f'href="/ui/tickets/{_q(_ticket(task_type))}"' in page.text


@pytest.mark.parametrize("task_type", ODD_TASK_TYPES)
def test_a_ticket_with_any_characters_has_its_page_and_its_attempts_page(odd: UiCollector, task_type: str) -> None:
    ticket = _ticket(task_type)
    with odd.client(odd.shop_key) as client:
        page = client.get(f"/ui/tickets/{_q(ticket)}")
        attempts = client.get(f"/ui/runs/{RUN}/tickets/{_q(ticket)}")
        found = client.get("/ui/tickets", params={"ticket": ticket})
    assert page.status_code == 200, page.text[:300]
    assert f"T-{task_type}/x%2Fy#3" in page.text  # the id as it is, not decoded twice
    assert attempts.status_code == 200, attempts.text[:300]
    assert "attempt" in attempts.text
    assert f'href="/ui/tickets/{_q(ticket)}' in found.text


def test_every_link_to_an_odd_id_leads_to_its_page(odd: UiCollector) -> None:
    with odd.client(odd.shop_key) as client:
        hrefs: set[str] = set()
        for start in ["/ui/", f"/ui/runs/{RUN}", "/ui/tickets", *(f"/ui/task-types/{_q(t)}" for t in ODD_TASK_TYPES)]:
            page = client.get(start)
            assert page.status_code == 200, start
            hrefs |= set(_Links(page.text).hrefs)
        odd_links = sorted(h for h in hrefs if re.search(r"%2F|%25|%23|%3F|%C3", h))
        # Each task type's page, each ticket's page and its attempts side by side are linked from somewhere.
        assert len(odd_links) >= 3 * len(ODD_TASK_TYPES), odd_links
        for href in odd_links:
            response = client.get(href)
            assert response.status_code == 200, f"{href}: {response.status_code}"


def test_signing_in_comes_back_to_a_page_of_an_odd_ticket(odd: UiCollector) -> None:
    ticket = _ticket(ODD_TASK_TYPES[0])
    with odd.client() as client:
        redirect = client.get(f"/ui/tickets/{_q(ticket)}")
        assert redirect.status_code == 303
        target = urllib.parse.parse_qs(urllib.parse.urlsplit(redirect.headers["location"]).query)["next"][0]
        signed_in = client.post("/ui/login", data={"key": odd.shop_key, "next": target}, headers={"origin": odd.url})
        assert signed_in.status_code == 303
        assert signed_in.headers["location"] == f"/ui/tickets/{_q(ticket)}"
        page = client.get(signed_in.headers["location"])
    assert page.status_code == 200
    assert ticket in page.text
