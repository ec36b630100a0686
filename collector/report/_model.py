"""A built report: the figures of one period, typed, with the `report.json` shape in `Report.to_json`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from passhat.collector.reliability import HarnessFailure
from passhat.collector.report._fidelity import FIDELITY_TEST, TaskTypeFidelity
from passhat.collector.report._input import AlertFired, BackendChange
from passhat.collector.store import NotReplayable

Interval = tuple[float, float]


def _ci(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def _half(interval: Interval | None) -> float | None:
    return None if interval is None else (interval[1] - interval[0]) / 2.0


@dataclass(frozen=True)
class Figures:
    """pass@1, pass@k and pass^k with intervals; traffic-weighted figures are None when there is no traffic."""

    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    pass_at_1_ci: Interval | None = None
    pass_at_k_ci: Interval | None = None
    pass_hat_k_ci: Interval | None = None


@dataclass(frozen=True)
class Overall:
    """The headline: traffic-weighted figures and what they mean for a day of real tickets."""

    weighted: Figures
    unweighted: Figures
    expected_failed_tickets_per_day: float | None
    daily_volume: float
    measured_daily_volume: float
    tickets_sampled: int
    unmeasured_task_types: list[tuple[str, str, float]]
    expected_failed_tickets_per_day_ci: Interval | None = None


@dataclass(frozen=True)
class TaskTypeReport:
    """One task type's figures for the period."""

    domain: str
    task_type: str
    daily_volume: float
    tickets_sampled: int
    trials_per_ticket: int
    figures: Figures
    expected_failed_tickets_per_day: float
    signatures: dict[str, int]
    failed_trials: int
    trials: int
    expected_failed_tickets_per_day_ci: Interval | None = None
    sample_size: str = ""  # what the pass^k interval's width means in tickets
    extrapolated: bool = True  # False: too few tickets to extrapolate this task type's curve beyond its trials

    @property
    def name(self) -> str:
        return f"{self.domain}/{self.task_type}"


@dataclass(frozen=True)
class DomainReport:
    """A domain's task types together: traffic-weighted within the domain, with stratified intervals."""

    domain: str
    task_types: int
    daily_volume: float
    tickets_sampled: int
    weighted: Figures
    unweighted: Figures
    expected_failed_tickets_per_day: float | None
    expected_failed_tickets_per_day_ci: Interval | None = None


@dataclass(frozen=True)
class CurveData:
    """pass@k and pass^k for k = 1..max_k; values beyond the trials are the mixture's extrapolation."""

    k: list[int]
    pass_at_k: list[float]
    pass_hat_k: list[float]
    extrapolated: list[bool]
    pass_at_k_band: list[Interval] | None = None
    pass_hat_k_band: list[Interval] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "k": self.k,
            "pass_at_k": self.pass_at_k,
            "pass_hat_k": self.pass_hat_k,
            "extrapolated": self.extrapolated,
        }
        if self.pass_hat_k_band is not None and self.pass_at_k_band is not None:
            data["pass_at_k_band"] = [list(b) for b in self.pass_at_k_band]
            data["pass_hat_k_band"] = [list(b) for b in self.pass_hat_k_band]
        return data


@dataclass(frozen=True)
class Attempt:
    """One trial of the ticket shown side by side."""

    attempt: int
    passed: bool
    signature: str | None
    termination_reason: str
    changes: list[BackendChange]
    final_response: str


@dataclass(frozen=True)
class AttemptsSideBySide:
    """The k attempts of one ticket of the least reliable task type."""

    domain: str
    task_type: str
    ticket_id: str
    why: str
    attempts: list[Attempt]

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "task_type": self.task_type,
            "ticket_id": self.ticket_id,
            "why": self.why,
            "attempts": [
                {
                    "attempt": a.attempt,
                    "passed": a.passed,
                    "signature": a.signature,
                    "termination_reason": a.termination_reason,
                    "changes": [c.to_dict() for c in a.changes],
                    "final_response": a.final_response,
                }
                for a in self.attempts
            ],
        }


@dataclass(frozen=True)
class TrendPoint:
    """One period's overall figures, with the change against the period before it."""

    period: str
    k: int
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    expected_failed_tickets_per_day: float | None
    pass_at_1_change: float | None
    pass_hat_k_change: float | None
    agent: str = ""
    agent_version: str = ""
    pass_at_1_ci: Interval | None = None
    pass_hat_k_ci: Interval | None = None
    tickets: int | None = None
    pass_at_1_change_ci: Interval | None = None  # two independent periods: Newcombe's square-and-add
    pass_hat_k_change_ci: Interval | None = None


@dataclass(frozen=True)
class Report:
    """One period's reliability report. `to_json` is the documented `report.json` (docs/reports.md)."""

    period: str
    first_day: dt.date
    last_day: dt.date
    k: int
    agent: str
    simulated: bool
    simulated_trials: int
    generated_at: dt.datetime
    confidence_level: float
    overall: Overall
    task_types: list[TaskTypeReport]
    domains: list[DomainReport]
    curve: CurveData
    curve_weighting: str
    unweighted_curve: CurveData
    task_type_curves: list[CurveData]
    least_reliable: AttemptsSideBySide | None
    trend: list[TrendPoint]
    not_replayable: list[NotReplayable]
    alerts: list[AlertFired]
    harness_failures: list[HarnessFailure] = field(default_factory=list)  # in no figure, shown by cause
    agent_version: str = ""
    run_id: str = ""
    run_role: str = ""
    comparison: dict[str, Any] | None = None  # candidate vs a baseline run on the same tickets
    design: dict[str, Any] | None = None  # the trial design: fixed, or curtailed with the trials it saved
    sample_size: str = ""  # the widest per-task-type pass^k interval, in tickets
    fidelity: list[TaskTypeFidelity] = field(default_factory=list)  # production pass rate beside pass@1
    inferred_intents: dict[str, dict[str, Any]] = field(default_factory=dict)  # ticket id -> source, evidence

    def to_json(self) -> dict[str, Any]:
        """The `report.json` document: the issue's keys first, then the extras the HTML page draws from."""
        weighted, plain = self.overall.weighted, self.overall.unweighted
        return {
            "period": self.period,
            "k": self.k,
            "overall": {
                "pass_at_1": weighted.pass_at_1,
                "pass_at_k": weighted.pass_at_k,
                "pass_hat_k": weighted.pass_hat_k,
                "expected_failed_tickets_per_day": self.overall.expected_failed_tickets_per_day,
                "pass_at_1_ci": _ci(weighted.pass_at_1_ci),
                "pass_at_k_ci": _ci(weighted.pass_at_k_ci),
                "pass_hat_k_ci": _ci(weighted.pass_hat_k_ci),
                "daily_volume": self.overall.daily_volume,
                "measured_daily_volume": self.overall.measured_daily_volume,
                "expected_failed_tickets_per_day_ci": _ci(self.overall.expected_failed_tickets_per_day_ci),
                "tickets": self.overall.tickets_sampled,
                "pass_hat_k_half_width": _half(weighted.pass_hat_k_ci),
            },
            "unweighted": {
                "pass_at_1": plain.pass_at_1,
                "pass_at_k": plain.pass_at_k,
                "pass_hat_k": plain.pass_hat_k,
                "tickets": self.overall.tickets_sampled,
                "pass_at_1_ci": _ci(plain.pass_at_1_ci),
                "pass_at_k_ci": _ci(plain.pass_at_k_ci),
                "pass_hat_k_ci": _ci(plain.pass_hat_k_ci),
            },
            "task_types": [
                {
                    "domain": t.domain,
                    "task_type": t.task_type,
                    "daily_volume": t.daily_volume,
                    "tickets_sampled": t.tickets_sampled,
                    "trials_per_ticket": t.trials_per_ticket,
                    "pass_at_1": t.figures.pass_at_1,
                    "pass_at_k": t.figures.pass_at_k,
                    "pass_hat_k": t.figures.pass_hat_k,
                    "pass_hat_k_ci": _ci(t.figures.pass_hat_k_ci),
                    "signatures": t.signatures,
                    "pass_at_1_ci": _ci(t.figures.pass_at_1_ci),
                    "pass_at_k_ci": _ci(t.figures.pass_at_k_ci),
                    "expected_failed_tickets_per_day": t.expected_failed_tickets_per_day,
                    "trials": t.trials,
                    "failed_trials": t.failed_trials,
                    "expected_failed_tickets_per_day_ci": _ci(t.expected_failed_tickets_per_day_ci),
                    "pass_at_1_half_width": _half(t.figures.pass_at_1_ci),
                    "pass_at_k_half_width": _half(t.figures.pass_at_k_ci),
                    "pass_hat_k_half_width": _half(t.figures.pass_hat_k_ci),
                    "sample_size": t.sample_size,
                    "extrapolated": t.extrapolated,
                }
                for t in self.task_types
            ],
            "not_replayable": [row.to_dict() for row in self.not_replayable],
            "harness_failures": [group.to_dict() for group in self.harness_failures],
            "inferred_intents": self.inferred_intents,
            "alerts": [alert.to_dict() for alert in self.alerts],
            "days": [self.first_day.isoformat(), self.last_day.isoformat()],
            "agent": self.agent,
            "agent_version": self.agent_version,
            "run": {"run_id": self.run_id, "role": self.run_role},
            **({"comparison": self.comparison} if self.comparison is not None else {}),
            "simulated": self.simulated,
            "simulated_trials": self.simulated_trials,
            "generated_at": self.generated_at.isoformat(),
            "confidence_level": self.confidence_level,
            "unmeasured_task_types": [
                {"domain": d, "task_type": t, "daily_volume": v} for d, t, v in self.overall.unmeasured_task_types
            ],
            "domains": [
                {
                    "domain": d.domain,
                    "task_types": d.task_types,
                    "daily_volume": d.daily_volume,
                    "tickets_sampled": d.tickets_sampled,
                    "pass_at_1": d.weighted.pass_at_1,
                    "pass_at_k": d.weighted.pass_at_k,
                    "pass_hat_k": d.weighted.pass_hat_k,
                    "pass_at_1_ci": _ci(d.weighted.pass_at_1_ci),
                    "pass_at_k_ci": _ci(d.weighted.pass_at_k_ci),
                    "pass_hat_k_ci": _ci(d.weighted.pass_hat_k_ci),
                    "expected_failed_tickets_per_day": d.expected_failed_tickets_per_day,
                    "expected_failed_tickets_per_day_ci": _ci(d.expected_failed_tickets_per_day_ci),
                    "unweighted": {
                        "pass_at_1": d.unweighted.pass_at_1,
                        "pass_at_k": d.unweighted.pass_at_k,
                        "pass_hat_k": d.unweighted.pass_hat_k,
                    },
                }
                for d in self.domains
            ],
            "curve": {**self.curve.to_dict(), "weighting": self.curve_weighting},
            "unweighted_curve": self.unweighted_curve.to_dict(),
            "task_type_curves": [
                {"domain": t.domain, "task_type": t.task_type, **curve.to_dict()}
                for t, curve in zip(self.task_types, self.task_type_curves, strict=True)
            ],
            "least_reliable": None if self.least_reliable is None else self.least_reliable.to_dict(),
            "design": self.design,
            "sample_size": self.sample_size,
            "interval": "continuity-corrected Wilson over tickets; stratified by task type when traffic-weighted",
            "sandbox_fidelity": {
                "test": FIDELITY_TEST.format(level=100 * self.confidence_level),
                "task_types": [f.to_dict() for f in self.fidelity],
            },
            "trend": [
                {
                    "period": p.period,
                    "k": p.k,
                    "pass_at_1": p.pass_at_1,
                    "pass_at_k": p.pass_at_k,
                    "pass_hat_k": p.pass_hat_k,
                    "expected_failed_tickets_per_day": p.expected_failed_tickets_per_day,
                    "pass_at_1_change": p.pass_at_1_change,
                    "pass_hat_k_change": p.pass_hat_k_change,
                    "agent": p.agent,
                    "agent_version": p.agent_version,
                    "pass_at_1_ci": _ci(p.pass_at_1_ci),
                    "pass_hat_k_ci": _ci(p.pass_hat_k_ci),
                    "tickets": p.tickets,
                    "pass_at_1_change_ci": _ci(p.pass_at_1_change_ci),
                    "pass_hat_k_change_ci": _ci(p.pass_hat_k_change_ci),
                }
                for p in self.trend
            ],
        }
