"""The loop: one period's replay, alerts and report joined in one place, the config wiring and the scheduler."""

from passhat.collector.loop._cycle import (
    AlertSetup,
    PeriodResult,
    alerts_fired,
    baseline_counts,
    evaluate_alerts,
    period_counts,
    previous_figures,
    promote,
    report_folder,
    report_input_for,
    run_period,
    traffic_weights,
)
from passhat.collector.loop._scheduler import Scheduler, period_due
from passhat.collector.loop._setup import agent_spec, alert_setup, domains_of

__all__ = [
    "AlertSetup",
    "PeriodResult",
    "Scheduler",
    "agent_spec",
    "alert_setup",
    "alerts_fired",
    "baseline_counts",
    "domains_of",
    "evaluate_alerts",
    "period_counts",
    "period_due",
    "previous_figures",
    "promote",
    "report_folder",
    "report_input_for",
    "run_period",
    "traffic_weights",
]
