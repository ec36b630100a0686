"""The loop: one period's replay, alerts and report joined in one place, the config wiring and the scheduler."""

from passhat.collector.loop._cycle import (
    AlertSetup,
    PeriodResult,
    alerts_fired,
    baseline_counts,
    evaluate_alerts,
    nothing_measured,
    period_counts,
    period_report,
    previous_figures,
    promote,
    report_folder,
    report_input_for,
    run_period,
    traffic_weights,
    write_period_report,
)
from passhat.collector.loop._scheduler import Scheduler, period_due
from passhat.collector.loop._sessions import SessionService, sessions_app, verdict_of
from passhat.collector.loop._setup import ReplayTargets, agent_spec, alert_setup, domains_of, replay_targets

__all__ = [
    "AlertSetup",
    "PeriodResult",
    "ReplayTargets",
    "Scheduler",
    "SessionService",
    "agent_spec",
    "alert_setup",
    "alerts_fired",
    "baseline_counts",
    "domains_of",
    "evaluate_alerts",
    "nothing_measured",
    "period_counts",
    "period_due",
    "period_report",
    "previous_figures",
    "promote",
    "replay_targets",
    "report_folder",
    "report_input_for",
    "run_period",
    "sessions_app",
    "traffic_weights",
    "verdict_of",
    "write_period_report",
]
