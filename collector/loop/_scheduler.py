"""The scheduler inside `passhat serve`: at the configured time, run the loop on the period that just ended.

Weekly at Monday 06:00 UTC (the default) replays last ISO week; daily replays yesterday. Each run samples,
replays (resuming an interrupted run), evaluates the alert rules and writes the report, like
`passhat replay --period`, then sends the report to the `[report] send_to` channels (once per period and channel;
a delivery failure is recorded in the alert history and never stops the scheduler). A period without production
tickets is logged as one line (nothing to replay). A failed run is logged with its traceback and retried at the
next tick; it never stops the collector.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from passhat.collector.config import PasshatConfig, ScheduleConfig
from passhat.collector.replay import NothingToReplayError
from passhat.collector.store import Period, Store, parse_period, week_of
from passhat.sandbox import ModelServerUnusableError

if TYPE_CHECKING:
    from passhat.collector.loop._cycle import PeriodResult

log = logging.getLogger("passhat.scheduler")

NOTHING_TO_REPLAY = "nothing to replay"
"""`Scheduler.runs`' outcome of a period without production tickets (logged as one line, not as a failure)."""

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def next_run(schedule: ScheduleConfig, after: dt.datetime) -> dt.datetime:
    """The first scheduled moment strictly after ``after`` (aware datetimes; returned in UTC)."""
    zone = ZoneInfo(schedule.timezone)
    local = after.astimezone(zone)
    hour, minute = (int(part) for part in schedule.time.split(":"))
    candidate = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if schedule.every == "weekly":
        target = _WEEKDAYS.index(schedule.weekday)
        candidate += dt.timedelta(days=(target - candidate.weekday()) % 7)
        if candidate <= local:
            candidate += dt.timedelta(days=7)
    elif candidate <= local:
        candidate += dt.timedelta(days=1)
    return candidate.astimezone(dt.UTC)


def period_due(schedule: ScheduleConfig, at: dt.datetime) -> Period:
    """The period a run at ``at`` covers: the ISO week (weekly) or the day (daily) before it."""
    local_day = at.astimezone(ZoneInfo(schedule.timezone)).date()
    if schedule.every == "weekly":
        return week_of(local_day).previous(1)
    return parse_period((local_day - dt.timedelta(days=1)).isoformat())


class Scheduler:
    """Runs the loop at each scheduled time in a background thread, on the collector's store."""

    def __init__(
        self,
        config: PasshatConfig,
        store: Store,
        *,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="passhat-scheduler", daemon=True)
        self.runs: list[tuple[str, str]] = []  # (period, "ok" | NOTHING_TO_REPLAY | error text)

    def start(self) -> dt.datetime:
        """Start the thread; returns the first scheduled time."""
        first = next_run(self.config.schedule, self.clock())
        self._thread.start()
        return first

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def run_once(self, period: Period) -> PeriodResult:
        """Run the loop for one period now (replay, alerts, report)."""
        from passhat.collector.loop._cycle import run_period
        from passhat.collector.loop._setup import (
            agent_spec,
            alert_setup,
            replay_settings,
            replay_targets,
            report_delivery,
        )

        config = self.config
        settings = replay_settings(config)
        targets = replay_targets(config)
        return asyncio.run(
            run_period(
                self.store,
                config.project,
                period,
                agent_spec(config),
                settings=settings,
                domains=targets.domains,
                adapters=targets.adapters,
                alerts=alert_setup(config),
                report_dir=config.report_dir(),
                delivery=report_delivery(config),
            )
        )

    def _loop(self) -> None:
        while not self._stop.is_set():
            due = next_run(self.config.schedule, self.clock())
            wait = (due - self.clock()).total_seconds()
            if self._stop.wait(timeout=max(0.0, wait)):
                return
            period = period_due(self.config.schedule, due)
            try:
                result = self.run_once(period)
                self.runs.append((period.name, "ok"))
                after = next_run(self.config.schedule, max(self.clock(), due))
                log.warning(
                    "passhat scheduler: %s; next run at %s UTC",
                    ran(self.config.project, result),
                    f"{after:%Y-%m-%d %H:%M}",
                )
            except NothingToReplayError as exc:  # a quiet period is normal, not a failure
                self.runs.append((period.name, NOTHING_TO_REPLAY))
                after = next_run(self.config.schedule, max(self.clock(), due))
                log.warning("passhat scheduler: %s; next run at %s UTC", exc, f"{after:%Y-%m-%d %H:%M}")
            except ModelServerUnusableError as exc:  # known and said in full: one line, no traceback
                self.runs.append((period.name, f"stopped: {exc}"))
                log.error(
                    "passhat scheduler: the run for %s stopped: %s. The trials stored so far are kept: once the "
                    "model server answers, `passhat replay --period %s` resumes the run",
                    period.name,
                    exc,
                    period.name,
                )
            except Exception as exc:  # a failed run must not stop the collector
                self.runs.append((period.name, repr(exc)))
                log.exception("passhat scheduler: the run for %s failed", period.name)


def ran(project: str, result: PeriodResult) -> str:
    """One line on what a period's run did: its run and trials, the headline figure with its interval and
    sample size (or why nothing was measured), the report's folder, the alerts fired and the report's delivery."""
    from passhat.collector.report import Report

    run, report = result.outcome.run, result.report
    parts = [f"replayed {report.period} of project {project!r}: run {run.run_id} ({len(result.outcome.trials)} trials)"]
    if isinstance(report, Report):
        weighted = report.overall.weighted.pass_hat_k is not None
        figure = report.overall.weighted if weighted else report.overall.unweighted
        if figure.pass_hat_k is not None:
            interval = (
                ""
                if figure.pass_hat_k_ci is None
                else " [{:.1f}, {:.1f}]".format(*(100 * v for v in figure.pass_hat_k_ci))
            )
            parts.append(
                f"pass^{report.k} {100 * figure.pass_hat_k:.1f}%{interval} over {report.overall.tickets_sampled}"
                f" tickets{'' if weighted else ' (unweighted: no traffic)'}"
            )
    else:
        parts.append(f"nothing measured: {report.why}")
    if not result.official:
        parts.append("exploratory (not the period's figures)")
    if result.report_paths:
        parts.append(f"report in {next(iter(result.report_paths.values())).parent}")
    if result.alerts is not None:
        fired = result.alerts.evaluation.fire
        parts.append(f"{len(fired)} alert{'' if len(fired) == 1 else 's'} fired")
    if result.delivery is not None:
        sent = ", ".join(
            f"{channel} {outcome if outcome == 'ok' else 'failed'}"
            for channel, outcome in sorted(result.delivery.sent.items())
        )
        if sent:
            parts.append(f"report sent: {sent}")
    return "; ".join(parts)
