"""`/metrics` business gauges: today's tickets per project and task type, and pass@1 and pass^k per task type (k as
a label) in the official run of the project's latest period (a promotion moves them, an exploratory run does not),
read from a real store through a real collector. Project names and task types are shown only to a scrape
authorised for them (the metrics token, or a project's key for its own project)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from passhat.collector import CollectorSettings
from passhat.collector.ingest._business import ALL_PROJECTS, BusinessGauges
from passhat.collector.reliability import settled_summary
from passhat.collector.store import ReplayRun, Store, TrialRow, promote_run
from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import Collector, new_key, running_collector

TOKEN = "metrics-token-for-prometheus"
SECRET_TASK = "merger_talks_acme"


def gauge(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the Prometheus text, whatever order its labels are written in."""
    for line in text.splitlines():
        if not line.startswith(f"{name}{{"):
            continue
        written, value = line[len(name) + 1 :].rsplit("} ", 1)
        pairs = dict(pair.split("=", 1) for pair in written.split(","))
        if {key: raw.strip('"') for key, raw in pairs.items()} == labels:
            return float(value)
    raise AssertionError(f"no {name} sample with labels {labels} in /metrics")


@pytest.fixture
def collector(sql_store: Store) -> Iterator[Collector]:
    """A collector whose /metrics token is set, with two projects."""
    shop_key, bank_key = new_key(sql_store, "shop"), new_key(sql_store, "bank")
    with running_collector(sql_store, CollectorSettings(key_cache_s=0.0, metrics_token=TOKEN)) as running:
        yield Collector(running.url, sql_store, shop_key, bank_key)


def _traffic(collector: Collector) -> None:
    store = collector.store
    now = dt.datetime.now(dt.UTC)
    # ticket A passes both trials, ticket B one of two: pass@1 = 0.75, pass^2 = 0.5
    store.create_replay_run("shop", ReplayRun(run_id="run-1", created_at=now, k=2, params={"period": "2026-W48"}))
    store.add_trials(
        "shop",
        [
            TrialRow("run-1", ticket, "refund", attempt, passed, "done", now, 1.0)
            for ticket, attempt, passed in [("A", 0, True), ("A", 1, True), ("B", 0, True), ("B", 1, False)]
        ],
    )
    store.finish_replay_run("shop", "run-1", summary={})
    with collector.client(collector.shop_key) as client:
        for ticket in ("T-1", "T-2"):
            body = request(passhat_ticket(ticket, task_type="refund", tools=1)).SerializeToString()
            assert client.post(
                "/v1/traces", content=body, headers={"content-type": "application/x-protobuf"}
            ).is_success
    with collector.client(collector.bank_key) as client:
        body = request(passhat_ticket("B-1", task_type=SECRET_TASK, tools=1)).SerializeToString()
        assert client.post("/v1/traces", content=body, headers={"content-type": "application/x-protobuf"}).is_success


def test_metrics_expose_tickets_today_and_the_latest_runs_pass_rates(collector: Collector) -> None:
    _traffic(collector)
    with collector.client(TOKEN) as client:
        text = client.get("/metrics").text
    assert gauge(text, "passhat_tickets_today", project="bank", task_type=SECRET_TASK, source="production") == 1
    assert gauge(text, "passhat_tickets_today", project="shop", task_type="refund", source="production") == 2
    assert gauge(text, "passhat_pass_at_1", project="shop", task_type="refund") == 0.75
    assert gauge(text, "passhat_pass_hat_k", project="shop", task_type="refund", k="2") == 0.5


def test_each_rate_has_its_interval_and_its_sample_as_the_ui_shows_them(collector: Collector) -> None:
    """A rate alone says nothing of how sure it is: two tickets give a wide interval, and the gauges say so."""
    _traffic(collector)
    with collector.client(TOKEN) as client:
        text = client.get("/metrics").text
    found = settled_summary(collector.store.ticket_tallies("shop", "run-1"), 2)
    assert found is not None
    summary, settled = found
    level = f"{summary.level:g}"
    shop = {"project": "shop", "task_type": "refund"}
    bounds = ("lower", "upper")
    at_1 = [gauge(text, "passhat_pass_at_1_interval", **shop, bound=b, level=level) for b in bounds]
    hat_k = [gauge(text, "passhat_pass_hat_k_interval", **shop, k="2", bound=b, level=level) for b in bounds]
    assert at_1 == pytest.approx(summary.pass_at_1_ci) and hat_k == pytest.approx(summary.pass_hat_k_ci)
    assert at_1[0] < 0.75 < at_1[1] and hat_k[0] < 0.5 < hat_k[1]  # two tickets: far from sure
    assert gauge(text, "passhat_replay_tickets", **shop) == settled == 2
    assert gauge(text, "passhat_replay_trials", **shop) == 4
    assert 'project="bank"' not in text.split("passhat_pass_at_1_interval", 1)[1]  # bank has no run


def test_metrics_without_a_credential_name_no_project_or_task_type(collector: Collector) -> None:
    _traffic(collector)
    for key in (None, "phk_deadbeef_forged", "not-the-token"):
        with collector.client(key) as client:
            response = client.get("/metrics")
        assert response.status_code == 200
        text = response.text
        assert "shop" not in text and "bank" not in text, key
        assert "refund" not in text and SECRET_TASK not in text, key
        assert "passhat_pass_hat_k" not in text and "passhat_pass_at_1" not in text
        assert "passhat_replay_tickets" not in text and "passhat_replay_trials" not in text
        assert gauge(text, "passhat_tickets_today", source="production") == 3  # all projects together
        assert "passhat_spans_accepted_total" in text  # the collector's own counters stay public


def test_a_project_key_sees_its_own_projects_gauges_only(collector: Collector) -> None:
    _traffic(collector)
    with collector.client(collector.shop_key) as client:
        text = client.get("/metrics").text
    assert gauge(text, "passhat_tickets_today", project="shop", task_type="refund", source="production") == 2
    assert gauge(text, "passhat_pass_hat_k", project="shop", task_type="refund", k="2") == 0.5
    assert "bank" not in text and SECRET_TASK not in text


def test_without_a_metrics_token_configured_no_bearer_sees_every_project(sql_store: Store) -> None:
    shop_key = new_key(sql_store, "shop")
    new_key(sql_store, "bank")
    with running_collector(sql_store, CollectorSettings(key_cache_s=0.0)) as running:
        collector = Collector(running.url, sql_store, shop_key, "")
        _traffic_shop_only(collector)
        with collector.client("") as anonymous, collector.client(TOKEN) as guessing:
            for client in (anonymous, guessing):
                text = client.get("/metrics").text
                assert "shop" not in text and "refund" not in text


def _traffic_shop_only(collector: Collector) -> None:
    with collector.client(collector.shop_key) as client:
        body = request(passhat_ticket("T-9", task_type="refund", tools=1)).SerializeToString()
        assert client.post("/v1/traces", content=body, headers={"content-type": "application/x-protobuf"}).is_success


START = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)


def _run(store: Store, run_id: str, minutes: int, k: int, passes: list[list[bool]], **params: object) -> None:
    """A finished run of `shop`'s refund tickets, one list of trial outcomes per ticket."""
    created = START + dt.timedelta(minutes=minutes)
    store.create_replay_run("shop", ReplayRun(run_id, created, k=k, params={"k": k, **params}))
    store.add_trials(
        "shop",
        [
            TrialRow(run_id, f"T-{ticket}", "refund", attempt, passed, "done", created, 1.0)
            for ticket, outcomes in enumerate(passes)
            for attempt, passed in enumerate(outcomes)
        ],
    )
    store.finish_replay_run("shop", run_id, summary={}, at=created + dt.timedelta(minutes=5))


def _scrape(store: Store) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    from passhat.collector.ingest._business import FixedFamilies

    registry = CollectorRegistry()
    registry.register(FixedFamilies(BusinessGauges(store, refresh_s=0.0).families(ALL_PROJECTS)))
    return generate_latest(registry).decode()


def test_the_pass_gauges_follow_the_periods_official_run_a_promotion_moves_them_a_one_off_does_not(
    sql_store: Store,
) -> None:
    sql_store.ensure_project("shop")
    # The scheduled k=4 run of 2026-W48: every trial passes.
    _run(sql_store, "scheduled-w48", 0, 4, [[True] * 4] * 2, period="2026-W48")
    text = _scrape(sql_store)
    assert gauge(text, "passhat_pass_hat_k", project="shop", task_type="refund", k="4") == 1.0
    # Later: an exploratory --compare-to run of the same period and a suite run (no period); neither is official.
    _run(sql_store, "compare-w48", 10, 2, [[False, False]] * 2, period="2026-W48", exploratory=["k = 2"])
    _run(sql_store, "suite", 20, 2, [[False, False]] * 2)
    _run(sql_store, "compare-w49", 30, 2, [[False, False]] * 2, period="2026-W49", exploratory=["k = 2"])
    text = _scrape(sql_store)
    assert gauge(text, "passhat_pass_hat_k", project="shop", task_type="refund", k="4") == 1.0
    assert gauge(text, "passhat_pass_at_1", project="shop", task_type="refund") == 1.0
    assert 'k="2"' not in text
    # A k=20 run of the period, promoted: it is the official one now, and the gauges say so.
    _run(sql_store, "big-w48", 40, 20, [[True] * 20, [True] * 10 + [False] * 10], period="2026-W48", exploratory=["k"])
    assert gauge(_scrape(sql_store), "passhat_pass_hat_k", project="shop", task_type="refund", k="4") == 1.0
    promote_run(sql_store, "shop", "big-w48", at=START + dt.timedelta(hours=2))
    text = _scrape(sql_store)
    assert gauge(text, "passhat_pass_hat_k", project="shop", task_type="refund", k="20") == 0.5
    assert gauge(text, "passhat_pass_at_1", project="shop", task_type="refund") == 0.75
    assert 'k="4"' not in text


def test_a_curtailed_runs_gauges_count_the_tickets_settled_early_as_the_ui_does(sql_store: Store) -> None:
    """A curtailed run stops a ticket once one trial passed and one failed: that ticket's pass^k is settled at 0
    and counts, and pass@1 comes from every ticket's first min_trials attempts, as on the UI's overview. The
    gauges left such a ticket out (pass^4 read 1.0 here) and took pass@1 from all the trials."""
    from passhat.collector.store import latest_official_run
    from passhat.collector.ui._digest import headline_of

    sql_store.ensure_project("shop")
    design = {"name": "curtailed", "k": 4, "min_trials": 2}
    outcomes = [[True] * 4, [True, False], [True, True, False], [False, False, False, False]]
    _run(sql_store, "curtailed-w48", 0, 4, outcomes, period="2026-W48", design=design)
    text = _scrape(sql_store)
    pass_hat_4 = gauge(text, "passhat_pass_hat_k", project="shop", task_type="refund", k="4")
    pass_at_1 = gauge(text, "passhat_pass_at_1", project="shop", task_type="refund")
    assert pass_hat_4 == 0.25  # one ticket of four passes every attempt
    assert pass_at_1 == 0.625  # first two attempts: 2/2, 1/2, 2/2, 0/2
    run = latest_official_run(sql_store, "shop")
    assert run is not None
    headline = headline_of("refund", run, sql_store.ticket_tallies("shop", run.run_id))
    assert headline is not None
    assert (pass_at_1, pass_hat_4) == pytest.approx((headline.curve.pass_at_1, headline.pass_hat_k[0]))
