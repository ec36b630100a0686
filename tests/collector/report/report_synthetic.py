"""A synthetic but realistic period of trials and traffic, built deterministically for the report's tests."""

from __future__ import annotations

import datetime as dt
import random
import zlib

from passhat.collector.report import (
    AlertFired,
    BackendChange,
    DailyTraffic,
    NotReplayable,
    PeriodFigures,
    ReportInput,
    TrialResult,
)

PERIOD = "2026-W48"
MONDAY = dt.date(2026, 11, 23)
# (domain, task type, tickets sampled, production tickets a day)
TASK_TYPES = [
    ("retail", "refund", 20, 610),
    ("retail", "exchange", 20, 240),
    ("retail", "address_change", 12, 95),
    ("airline", "change_flight", 20, 420),
    ("airline", "cancel_booking", 16, 180),
    ("insurance", "claim_intake", 10, 60),
]
FAILURES = [
    "tool_usage.precondition",
    "tool_usage.empty_lookup",
    "tool_usage.error_not_retried",
    "wrong_entity",
    "unresolved",
    "no_write",
]
# The seed's mixture: most tickets are done about three times in five, some always, some never.
MIXTURE = [(0.31, 0.99), (0.60, 0.6), (0.09, 0.0)]


def _ticket_p(rng: random.Random) -> float:
    draw = rng.random()
    for weight, p in MIXTURE:
        if draw < weight:
            return p
        draw -= weight
    return MIXTURE[-1][1]


def _trial(rng: random.Random, domain: str, task_type: str, ticket: str, attempt: int, p: float) -> TrialResult:
    order = f"#W{zlib.crc32(ticket.encode()) % 9000 + 1000}"
    if rng.random() < p:
        return TrialResult(
            domain,
            task_type,
            ticket,
            attempt,
            True,
            None,
            "customer_stop",
            [BackendChange("orders", {"order_id": order}, "update", {"status": "delivered"}, {"status": "refunded"})],
            f"Your refund for order {order} is on its way.",
        )
    label = rng.choice(FAILURES)
    changes = []
    if label == "wrong_entity":
        other = f"#W{rng.randint(1000, 9999)}"
        changes = [
            BackendChange("orders", {"order_id": other}, "update", {"status": "delivered"}, {"status": "refunded"})
        ]
    reason = "agent_stop" if label != "unresolved" else "step_limit"
    return TrialResult(domain, task_type, ticket, attempt, False, label, reason, changes, "I have taken care of that.")


def synthetic_input(
    *, k: int = 20, seed: int = 7, with_traffic: bool = True, simulated: bool = False, resamples: int = 300
) -> ReportInput:
    rng = random.Random(seed)
    trials: list[TrialResult] = []
    traffic: list[DailyTraffic] = []
    for domain, task_type, sampled, per_day in TASK_TYPES:
        for number in range(sampled):
            ticket = f"{task_type}-{number:03d}"
            p = _ticket_p(rng)
            trials += [_trial(rng, domain, task_type, ticket, attempt, p) for attempt in range(1, k + 1)]
        if with_traffic:
            for day in range(7):
                traffic.append(
                    DailyTraffic(domain, task_type, MONDAY + dt.timedelta(days=day), per_day + rng.randint(-20, 20))
                )
    return ReportInput(
        period=PERIOD,
        k=k,
        trials=trials,
        traffic=traffic,
        not_replayable=[
            NotReplayable("refund-917", "refund", "no before-image of the order was captured"),
            NotReplayable("claim_intake-204", "claim_intake", "intent lacks the policy number"),
        ],
        alerts=[
            AlertFired(
                "pass_hat_k_drop",
                "change_flight",
                "pass^20 of change_flight fell from 41% to 22% (p = 0.004)",
                dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC),
            )
        ],
        previous=[
            # As the loop reads them back from earlier report.json files: with their intervals and tickets.
            PeriodFigures(
                "2026-W46",
                k,
                0.71,
                0.33,
                0.93,
                420.0,
                pass_at_1_ci=(0.60, 0.80),
                pass_hat_k_ci=(0.23, 0.45),
                tickets=96,
            ),
            PeriodFigures(
                "2026-W47",
                k,
                0.69,
                0.30,
                0.92,
                460.0,
                pass_at_1_ci=(0.58, 0.78),
                pass_hat_k_ci=(0.21, 0.42),
                tickets=98,
            ),
        ],
        agent="support-agent v1.4 (claude-sonnet)",
        simulated=simulated,
        generated_at=dt.datetime(2026, 11, 30, 6, 5, tzinfo=dt.UTC),
        resamples=resamples,
    )
