"""Reliability statistics: pass@1, pass@k and pass^k from repeated trials, with intervals, mixtures and traffic.

Pure functions over numpy arrays. Inputs are per-ticket trial counts: n trials, c successes."""

from passhat.collector.reliability._curves import Curve, mixture_curve, reliability_curve
from passhat.collector.reliability._drift import DropTest, detect_drop, simulate_alarm_rate
from passhat.collector.reliability._estimators import (
    ArrayLike,
    FloatArray,
    IntArray,
    as_counts,
    pass_at_k,
    pass_at_k_array,
    pass_hat_k,
    pass_hat_k_array,
)
from passhat.collector.reliability._mixture import Component, Mixture, MixtureFit, fit_mixture, mixture_log_likelihood
from passhat.collector.reliability._paired import MIN_PAIRED_TICKETS, PairedDifference, paired_difference
from passhat.collector.reliability._points import AggregatePoint, PointsFit, fit_mixture_to_points
from passhat.collector.reliability._summary import TaskTypeSummary, bootstrap_means, summarize_task_type
from passhat.collector.reliability._traffic import (
    CalculatorResult,
    TaskTypeTraffic,
    TrafficImpact,
    calculate,
    traffic_impact,
)
from passhat.collector.reliability._trials import GradedTrial, TaskTypeTrials, summarize_trials

__all__ = [
    "MIN_PAIRED_TICKETS",
    "AggregatePoint",
    "ArrayLike",
    "CalculatorResult",
    "Component",
    "Curve",
    "DropTest",
    "FloatArray",
    "GradedTrial",
    "IntArray",
    "Mixture",
    "MixtureFit",
    "PairedDifference",
    "PointsFit",
    "TaskTypeSummary",
    "TaskTypeTraffic",
    "TaskTypeTrials",
    "TrafficImpact",
    "as_counts",
    "bootstrap_means",
    "calculate",
    "detect_drop",
    "fit_mixture",
    "fit_mixture_to_points",
    "mixture_curve",
    "mixture_log_likelihood",
    "paired_difference",
    "pass_at_k",
    "pass_at_k_array",
    "pass_hat_k",
    "pass_hat_k_array",
    "reliability_curve",
    "simulate_alarm_rate",
    "summarize_task_type",
    "summarize_trials",
    "traffic_impact",
]
