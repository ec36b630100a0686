"""The offline end-to-end demo: simulated production traffic, replay, report and an alert."""

from passhat.collector.demo._demo import (
    DemoOutcome,
    DemoSettings,
    DemoSteps,
    KeepRunning,
    demo_size,
    demo_summary,
    finished_demo,
    run_demo,
    run_demo_sync,
    serve_finished_demo,
)
from passhat.collector.demo._traffic import Arrival, TrafficPlan, plan_arrivals, serve_traffic, skewed_weights

__all__ = [
    "Arrival",
    "DemoOutcome",
    "DemoSettings",
    "DemoSteps",
    "KeepRunning",
    "TrafficPlan",
    "demo_size",
    "demo_summary",
    "finished_demo",
    "plan_arrivals",
    "run_demo",
    "run_demo_sync",
    "serve_finished_demo",
    "serve_traffic",
    "skewed_weights",
]
