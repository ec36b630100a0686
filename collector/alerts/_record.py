"""Alerts in the collector's Store: each notice, each delivery attempt and the evaluation state.

Everything is an `AlertEvent` row (the Store's alert_events table), told apart by ``payload["kind"]``:
``fired`` / ``resolved`` / ``test`` (a notice, with each channel's final outcome in ``deliveries``),
``delivery_attempt`` (one try on one channel), and ``state`` (the `AlertState` after evaluating a period,
under the reserved rule name `STATE_RULE`). Rows are only ever added, so the history is complete.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from passhat.collector.alerts._channels import Channel
from passhat.collector.alerts._delivery import DeliveryAttempt, RetryPolicy, deliver, outcomes
from passhat.collector.alerts._evaluate import evaluate
from passhat.collector.alerts._types import AlertNotice, AlertRule, AlertState, Evaluation, PeriodCounts
from passhat.collector.store import AlertEvent, Store

#: The rule name under which evaluation state snapshots are stored (rule names in config cannot contain dots).
STATE_RULE = "passhat.state"
NOTICE_KINDS = ("fired", "resolved", "test")
#: How far back `already_recorded` looks among a rule's rows.
_LOOKBACK = 10_000


@dataclass(frozen=True)
class PeriodOutcome:
    """What `AlertLog.run_period` did: the evaluation, and the delivery attempts of each notice sent."""

    evaluation: Evaluation
    attempts: dict[str, list[DeliveryAttempt]]
    skipped: list[str]  # notices already recorded earlier (not sent again)


class AlertLog:
    """Reads and writes one project's alert history in a Store."""

    def __init__(self, store: Store, project: str) -> None:
        self.store = store
        self.project = project

    def record_attempt(self, notice: AlertNotice, attempt: DeliveryAttempt) -> None:
        """Store one delivery attempt."""
        outcome = "ok" if attempt.ok else (attempt.error or "failed")
        event = AlertEvent(
            alert_id=f"{notice.alert_id}:{attempt.channel}:attempt-{attempt.attempt}:{uuid.uuid4().hex[:8]}",
            rule=notice.rule,
            fired_at=attempt.at,
            message=f"delivery of {notice.alert_id} to {attempt.channel} (attempt {attempt.attempt}): {outcome}",
            severity=notice.severity,
            task_type=notice.task_type,
            payload={"kind": "delivery_attempt", **attempt.to_dict()},
            deliveries={attempt.channel: outcome},
        )
        self.store.add_alert_event(self.project, event)

    def record_notice(self, notice: AlertNotice, attempts: Sequence[DeliveryAttempt]) -> None:
        """Store a notice with each channel's final delivery outcome."""
        event = AlertEvent(
            alert_id=notice.alert_id,
            rule=notice.rule,
            fired_at=dt.datetime.now(dt.UTC),
            message=notice.text,
            severity=notice.severity,
            task_type=notice.task_type,
            payload={"kind": notice.kind, **notice.payload(), "attempts": len(attempts)},
            deliveries=outcomes(attempts),
        )
        self.store.add_alert_event(self.project, event)

    def already_recorded(self, notice: AlertNotice) -> bool:
        """Whether this notice was stored before (so a re-run after a crash does not send it twice)."""
        events = self.store.list_alert_events(self.project, rule=notice.rule, limit=_LOOKBACK)
        return any(e.alert_id == notice.alert_id for e in events)

    def load_state(self) -> AlertState:
        """The state saved after the last evaluated period (empty before the first)."""
        events = self.store.list_alert_events(self.project, rule=STATE_RULE, limit=1)
        if not events:
            return AlertState()
        return AlertState.from_dict(events[0].payload["state"])

    def save_state(self, state: AlertState) -> None:
        """Store a state snapshot; the newest one is what `load_state` returns."""
        now = dt.datetime.now(dt.UTC)
        previous = self.store.list_alert_events(self.project, rule=STATE_RULE, limit=1)
        if previous and previous[0].fired_at >= now:  # keep snapshots strictly ordered in time
            now = previous[0].fired_at + dt.timedelta(microseconds=1)
        event = AlertEvent(
            alert_id=f"state:{state.last_period}:{uuid.uuid4().hex[:8]}",
            rule=STATE_RULE,
            fired_at=now,
            message=f"alert evaluation state after {state.last_period}",
            severity="info",
            payload={"kind": "state", "state": state.to_dict()},
        )
        self.store.add_alert_event(self.project, event)

    def send(
        self,
        notice: AlertNotice,
        channels: Sequence[Channel],
        policy: RetryPolicy,
        *,
        on_attempt: Callable[[DeliveryAttempt], None] | None = None,
    ) -> list[DeliveryAttempt]:
        """Deliver a notice, storing every attempt as it happens and then the notice itself."""

        def record(attempt: DeliveryAttempt) -> None:
            self.record_attempt(notice, attempt)
            if on_attempt is not None:
                on_attempt(attempt)

        attempts = deliver(notice, channels, policy, on_attempt=record)
        self.record_notice(notice, attempts)
        return attempts

    def run_period(
        self,
        rules: Sequence[AlertRule],
        channels: Sequence[Channel],
        policy: RetryPolicy,
        current: PeriodCounts,
        baseline: Sequence[PeriodCounts],
        *,
        k: int,
        seed: int = 0,
    ) -> PeriodOutcome:
        """Evaluate the rules on a period with the stored state, deliver and record the notices, save the state."""
        evaluation = evaluate(rules, current, baseline, self.load_state(), k=k, seed=seed)
        attempts: dict[str, list[DeliveryAttempt]] = {}
        skipped: list[str] = []
        for notice in evaluation.notices:
            if self.already_recorded(notice):
                skipped.append(notice.alert_id)
                continue
            attempts[notice.alert_id] = self.send(notice, channels, policy)
        if not evaluation.repeated:
            self.save_state(evaluation.state)
        return PeriodOutcome(evaluation=evaluation, attempts=attempts, skipped=skipped)

    def notices(
        self,
        *,
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        kinds: Sequence[str] = NOTICE_KINDS,
        limit: int = 100,
    ) -> list[AlertEvent]:
        """Stored notices (by default fired, resolved and test) recorded in [since, until), newest first."""
        events = self.store.list_alert_events(self.project, since=since, limit=_LOOKBACK)
        return [e for e in events if e.payload.get("kind") in kinds and (until is None or e.fired_at < until)][:limit]

    def attempts(self, alert_id: str) -> list[AlertEvent]:
        """Stored delivery attempts of one notice, oldest first."""
        events = self.store.list_alert_events(self.project, limit=_LOOKBACK)
        found = [
            e for e in events if e.payload.get("kind") == "delivery_attempt" and e.payload.get("alert_id") == alert_id
        ]
        return sorted(found, key=lambda e: (e.fired_at, int(e.payload.get("attempt", 0))))
