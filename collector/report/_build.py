"""From a period's graded trials and live traffic to the report's figures.

Per task type: the unbiased per-ticket estimators averaged over sampled tickets, with continuity-corrected
Wilson intervals over tickets. Overall and per domain: task types weighted by their live daily volume, because
a customer meets task types in proportion to traffic, not in proportion to how many we sampled; their intervals
are stratified (task types are the strata, volumes the known weights). Expected failed tickets a day carry the
interval of the weighted pass@1. Curves beyond the trials are drawn with a band (see `curve_band`), and a task
type with fewer than MIN_EXTRAPOLATION_TICKETS tickets is not extrapolated at all.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from passhat.collector.reliability import (
    Curve,
    CurveBand,
    Stratum,
    TaskTypeTraffic,
    WeightedCurve,
    curve_band,
    daily_volumes,
    fit_mixture,
    half_width,
    reliability_curve,
    stratified_interval,
    summarize_task_type,
    traffic_impact,
    weighted_curve,
)
from passhat.collector.report._fidelity import TaskTypeFidelity, sandbox_fidelity
from passhat.collector.report._input import (
    ReportInput,
    ReportInputError,
    TrialResult,
    period_days,
    report_period,
    tallies_of,
    validate,
)
from passhat.collector.report._model import (
    Attempt,
    AttemptsSideBySide,
    CurveData,
    DomainReport,
    Figures,
    Interval,
    Overall,
    Report,
    TaskTypeReport,
)
from passhat.collector.report._trend import period_trend
from passhat.collector.store import TicketTally

MIN_CURVE_K = 50
#: Below this many tickets a task type's own curve stops at its trials: EM cannot pick a model from fewer.
MIN_EXTRAPOLATION_TICKETS = 30
UNCLASSIFIED = "unclassified"


@dataclass
class _Measured:
    """A task type's per-ticket counts, curve and band, kept while the report is assembled."""

    report: TaskTypeReport
    n: np.ndarray
    c: np.ndarray
    curve: Curve
    band: CurveBand


def _clamp(value: float | None) -> float | None:
    """A weighted mean of probabilities, kept inside [0, 1] against rounding (1.0000000000000002)."""
    return None if value is None else min(1.0, max(0.0, value))


def _curve_data(curve: Curve, band: CurveBand | None = None, *, upto: int | None = None) -> CurveData:
    """The curve as the report stores it, with its band; ``upto`` cuts it at the trials run (no extrapolation)."""
    data = curve.to_dict()
    end = len(data["k"]) if upto is None else upto

    def pairs(low: np.ndarray, high: np.ndarray) -> list[Interval]:
        return [(float(a), float(b)) for a, b in zip(low[:end], high[:end], strict=True)]

    return CurveData(
        k=[int(v) for v in data["k"]][:end],
        pass_at_k=[float(v) for v in data["pass_at_k"]][:end],
        pass_hat_k=[float(v) for v in data["pass_hat_k"]][:end],
        extrapolated=[bool(v) for v in data["extrapolated"]][:end],
        pass_at_k_band=None if band is None else pairs(band.pass_at_k_low, band.pass_at_k_high),
        pass_hat_k_band=None if band is None else pairs(band.pass_hat_k_low, band.pass_hat_k_high),
    )


def _first_attempts(tickets: Sequence[TicketTally], k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Under the curtailed design (some ticket settled before k): counts of each ticket's first min_trials."""
    first = min(t.trials for t in tickets)
    if first >= k:
        return None
    # every ticket ran at least min_trials attempts, and some stopped right there
    return np.full(len(tickets), first), np.array([t.passes_in_first(first) for t in tickets])


def _curve(n: np.ndarray, c: np.ndarray, max_k: int, *, quick: bool = False) -> Curve:
    """pass@k and pass^k for k = 1..max_k, the extrapolated part joined to the measured part.

    Past the trials run, the fitted mixture gives the shape of the decay and the data give its level: the
    mixture's values are scaled so that they meet the unbiased estimate at the last measured k. Taken raw, the
    mixture's own pass^k at that k differs from the estimate by sampling noise, which would draw a step (even an
    upward one) where the curve passes from measured to extrapolated. ``quick`` is for per-task-type curves.
    """
    reach = int(n.min())
    if reach >= max_k:
        return reliability_curve(n, c, max_k)
    # A task type has tens of sampled tickets: BIC rarely supports a fourth group there, and four-group fits cost
    # the most, so per-task-type fits stop at three (the pooled curve keeps the defaults). Fewer restarts than the
    # default found worse optima in the benchmark's data; the tolerance does not change the fits found there.
    model = fit_mixture(n, c, max_components=3, tol=1e-8) if quick else fit_mixture(n, c)
    raw = reliability_curve(n, c, max_k, mixture=model)
    hat, miss = raw.pass_hat_k.copy(), 1.0 - raw.pass_at_k
    beyond = raw.extrapolated
    seam_hat = float(model.pass_hat_k(reach)[0])
    seam_miss = 1.0 - float(model.pass_at_k(reach)[0])
    hat[beyond] = hat[reach - 1] * model.pass_hat_k(raw.k[beyond]) / seam_hat if seam_hat > 0 else 0.0
    miss[beyond] = miss[reach - 1] * (1.0 - model.pass_at_k(raw.k[beyond])) / seam_miss if seam_miss > 0 else 0.0
    return Curve(raw.k, np.clip(1.0 - miss, 0.0, 1.0), np.clip(hat, 0.0, 1.0), beyond)


def _daily_volumes(report_input: ReportInput) -> dict[tuple[str, str], float]:
    """`daily_volumes` of the report's traffic, by (domain, task type)."""
    return daily_volumes((row.day, (row.domain, row.task_type), row.tickets) for row in report_input.traffic)


def _measure(
    key: tuple[str, str],
    tickets: list[TicketTally],
    volume: float,
    report_input: ReportInput,
    rng: np.random.Generator,
    max_k: int,
) -> _Measured:
    k, level = report_input.k, report_input.confidence_level
    n = np.array([t.trials for t in tickets], dtype=np.int64)
    c = np.array([t.passes for t in tickets], dtype=np.int64)
    first = _first_attempts(tickets, k)
    summary = summarize_task_type(
        n, c, k, level=level, first_n=None if first is None else first[0], first_c=None if first is None else first[1]
    )
    low, high = summary.pass_at_1_ci
    failed = int((n - c).sum())
    signatures: Counter[str] = Counter()
    for ticket in tickets:
        signatures.update(ticket.signatures)
    if failed > sum(signatures.values()):
        signatures[UNCLASSIFIED] += failed - sum(signatures.values())
    report = TaskTypeReport(
        domain=key[0],
        task_type=key[1],
        daily_volume=volume,
        tickets_sampled=summary.tickets,
        trials_per_ticket=summary.trials_per_ticket,
        figures=Figures(
            pass_at_1=summary.pass_at_1,
            pass_at_k=summary.pass_at_k,
            pass_hat_k=summary.pass_hat_k,
            pass_at_1_ci=summary.pass_at_1_ci,
            pass_at_k_ci=summary.pass_at_k_ci,
            pass_hat_k_ci=summary.pass_hat_k_ci,
        ),
        expected_failed_tickets_per_day=volume * (1.0 - summary.pass_at_1),
        signatures=dict(sorted(signatures.items(), key=lambda item: (-item[1], item[0]))),
        failed_trials=failed,
        trials=int(n.sum()),
        expected_failed_tickets_per_day_ci=(volume * (1.0 - high), volume * (1.0 - low)),
        sample_size=summary.sample_size,
        extrapolated=summary.tickets >= MIN_EXTRAPOLATION_TICKETS,
    )
    curve = _curve(n, c, max_k, quick=True)
    return _Measured(report, n, c, curve, curve_band(n, c, max_k, level=level))


def _strata(group: Sequence[_Measured], *, by_traffic: bool = True) -> list[Stratum]:
    return [
        Stratum(m.curve, m.band, m.report.tickets_sampled, m.report.daily_volume if by_traffic else 1.0) for m in group
    ]


def _weighted(
    group: Sequence[_Measured], level: float, k: int
) -> tuple[Figures, float | None, Interval | None, WeightedCurve | None]:
    """Volume-weighted figures of task types, their expected failed tickets a day and their curve with its band.

    pass@k and pass^k and their intervals are read from the weighted curve at k (`weighted_curve`), so the band
    drawn at k is the interval printed for k. Under the curtailed design k lies beyond the curve's measured part
    (some tickets stopped before k); the settled per-ticket values at k then give the figures, stratified alike.
    None without traffic.
    """
    if sum(m.report.daily_volume for m in group) <= 0:
        return Figures(None, None, None), None, None, None
    impact = traffic_impact(
        [
            TaskTypeTraffic(
                task_type=m.report.name,
                daily_volume=m.report.daily_volume,
                pass_at_1=float(m.report.figures.pass_at_1 or 0.0),
                pass_hat_k=float(m.report.figures.pass_hat_k or 0.0),
                pass_at_k=m.report.figures.pass_at_k,
            )
            for m in group
        ]
    )
    volumes = np.array([m.report.daily_volume for m in group])
    tickets = np.array([m.report.tickets_sampled for m in group], dtype=np.float64)

    def stratified(name: str) -> tuple[float, Interval]:
        means = np.array([float(getattr(m.report.figures, name) or 0.0) for m in group])
        estimate, interval, _ = stratified_interval(means, tickets, volumes, level)
        return estimate, interval

    curve = weighted_curve(_strata(group), level)
    point = curve.at(k)
    at_1 = stratified("pass_at_1")[1]
    if point.extrapolated:
        (at_k_value, at_k), (hat_k_value, hat_k) = stratified("pass_at_k"), stratified("pass_hat_k")
    else:
        at_k_value, at_k, hat_k_value, hat_k = (
            point.pass_at_k,
            point.pass_at_k_ci,
            point.pass_hat_k,
            point.pass_hat_k_ci,
        )
    figures = Figures(_clamp(impact.pass_at_1), _clamp(at_k_value), _clamp(hat_k_value), at_1, at_k, hat_k)
    total = impact.total_daily_volume
    return figures, impact.expected_failed_tickets_per_day, (total * (1.0 - at_1[1]), total * (1.0 - at_1[0])), curve


def _unweighted(group: Sequence[_Measured], report_input: ReportInput) -> Figures:
    """The plain mean over every sampled ticket of the group, as papers report it."""
    n = np.concatenate([m.n for m in group])
    c = np.concatenate([m.c for m in group])
    summary = summarize_task_type(
        n,
        c,
        report_input.k,
        level=report_input.confidence_level,
        resamples=report_input.resamples,
        seed=report_input.seed,
    )
    return Figures(
        summary.pass_at_1,
        summary.pass_at_k,
        summary.pass_hat_k,
        summary.pass_at_1_ci,
        summary.pass_at_k_ci,
        summary.pass_hat_k_ci,
    )


def _curve_of(curve: WeightedCurve) -> CurveData:
    c, b = curve.curve, curve.band
    return CurveData(
        k=[int(v) for v in c.k],
        pass_at_k=[float(v) for v in c.pass_at_k],
        pass_hat_k=[float(v) for v in c.pass_hat_k],
        extrapolated=[bool(v) for v in c.extrapolated],
        pass_at_k_band=list(zip(b.pass_at_k_low.tolist(), b.pass_at_k_high.tolist(), strict=True)),
        pass_hat_k_band=list(zip(b.pass_hat_k_low.tolist(), b.pass_hat_k_high.tolist(), strict=True)),
    )


def _least_reliable(
    measured: Sequence[_Measured],
    tickets: Sequence[TicketTally],
    k: int,
    attempts_of: Callable[[str], list[TrialResult]],
) -> AttemptsSideBySide:
    """The task type with the lowest pass^k, and its ticket whose attempts disagree the most."""
    worst = min(
        measured,
        key=lambda m: (m.report.figures.pass_hat_k, m.report.figures.pass_at_1, -m.report.daily_volume, m.report.name),
    )
    own = [t for t in tickets if (t.domain, t.task_type) == (worst.report.domain, worst.report.task_type)]
    # The most split ticket shows the verdict flipping between attempts of the same request.
    chosen = min(own, key=lambda t: (abs(2 * t.passes_in_first(k) - k), t.ticket_id))
    trials = sorted(attempts_of(chosen.ticket_id), key=lambda t: t.attempt)
    shown = [t for t in trials if chosen.attempts >> (t.attempt - 1) & 1][:k]  # the counted ones
    passed = sum(t.passed for t in shown)
    return AttemptsSideBySide(
        domain=worst.report.domain,
        task_type=worst.report.task_type,
        ticket_id=chosen.ticket_id,
        why=(
            f"{worst.report.name} has the lowest pass^{k} this period; ticket {chosen.ticket_id} is its most split "
            f"ticket: {passed} of its {len(shown)} attempts passed"
        ),
        attempts=[
            Attempt(t.attempt, t.passed, t.signature, t.termination_reason, list(t.changes), t.final_response)
            for t in shown
        ],
    )


def build_report(report_input: ReportInput) -> Report:
    """Compute one period's report from its trials, traffic, unreplayable tickets, alerts and history."""
    by_hand = validate(report_input)
    tallies = tallies_of(by_hand) if by_hand else sorted(report_input.tallies, key=lambda t: t.ticket_id)
    attempts_of = _attempts_reader(report_input, by_hand)
    first_day, last_day = period_days(report_input.period)
    volumes = _daily_volumes(report_input)
    max_k = max(report_input.k, MIN_CURVE_K)
    rng = np.random.default_rng(report_input.seed)
    grouped: dict[tuple[str, str], list[TicketTally]] = {}
    for tally in sorted(tallies, key=lambda t: (t.domain or "", t.task_type, t.ticket_id)):
        grouped.setdefault((tally.domain or "unknown", tally.task_type), []).append(tally)
    measured = [
        _measure(key, group, volumes.get(key, 0.0), report_input, rng, max_k) for key, group in sorted(grouped.items())
    ]
    level = report_input.confidence_level
    k = report_input.k
    weighted, failed, failed_ci, weighted_curve_ = _weighted(measured, level, k)
    unweighted = _unweighted(measured, report_input)
    domains = []
    for domain in sorted({m.report.domain for m in measured}):
        group = [m for m in measured if m.report.domain == domain]
        domain_weighted, domain_failed, domain_failed_ci, _ = _weighted(group, level, k)
        domains.append(
            DomainReport(
                domain=domain,
                task_types=len(group),
                daily_volume=sum(m.report.daily_volume for m in group),
                tickets_sampled=sum(m.report.tickets_sampled for m in group),
                weighted=domain_weighted,
                unweighted=_unweighted(group, report_input),
                expected_failed_tickets_per_day=domain_failed,
                expected_failed_tickets_per_day_ci=domain_failed_ci,
            )
        )
    measured_volume = sum(m.report.daily_volume for m in measured)
    unmeasured = sorted((d, t, v) for (d, t), v in volumes.items() if (d, t) not in grouped)
    all_n = np.concatenate([m.n for m in measured])
    all_c = np.concatenate([m.c for m in measured])
    unweighted_curve = _curve_data(_curve(all_n, all_c, max_k), curve_band(all_n, all_c, max_k, level=level))
    simulated_trials = (
        sum(t.simulated for t in report_input.trials)
        if report_input.trials
        else (int(all_n.sum()) if report_input.simulated else 0)
    )
    return Report(
        period=report_period(report_input.period).name,
        first_day=first_day,
        last_day=last_day,
        k=report_input.k,
        agent=report_input.agent,
        simulated=report_input.simulated or simulated_trials > 0,
        simulated_trials=simulated_trials,
        generated_at=report_input.generated_at or dt.datetime.now(dt.UTC).replace(microsecond=0),
        confidence_level=level,
        overall=Overall(
            weighted=weighted,
            unweighted=unweighted,
            expected_failed_tickets_per_day=failed,
            daily_volume=sum(volumes.values()),
            measured_daily_volume=measured_volume,
            tickets_sampled=int(all_n.size),
            unmeasured_task_types=unmeasured,
            expected_failed_tickets_per_day_ci=failed_ci,
        ),
        task_types=[m.report for m in measured],
        domains=domains,
        curve=unweighted_curve if weighted_curve_ is None else _curve_of(weighted_curve_),
        curve_weighting="traffic" if measured_volume > 0 else "tickets",
        unweighted_curve=unweighted_curve,
        task_type_curves=[
            _curve_data(m.curve, m.band, upto=None if m.report.extrapolated else int(m.n.min())) for m in measured
        ],
        least_reliable=_least_reliable(measured, tallies, report_input.k, attempts_of),
        trend=period_trend(report_input, weighted, failed, int(all_n.size)),
        not_replayable=sorted(report_input.not_replayable, key=lambda r: (r.task_type, r.ticket_id)),
        alerts=sorted(report_input.alerts, key=lambda a: a.fired_at),
        harness_failures=list(report_input.harness_failures),
        agent_version=report_input.agent_version,
        run_id=report_input.run_id,
        run_role=report_input.run_role,
        comparison=report_input.comparison,
        design=_design(measured, report_input.k),
        sample_size=_widest(measured),
        fidelity=_fidelity(report_input, measured, tallies),
        inferred_intents=dict(sorted(report_input.inferred_intents.items())),
    )


def _attempts_reader(
    report_input: ReportInput, by_hand: dict[tuple[str, str, str], list[TrialResult]]
) -> Callable[[str], list[TrialResult]]:
    """How the report reads one ticket's trials back: from the trials given, or through ``attempts_of``."""
    if by_hand:
        trials = {ticket_id: found for (_, _, ticket_id), found in by_hand.items()}
        return lambda ticket_id: trials[ticket_id]
    if report_input.attempts_of is None:
        raise ReportInputError("a report built from tallies needs attempts_of to show one ticket's attempts")
    return report_input.attempts_of


def _fidelity(
    report_input: ReportInput,
    measured: Sequence[_Measured],
    tickets: Sequence[TicketTally],
) -> list[TaskTypeFidelity]:
    """The production pass rate beside each task type's pass@1 (none when no production ticket was graded)."""
    if not report_input.production:
        return []
    replays = {
        (m.report.domain, m.report.task_type): (
            m.report.figures.pass_at_1,
            m.report.figures.pass_at_1_ci,
            m.report.tickets_sampled,
        )
        for m in measured
    }
    attempts = {t.ticket_id: (t.passes, t.trials) for t in tickets}
    return sandbox_fidelity(report_input.production, replays, attempts, level=report_input.confidence_level)


def _design(measured: Sequence[_Measured], k: int) -> dict[str, object]:
    """The trial design the trials show: fixed (k a ticket) or curtailed, with the trials it saved."""
    tickets = sum(int(m.n.size) for m in measured)
    trials = sum(int(m.n.sum()) for m in measured)
    smallest = min(int(m.n.min()) for m in measured)
    if smallest >= k:
        return {"name": "fixed", "k": k, "tickets": tickets, "trials": trials}
    full = k * tickets
    return {
        "name": "curtailed",
        "k": k,
        "min_trials": smallest,
        "tickets": tickets,
        "trials": trials,
        "trials_fixed_design": full,
        "trials_saved": full - trials,
    }


def _widest(measured: Sequence[_Measured]) -> str:
    widest = max(measured, key=lambda m: half_width(m.report.figures.pass_hat_k_ci or (0.0, 0.0)))
    return f"{widest.report.name}: {widest.report.sample_size}"
