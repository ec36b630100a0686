"""The production loop end to end over real HTTP: SDK traffic -> collector -> sample -> k trials -> report -> alert.

Runs on both stores (SQLite and embedded ClickHouse), and resumes an interrupted replay run.
"""

from __future__ import annotations

import datetime as dt
import json
import pathlib
import uuid
from collections.abc import Iterator

import jsonschema
import pytest

import passhat
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.demo._traffic import simulated_clock
from passhat.collector.ingest._keys import create_api_key
from passhat.collector.loop import run_period
from passhat.collector.replay import AgentSpec, ReplaySettings, SandboxPool, replay_period
from passhat.collector.report import report_schema
from passhat.collector.store import Store, open_store
from passhat.collector.store._period import Period, parse_period
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain
from tests.collector.embedded import running_collector

PERIOD = parse_period("2026-W40")
MIXTURE = [(0.31, 0.99), (0.60, 0.58), (0.09, 0.0)]


@pytest.fixture(params=["sqlite", "chdb"])
def store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[Store]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'loop.db'}"
    else:
        chdb_dir = request.getfixturevalue("chdb_dir")
        url = f"chdb://{chdb_dir}?database=loop_{uuid.uuid4().hex[:10]}"
    opened = open_store(url)
    yield opened
    opened.close()


def _send_week(store: Store, url: str, key: str, period: Period, count: int) -> int:
    """Serve `count` simulated production tickets through the SDK over OTLP/HTTP; returns tickets stored."""
    retail = load_domain("retail")
    pool = SandboxPool()
    try:
        base = pool.base(retail)
        names = ["cancel_pending_order", "return_delivered_items", "order_status_inquiry"]
        scenarios = {name: base.scenarios(name, 10) for name in names}
        arrivals = plan_arrivals(TrafficPlan(period, count, {name: 1.0 for name in names}), scenarios)
        # The simulated agent records its writes, not the rows it reads, so it blanks (as the demo does) and
        # the replay restores the values from the seed; pseudonyms would match no sandbox row.
        runtime = passhat.configure(
            make_global=False, endpoint=url, api_key=key, source="production", clock=simulated_clock,
            redact_mode="blank",
        )  # fmt: skip
        import asyncio

        asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FlawConfig.from_mixture(MIXTURE)), runtime))
        runtime.flush()
        runtime.shutdown()
    finally:
        pool.close()
    since = int(period.start_datetime().timestamp() * 1e9)
    until = int(period.end_datetime().timestamp() * 1e9)
    return len(store.list_tickets("shop", source="production", since_ns=since, until_ns=until, limit=10_000))


def _send_ticket_without_intent(url: str, key: str, when: dt.datetime) -> None:
    stamp = int(when.timestamp() * 1e9)
    runtime = passhat.configure(make_global=False, endpoint=url, api_key=key, source="production", clock=lambda: stamp)
    # A task type absent from this week's traffic, so the sampler takes it whole.
    with runtime.ticket("T-no-intent", task_type="exchange_variant", domain="retail"):
        pass
    with runtime.ticket("T-unknown-type", task_type="warranty_claim", domain="retail"):
        pass
    runtime.flush()
    runtime.shutdown()


@pytest.mark.slow
def test_the_loop_on_real_traffic(store: Store, tmp_path: pathlib.Path) -> None:
    key, _ = create_api_key(store, "shop")
    with running_collector(store) as collector:
        stored = _send_week(store, collector.url, key, PERIOD, 40)
        _send_ticket_without_intent(collector.url, key, PERIOD.start_datetime() + dt.timedelta(hours=3))
    assert stored == 40

    agent = AgentSpec(ReferenceAgent.factory(FlawConfig.from_mixture(MIXTURE)), "reference (simulation)", "1", True)
    settings = ReplaySettings(k=4, tickets_per_task_type=5, parallel=8)
    import asyncio

    result = asyncio.run(
        run_period(store, "shop", PERIOD, agent, settings=settings, report_dir=tmp_path / "reports", resamples=200)
    )
    # 3 task types x 5 sampled tickets x 4 trials, plus the ticket without an intent, which is reported.
    assert len(result.outcome.trials) == 3 * 5 * 4
    reasons = {n.ticket_id: n.reason for n in result.outcome.not_replayable}
    assert "no intent was recorded" in reasons.get("T-no-intent", "")
    assert "no task type 'warranty_claim'" in reasons.get("T-unknown-type", "")
    data = json.loads(result.report_paths["json"].read_text())
    jsonschema.validate(data, report_schema())
    assert data["period"] == "2026-W40" and data["k"] == 4
    assert {t["task_type"] for t in data["task_types"]} == {
        "cancel_pending_order",
        "return_delivered_items",
        "order_status_inquiry",
    }
    assert any(n["ticket_id"] == "T-no-intent" for n in data["not_replayable"])
    # Replays use the same agent on the same cases: trial 0 of a ticket reproduces its production outcome.
    run = store.get_replay_run("shop", result.outcome.run.run_id)
    assert run is not None and run.status == "finished"
    assert run.summary is not None and run.summary["figures"]["period"] == "2026-W40"
    # No runtime was given: every trial was traced straight into the store as a sandbox ticket of the run.
    sandbox_tickets = store.list_tickets("shop", source="sandbox", replay_run_id=run.run_id, limit=1000)
    assert len(sandbox_tickets) == len(result.outcome.trials)
    assert {t.replay_run_id for t in sandbox_tickets} == {run.run_id}
    assert store.list_tickets("shop", source="sandbox", replay_run_id="run-of-nobody") == []
    traffic = store.traffic("shop", days=7, today=PERIOD.end - dt.timedelta(days=1))
    assert sum(day.tickets for day in traffic) == 42  # production tickets only, trials excluded


@pytest.mark.slow
def test_an_interrupted_run_resumes_without_repeating_finished_trials(tmp_path: pathlib.Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'resume.db'}")
    try:
        key, _ = create_api_key(store, "shop")
        with running_collector(store) as collector:
            _send_week(store, collector.url, key, PERIOD, 20)
        agent = AgentSpec(ReferenceAgent.factory(FlawConfig.off()), "reference (simulation)", "1", True)
        settings = ReplaySettings(k=3, tickets_per_task_type=3, parallel=2, flush_every=1)

        import asyncio

        async def interrupted() -> None:
            task: asyncio.Task[object] | None = None

            def cancel_after_ten(done: int, total: int) -> None:
                if done >= 10 and task is not None:
                    task.cancel()  # as a stopped process or a Ctrl-C would

            task = asyncio.ensure_future(
                replay_period(store, "shop", PERIOD, agent, settings=settings, progress=cancel_after_ten)
            )
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(interrupted())
        runs = store.list_replay_runs("shop")
        assert len(runs) == 1 and runs[0].status == "running"
        finished_before = {(t.ticket_id, t.attempt) for t in store.list_trials("shop", runs[0].run_id)}
        assert 10 <= len(finished_before) < 27

        outcome = asyncio.run(replay_period(store, "shop", PERIOD, agent, settings=settings))
        assert outcome.resumed and outcome.run.run_id == runs[0].run_id
        assert outcome.ran == 27 - len(finished_before)
        keys = [(t.ticket_id, t.attempt) for t in outcome.trials]
        assert len(keys) == len(set(keys)) == 27
    finally:
        store.close()


@pytest.mark.slow
def test_replay_and_report_commands_on_the_store(tmp_path: pathlib.Path) -> None:
    from typer.testing import CliRunner

    from passhat.collector.cli import app

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = open_store(url)
    try:
        key, _ = create_api_key(store, "shop")
        with running_collector(store) as collector:
            _send_week(store, collector.url, key, PERIOD, 15)
    finally:
        store.close()
    config = tmp_path / "passhat.toml"
    config.write_text(
        f'project = "shop"\n[report]\nout_dir = "{tmp_path / "reports"}"\n[replay]\nk = 3\ntickets_per_task_type = 2\n'
    )
    runner = CliRunner()
    replayed = runner.invoke(app, ["replay", "--period", "2026-W40", "--config", str(config), "--store", url, "--json"])
    assert replayed.exit_code == 0, replayed.output
    data = json.loads(replayed.stdout)
    assert data["k"] == 3 and data["period"] == "2026-W40"
    assert {row["task_type"] for row in data["task_types"]} == {
        "cancel_pending_order", "return_delivered_items", "order_status_inquiry",
    }  # fmt: skip
    assert all(row["tickets"] == 2 and row["trials_per_ticket"] == 3 for row in data["task_types"])
    assert pathlib.Path(data["report"]["html"]).exists()

    rebuilt = runner.invoke(
        app, ["report", "--period", "2026-W40", "--config", str(config), "--store", url, "--out", str(tmp_path / "r")]
    )
    assert rebuilt.exit_code == 0, rebuilt.output
    assert (tmp_path / "r" / "report.html").exists() and (tmp_path / "r" / "report.json").exists()

    missing = runner.invoke(app, ["report", "--period", "2026-W41", "--config", str(config), "--store", url])
    assert missing.exit_code == 2 and "no replay run for 2026-W41" in missing.stderr


@pytest.mark.slow
def test_a_curtailed_replay_settles_every_ticket_as_the_fixed_design_does_with_fewer_trials(
    tmp_path: pathlib.Path,
) -> None:
    import asyncio

    from passhat.collector.reliability import pass_at_k_array, pass_hat_k_array

    store = open_store(f"sqlite:///{tmp_path / 'curtailed.db'}")
    try:
        key, _ = create_api_key(store, "shop")
        with running_collector(store) as collector:
            _send_week(store, collector.url, key, PERIOD, 20)
        agent = AgentSpec(ReferenceAgent.factory(FlawConfig.from_mixture(MIXTURE)), "reference (simulation)", "1", True)
        k = 6
        per_ticket: list[dict[str, tuple[float, float]]] = []
        for stop_early in (False, True):
            settings = ReplaySettings(k=k, tickets_per_task_type=4, parallel=4, stop_early=stop_early, min_trials=2)
            if stop_early:
                result = asyncio.run(
                    run_period(store, "shop", PERIOD, agent, settings=settings, report_dir=tmp_path / "reports")
                )
                outcome = result.outcome
                design = json.loads(result.report_paths["json"].read_text())["design"]
                assert design["name"] == "curtailed" and design["trials"] == len(outcome.trials)
                assert design["trials_saved"] == 3 * 4 * k - len(outcome.trials)
            else:
                outcome = asyncio.run(replay_period(store, "shop", PERIOD, agent, settings=settings))
            assert outcome.run.params["design"]["name"] == ("curtailed" if stop_early else "fixed")
            counts: dict[str, list[int]] = {}
            for trial in outcome.trials:
                counts.setdefault(trial.ticket_id, [0, 0])
                counts[trial.ticket_id][0] += 1
                counts[trial.ticket_id][1] += int(trial.passed)
            n, c = zip(*counts.values(), strict=True)
            hat = pass_hat_k_array(n, c, k, curtailed=True)
            at = pass_at_k_array(n, c, k, curtailed=True)
            per_ticket.append({t: (h, a) for t, h, a in zip(counts, hat, at, strict=True)})
            if stop_early:
                assert len(outcome.trials) < 3 * 4 * k
            else:
                assert len(outcome.trials) == 3 * 4 * k
        assert per_ticket[0] == per_ticket[1]
    finally:
        store.close()
