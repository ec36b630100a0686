"""Reliability statistics: pass@1, pass@k and pass^k from repeated trials, with intervals, mixtures and traffic.

Pure functions over numpy arrays. Inputs are per-ticket trial counts: n trials, c successes."""

from passhat.collector.reliability._curves import Curve, CurveBand, curve_band, mixture_curve, reliability_curve
from passhat.collector.reliability._domains import DomainFigures, pool_task_types, summarize_domains
from passhat.collector.reliability._drift import DropTest, detect_drop, simulate_alarm_rate
from passhat.collector.reliability._errors import (
    Correction,
    adjust_p_values,
    drop_power,
    tickets_for_power,
)
from passhat.collector.reliability._estimators import (
    ArrayLike,
    FloatArray,
    IntArray,
    as_counts,
    pass_at_k,
    pass_at_k_array,
    pass_hat_k,
    pass_hat_k_array,
    settled,
)
from passhat.collector.reliability._harness import (
    HARNESS_SIGNATURES,
    HarnessFailure,
    agent_trials,
    error_fix,
    harness_failures,
    is_harness_failure,
)
from passhat.collector.reliability._headline import HeadlineCurve, headline_curve, weighted_headline_curve
from passhat.collector.reliability._intervals import (
    Interval,
    difference_interval,
    half_width,
    sample_size_note,
    stratified_interval,
    tickets_for_half_width,
    wilson_bounds,
    wilson_interval,
)
from passhat.collector.reliability._mixture import Component, Mixture, MixtureFit, fit_mixture, mixture_log_likelihood
from passhat.collector.reliability._mixture_spread import (
    FEW_TICKETS_FOR_MIXTURE,
    GroupSpread,
    MixtureSpread,
    mixture_spread,
)
from passhat.collector.reliability._paired import (
    MIN_PAIRED_TICKETS,
    PairedDifference,
    paired_difference,
    unpaired_difference,
)
from passhat.collector.reliability._pairing import (
    FlippedTicket,
    PairedTaskType,
    TicketCounts,
    TicketPairing,
    pair_tickets,
    pairing_notes,
)
from passhat.collector.reliability._points import AggregatePoint, PointsFit, fit_mixture_to_points
from passhat.collector.reliability._shares import SignatureShare, signature_shares
from passhat.collector.reliability._summary import (
    IntervalMethod,
    TaskTypeSummary,
    bootstrap_means,
    summarize_task_type,
)
from passhat.collector.reliability._tallies import TicketCounted, settled_summary, summarize_tallies
from passhat.collector.reliability._traffic import (
    CalculatorResult,
    FailureProjection,
    TaskTypeTraffic,
    TrafficImpact,
    calculate,
    daily_volumes,
    project_failures,
    traffic_impact,
)
from passhat.collector.reliability._trials import TABLE_FIELDS, GradedTrial, TaskTypeTrials, summarize_trials
from passhat.collector.reliability._weighted_curve import CurvePoint, Stratum, WeightedCurve, weighted_curve
from passhat.collector.reliability._words import counted

__all__ = [
    "FEW_TICKETS_FOR_MIXTURE",
    "HARNESS_SIGNATURES",
    "MIN_PAIRED_TICKETS",
    "TABLE_FIELDS",
    "AggregatePoint",
    "ArrayLike",
    "CalculatorResult",
    "Component",
    "Correction",
    "Curve",
    "CurveBand",
    "CurvePoint",
    "DomainFigures",
    "DropTest",
    "FailureProjection",
    "FlippedTicket",
    "FloatArray",
    "GradedTrial",
    "GroupSpread",
    "HarnessFailure",
    "HeadlineCurve",
    "IntArray",
    "Interval",
    "IntervalMethod",
    "Mixture",
    "MixtureFit",
    "MixtureSpread",
    "PairedDifference",
    "PairedTaskType",
    "PointsFit",
    "SignatureShare",
    "Stratum",
    "TaskTypeSummary",
    "TaskTypeTraffic",
    "TaskTypeTrials",
    "TicketCounted",
    "TicketCounts",
    "TicketPairing",
    "TrafficImpact",
    "WeightedCurve",
    "adjust_p_values",
    "agent_trials",
    "as_counts",
    "bootstrap_means",
    "calculate",
    "counted",
    "curve_band",
    "daily_volumes",
    "detect_drop",
    "difference_interval",
    "drop_power",
    "error_fix",
    "fit_mixture",
    "fit_mixture_to_points",
    "half_width",
    "harness_failures",
    "headline_curve",
    "is_harness_failure",
    "mixture_curve",
    "mixture_log_likelihood",
    "mixture_spread",
    "pair_tickets",
    "paired_difference",
    "pairing_notes",
    "pass_at_k",
    "pass_at_k_array",
    "pass_hat_k",
    "pass_hat_k_array",
    "pool_task_types",
    "project_failures",
    "reliability_curve",
    "sample_size_note",
    "settled",
    "settled_summary",
    "signature_shares",
    "simulate_alarm_rate",
    "stratified_interval",
    "summarize_domains",
    "summarize_tallies",
    "summarize_task_type",
    "summarize_trials",
    "tickets_for_half_width",
    "tickets_for_power",
    "traffic_impact",
    "unpaired_difference",
    "weighted_curve",
    "weighted_headline_curve",
    "wilson_bounds",
    "wilson_interval",
]
