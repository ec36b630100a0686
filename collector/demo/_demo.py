"""`passhat demo`: the whole loop, offline, on the embedded default (SQLite).

A collector starts on a free local port. A simulated production agent (the ReferenceAgent, whose per-ticket
success rate is drawn from the mixture fitted to the seed's published figures) handles a week of support tickets
through the SDK, over OTLP/HTTP. The loop samples tickets per task type, replays each as k = 20 sandbox trials,
grades them, writes the weekly report and evaluates the alert rules. A second week follows in which one task type
regresses, and the drop alert reaches a local webhook receiver. Every figure comes from a simulated agent.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import passhat
from passhat.collector.alerts import AlertRule, RetryPolicy, WebhookChannel
from passhat.collector.demo._collector_process import collector_process
from passhat.collector.demo._receiver import WebhookReceiver
from passhat.collector.demo._traffic import TrafficPlan, plan_arrivals, serve_traffic, simulated_clock, skewed_weights
from passhat.collector.ingest import create_api_key
from passhat.collector.loop import AlertSetup, PeriodResult, run_period
from passhat.collector.reliability import AggregatePoint, fit_mixture_to_points
from passhat.collector.replay import AgentSpec, ReplaySettings, SandboxPool, WorkerProcesses, default_workers
from passhat.collector.store import Period, Store, open_store, week_of
from passhat.sandbox import FlawConfig, ReferenceAgent, load_domain

SEED_POINTS = ("pass@1=0.654", "pass@20=0.911", "pass^20=0.253")
AGENT_LABEL = "ReferenceAgent (offline simulation)"
PROJECT = "demo"


@dataclass(frozen=True)
class DemoSettings:
    """The demo's size; the defaults are what `make demo` runs."""

    tickets_per_week: int = 2000
    k: int = 20
    tickets_per_task_type: int = 8
    regressed_task_type: str = "return_delivered_items"
    # Enough tickets for the drop test to see the regression after Holm's correction across the 15 task types:
    # at 30 its power is about 67% at 99% confidence, at 50 about 99% (`drop_power`).
    regressed_tickets: int = 50
    regressed_success: float = 0.3
    alert_confidence: float = 0.99
    parallel: int = 16
    workers: int = 0  # worker processes for the production traffic and the replays (0: one per core)
    seed: int = 0
    today: dt.date = field(default_factory=lambda: dt.datetime.now(dt.UTC).date())


@dataclass
class WeekOutcome:
    period: Period
    production_tickets: int
    production_failed: int
    result: PeriodResult


@dataclass
class DemoOutcome:
    weeks: list[WeekOutcome]
    alerts_received: list[dict[str, Any]]
    mixture: list[tuple[float, float]]
    store_url: str
    seconds: float


class DemoSteps:
    """Progress hooks the CLI turns into Rich progress bars (no-ops by default)."""

    def start(self, name: str, total: int) -> Callable[[int, int], None]:
        return lambda done, total: None

    def note(self, text: str) -> None:
        return None


def _seed_mixture() -> list[tuple[float, float]]:
    fit = fit_mixture_to_points([AggregatePoint.parse(p) for p in SEED_POINTS], components=3)
    return [(c.weight, c.p) for c in fit.mixture.components]


def _wait_for_tickets(store: Store, period: Period, expected: int, timeout: float = 120.0) -> int:
    """Poll until the collector has stored every production ticket of the week (the SDK exports in batches)."""
    since = int(period.start_datetime().timestamp() * 1e9)
    until = int(period.end_datetime().timestamp() * 1e9)
    deadline = time.monotonic() + timeout
    while True:
        stored = len(
            store.list_tickets(PROJECT, source="production", since_ns=since, until_ns=until, limit=expected + 1)
        )
        if stored >= expected or time.monotonic() > deadline:
            return stored
        time.sleep(0.2)


#: Called at the end of the demo while its collector still runs: (the outcome, the web UI's URL, the project key).
KeepRunning = Callable[[DemoOutcome, str, str], None]


async def run_demo(
    out: Path, settings: DemoSettings | None = None, steps: DemoSteps | None = None, *, keep: KeepRunning | None = None
) -> DemoOutcome:
    """Run the whole loop for two weeks into ``out`` (a fresh SQLite store under ``out/data``).

    With ``keep``, the collector stays up until ``keep`` returns, so its web UI can be browsed."""
    settings = settings or DemoSettings()
    steps = steps or DemoSteps()
    started = time.monotonic()
    data = out / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    store_url = f"sqlite:///{(data / 'passhat.sqlite').resolve()}"
    store = open_store(store_url)
    key, _ = create_api_key(store, PROJECT, label="passhat demo")
    retail = load_domain("retail")
    if settings.regressed_task_type not in retail.task_types:
        raise ValueError(f"the retail domain has no task type {settings.regressed_task_type!r}")
    mixture = _seed_mixture()
    week2 = week_of(settings.today).previous(1)
    weeks = [week2.previous(1), week2]
    pool = SandboxPool(seed=settings.seed, workdir=data / "sandboxes")
    base = pool.base(retail)
    scenarios = {name: base.scenarios(name, 40, seed=settings.seed) for name in sorted(retail.task_types)}
    weights = skewed_weights(sorted(retail.task_types), seed=settings.seed)
    healthy = FlawConfig.from_mixture(mixture)
    regressed = FlawConfig.from_mixture(
        mixture, per_task_type={settings.regressed_task_type: [(1.0, settings.regressed_success)]}
    )
    outcomes: list[WeekOutcome] = []
    workers = settings.workers or default_workers()
    processes = WorkerProcesses(
        {"retail": retail}, workers=workers, concurrency=max(1, settings.parallel // workers), seed=settings.seed
    )
    try:
        await processes.start()
        with WebhookReceiver() as hook, collector_process(store_url, out / "collector.log") as url:
            steps.note(f"collector on {url} (web UI {url}/ui/), SQLite store at {data / 'passhat.sqlite'}")
            # The simulated agent records its writes but not the rows it reads (it works through MCP tools on
            # SQL Core), so a pseudonym in its intent would match no sandbox row: it blanks instead, and the
            # replay restores those values from the seed. One key per run, so the demo leaves no key file behind.
            demo_key = secrets.token_hex(16)
            production = passhat.configure(
                make_global=False, endpoint=url, api_key=key, service_name="support-agent (simulated)",
                source="production", clock=simulated_clock, max_queue_size=500_000, pseudonym_key=demo_key,
                redact_mode="blank", capture_content=True,  # the replies: production tickets are graded on them
            )  # fmt: skip
            sandbox_traces = passhat.configure(
                make_global=False, endpoint=url, api_key=key, service_name="passhat replay",
                source="sandbox", max_queue_size=500_000, pseudonym_key=demo_key,
            )  # fmt: skip
            alerts = AlertSetup(
                rules=[
                    AlertRule(
                        name="pass_hat_k_drop", kind="drop", task_type="*", baseline_periods=1,
                        min_tickets=settings.tickets_per_task_type, confidence=settings.alert_confidence,
                    )
                ],
                channels=[WebhookChannel(name="demo-webhook", url=hook.url)],
                retry=RetryPolicy(attempts=3, backoff_seconds=0.2), ui_url=f"{url}/ui/",
            )  # fmt: skip
            for index, (week, flaws) in enumerate(zip(weeks, (healthy, regressed), strict=True)):
                version = "1.0" if index == 0 else "1.1"
                factory = ReferenceAgent.factory(flaws)
                plan = TrafficPlan(week, settings.tickets_per_week, weights, seed=settings.seed + index)
                arrivals = plan_arrivals(plan, scenarios)
                tick = steps.start(f"{week.name}: production traffic (agent {version})", len(arrivals))
                done = 0

                def advance(step: int, tick: Callable[[int, int], None] = tick, total: int = len(arrivals)) -> None:
                    nonlocal done
                    done += step
                    tick(done, total)

                failed = await serve_traffic(
                    base, arrivals, factory, production, parallel=settings.parallel, progress=advance,
                    processes=processes,
                )  # fmt: skip
                production.flush()
                stored = _wait_for_tickets(store, week, len(arrivals))
                if stored < len(arrivals):
                    steps.note(f"only {stored} of {len(arrivals)} production tickets reached the collector")
                agent = AgentSpec(factory, AGENT_LABEL, version, simulated=True)
                replay = ReplaySettings(
                    k=settings.k,
                    tickets_per_task_type=settings.tickets_per_task_type,
                    sizes={settings.regressed_task_type: settings.regressed_tickets},
                    parallel=settings.parallel,
                    seed=settings.seed,
                )
                result = await run_period(
                    store, PROJECT, week, agent, settings=replay, domains={"retail": retail}, alerts=alerts,
                    report_dir=out / "reports", runtime=sandbox_traces, pool=pool, processes=processes,
                    progress=steps.start(f"{week.name}: replay, k = {settings.k}", 1),
                )  # fmt: skip
                outcomes.append(WeekOutcome(week, len(arrivals), failed, result))
            sandbox_traces.flush()
            production.shutdown()
            sandbox_traces.shutdown()
            received = list(hook.received)
            if keep is not None:
                so_far = DemoOutcome(outcomes, received, mixture, store_url, time.monotonic() - started)
                # On this thread, not a worker: Ctrl-C must reach `keep` (nothing else runs on the loop now).
                keep(so_far, f"{url}/ui/", key)
    finally:
        processes.close()
        pool.close()
        store.close()
    outcome = DemoOutcome(outcomes, received, mixture, store_url, time.monotonic() - started)
    summary = {**demo_summary(outcome), "settings": demo_size(settings)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return outcome


def demo_size(settings: DemoSettings) -> dict[str, int]:
    """What a demo's figures depend on that the command line sets: a finished demo is reused only at the same."""
    return {
        "tickets_per_week": settings.tickets_per_week,
        "k": settings.k,
        "tickets_per_task_type": settings.tickets_per_task_type,
    }


def finished_demo(out: Path) -> dict[str, Any] | None:
    """The summary of the finished demo in ``out`` whose store is still there, or None."""
    try:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or not summary.get("weeks") or not (out / "data" / "passhat.sqlite").is_file():
        return None
    return summary


def serve_finished_demo(out: Path, keep: Callable[[str, str], None]) -> None:
    """Serve the store of the finished demo in ``out`` until ``keep`` (given the web UI's URL and a key made for
    this visit, revoked when it ends) returns; nothing is replayed again."""
    store_url = f"sqlite:///{(out / 'data' / 'passhat.sqlite').resolve()}"
    with open_store(store_url) as store:
        key, record = create_api_key(store, PROJECT, label="passhat demo --keep")
    try:
        with collector_process(store_url, out / "collector.log") as url:
            keep(f"{url}/ui/", key)
    finally:
        with open_store(store_url) as store:
            store.revoke_api_key(record.prefix)


def demo_summary(outcome: DemoOutcome) -> dict[str, Any]:
    """The demo's JSON summary: each week's headline figures and where its report is."""
    return {
        "simulated": True,
        "agent": AGENT_LABEL,
        "agent_mixture": [{"weight": w, "p": p} for w, p in outcome.mixture],
        "seed_points": list(SEED_POINTS),
        "store": outcome.store_url,
        "seconds": round(outcome.seconds, 1),
        "weeks": [
            {
                "period": week.period.name,
                "production_tickets": week.production_tickets,
                "production_failed": week.production_failed,
                "overall": week.result.report.to_json()["overall"],
                "unweighted": week.result.report.to_json()["unweighted"],
                "not_replayable": len(week.result.report.to_json()["not_replayable"]),
                "alerts": [n.alert_id for n in (week.result.alerts.evaluation.notices if week.result.alerts else [])],
                "report": {name: str(path) for name, path in week.result.report_paths.items()},
            }
            for week in outcome.weeks
        ],
        "alerts_received": outcome.alerts_received,
    }


def run_demo_sync(
    out: Path, settings: DemoSettings | None = None, steps: DemoSteps | None = None, *, keep: KeepRunning | None = None
) -> DemoOutcome:
    """`run_demo` for callers without an event loop."""
    return asyncio.run(run_demo(out, settings, steps, keep=keep))
