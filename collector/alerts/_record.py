"""Alerts in the collector's Store: each notice, each delivery attempt and the evaluation state.

Everything is an `AlertEvent` row (the Store's alert_events table), told apart by ``payload["kind"]``:
``fired`` / ``resolved`` / ``test`` (a notice, with each channel's final outcome in ``deliveries``),
``delivery_attempt`` (one try on one channel), ``report`` (a period's report sent to channels, under the
reserved rule name `REPORT_RULE`, each channel's outcome in ``deliveries``), and ``state`` (the `AlertState`
after evaluating a period, under the reserved rule name `STATE_RULE`). Rows are only ever added, so the
history is complete.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from passhat.collector.alerts._channels import Channel
from passhat.collector.alerts._delivery import DeliveryAttempt, RetryPolicy, deliver, outcomes
from passhat.collector.alerts._evaluate import evaluate
from passhat.collector.alerts._types import AlertNotice, AlertRule, AlertState, Evaluation, PeriodCounts
from passhat.collector.store import AlertEvent, Store, parse_period

#: The rule name under which evaluation state snapshots are stored (rule names in config cannot contain dots).
STATE_RULE = "passhat.state"
#: The rule name under which report deliveries (and their attempts) are stored.
REPORT_RULE = "passhat.report"
NOTICE_KINDS = ("fired", "resolved", "test")
#: The kind of a report delivery's row (shown with the notices by `passhat alerts history`).
REPORT_KIND = "report"
#: How far back `already_recorded` looks among a rule's rows.
_LOOKBACK = 10_000


@dataclass(frozen=True)
class PeriodOutcome:
    """What `AlertLog.run_period` did: the evaluation, and the delivery attempts of each notice sent."""

    evaluation: Evaluation
    attempts: dict[str, list[DeliveryAttempt]]
    skipped: list[str]  # notices already recorded earlier (not sent again), or not sent for an older period
    historical: bool = False  # the period is older than the newest evaluated one: nothing resolved, state kept


def period_order(name: str) -> tuple[dt.date, str]:
    """A sort key of period names: by first day (ISO weeks, days, ``since-DAY``), then by name."""
    text = name.removeprefix("since-")
    try:
        start = parse_period(text).start
    except ValueError:
        start = dt.date.min
    return start, name


@dataclass(frozen=True)
class _Sent:
    """The latest word sent about one alert of a period: its text, and whether it has been withdrawn."""

    text: str
    rule: str
    task_type: str | None
    withdrawn: bool = False


class AlertLog:
    """Reads and writes one project's alert history in a Store.

    Every notice it sends names ``project`` and, with ``ui_url`` (the web UI's address, `[report] ui_url`), links
    to the alert's page there (`alert_link`)."""

    def __init__(self, store: Store, project: str, *, ui_url: str | None = None) -> None:
        self.store = store
        self.project = project
        self.ui_url = ui_url

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

    def record_report_attempt(self, delivery_id: str, period: str, attempt: DeliveryAttempt) -> None:
        """Store one try of sending a period's report to one channel."""
        outcome = "ok" if attempt.ok else (attempt.error or "failed")
        event = AlertEvent(
            alert_id=f"{delivery_id}:{attempt.channel}:attempt-{attempt.attempt}:{uuid.uuid4().hex[:8]}",
            rule=REPORT_RULE,
            fired_at=attempt.at,
            message=f"report of {period} to {attempt.channel} (attempt {attempt.attempt}): {outcome}",
            severity="info",
            payload={"kind": "delivery_attempt", "period": period, **attempt.to_dict()},
            deliveries={attempt.channel: outcome},
        )
        self.store.add_alert_event(self.project, event)

    def record_report_delivery(
        self,
        delivery_id: str,
        period: str,
        attempts: Sequence[DeliveryAttempt],
        *,
        run_id: str,
        trigger: str,
        resend: bool,
        skipped: Sequence[str] = (),
    ) -> AlertEvent:
        """Store that a period's report was sent (or tried) to channels, with each channel's final outcome."""
        final = outcomes(attempts)
        sent = ", ".join(f"{name}: {outcome}" for name, outcome in sorted(final.items())) or "no channel"
        event = AlertEvent(
            alert_id=delivery_id,
            rule=REPORT_RULE,
            fired_at=dt.datetime.now(dt.UTC),
            message=f"report of {period} ({trigger}{', resent' if resend else ''}): {sent}",
            severity="info",
            payload={
                "kind": REPORT_KIND, "period": period, "run_id": run_id, "trigger": trigger, "resend": resend,
                "attempts": len(attempts), "skipped": list(skipped),
            },
            deliveries=final,
        )  # fmt: skip
        self.store.add_alert_event(self.project, event)
        return event

    def report_deliveries(self, period: str | None = None, *, limit: int = 100) -> list[AlertEvent]:
        """Stored report deliveries (of one period, or all), newest first."""
        events = self.store.list_alert_events(self.project, rule=REPORT_RULE, limit=_LOOKBACK)
        found = [
            e
            for e in events
            if e.payload.get("kind") == REPORT_KIND and (period is None or e.payload.get("period") == period)
        ]
        return found[:limit]

    def report_delivered_to(self, period: str) -> set[str]:
        """The channels a period's report has reached (a delivery whose final outcome was ``ok``)."""
        return {
            name for event in self.report_deliveries(period, limit=_LOOKBACK)
            for name, outcome in event.deliveries.items() if outcome == "ok"
        }  # fmt: skip

    def already_recorded(self, notice: AlertNotice) -> bool:
        """Whether this notice was stored before (so a re-run after a crash does not send it twice)."""
        events = self.store.list_alert_events(self.project, rule=notice.rule, limit=_LOOKBACK)
        return any(e.alert_id == notice.alert_id for e in events)

    def _snapshots(self) -> list[AlertState]:
        events = self.store.list_alert_events(self.project, rule=STATE_RULE, limit=_LOOKBACK)
        return [AlertState.from_dict(e.payload["state"]) for e in events]  # newest first

    def load_state(self, *, before: str | None = None) -> AlertState:
        """The state saved after the last evaluated period (empty before the first).

        With ``before``, the state as it stood before that period: the newest snapshot of an earlier period.
        """
        for state in self._snapshots():
            if before is None or (
                state.last_period is not None and period_order(state.last_period) < period_order(before)
            ):
                return state
        return AlertState()

    def newest_period(self) -> str | None:
        """The latest period (in period order, not evaluation order) that has been evaluated."""
        periods = [state.last_period for state in self._snapshots() if state.last_period is not None]
        return max(periods, key=period_order) if periods else None

    def _sent_for(self, period: str) -> dict[str, _Sent]:
        """What was sent about each alert fired in ``period`` (by its first alert id), updates included."""
        sent: dict[str, _Sent] = {}
        for event in reversed(self.notices(kinds=("fired", "resolved"), limit=_LOOKBACK)):
            if event.payload.get("period") != period:
                continue
            details = event.payload.get("details") or {}
            if "withdraws" in details:
                base = str(details["withdraws"])
                if base in sent:
                    sent[base] = dataclasses.replace(sent[base], withdrawn=True)
            elif event.payload.get("kind") == "fired":
                base = str(details.get("updates", event.alert_id))
                sent[base] = _Sent(str(details.get("sent_text", event.message)), event.rule, event.task_type)
        return sent

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
        """Deliver a notice (named for this project, linked to its UI page), storing every attempt as it happens and
        then the notice itself."""
        notice = notice.addressed(self.project, self.ui_url)

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
        """Evaluate the rules on a period, deliver and record the notices, save the state.

        Alert state is ordered by period: the period is evaluated from the state as it stood before it, so
        evaluating it again (after a re-run) gives the same decisions for the same figures. What was sent
        about the period's alerts is then brought up to date: a fired alert whose text changed gets an
        update, one that no longer fires is withdrawn (both visibly noted), an unchanged one is not resent.
        A period older than the newest evaluated one never resolves an alert and never fires a new one
        (that alert's story has moved on); it only updates or withdraws what it sent itself.
        """
        newest = self.newest_period()
        historical = newest is not None and period_order(current.period) < period_order(newest)
        evaluation = evaluate(rules, current, baseline, self.load_state(before=current.period), k=k, seed=seed)
        latest_open = {a.alert_id for a in self.load_state().open.values()} if historical else set()
        sent = self._sent_for(current.period)
        to_send: list[AlertNotice] = []
        skipped: list[str] = []
        fired = {notice.alert_id: notice for notice in evaluation.fire}
        for alert_id, notice in fired.items():
            before = sent.get(alert_id)
            if before is not None and not before.withdrawn and before.text == notice.text:
                skipped.append(alert_id)  # sent already, with these figures
            elif before is None and historical:
                skipped.append(alert_id)
            else:
                to_send.append(_update(notice, before) if before is not None else notice)
        for alert_id, before in sent.items():
            if alert_id in fired or before.withdrawn:
                continue
            if historical and alert_id in latest_open:
                skipped.append(alert_id)  # still open in a later period: only that period may close it
                continue
            configured = any(rule.name == before.rule for rule in rules)
            to_send.append(_withdrawal(alert_id, before, current.period, evaluation, configured=configured))
        if not historical:
            to_send.extend(evaluation.resolve)
        attempts: dict[str, list[DeliveryAttempt]] = {}
        for notice in to_send:
            if self.already_recorded(notice):
                skipped.append(notice.alert_id)
                continue
            attempts[notice.alert_id] = self.send(notice, channels, policy)
        if not historical:
            self.save_state(evaluation.state)
        return PeriodOutcome(evaluation=evaluation, attempts=attempts, skipped=skipped, historical=historical)

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


def _update(notice: AlertNotice, before: _Sent) -> AlertNotice:
    """The notice, re-sent as an update of the one sent earlier for the same alert (its figures changed)."""
    note = "Update: the period was evaluated again and these figures replace the ones sent earlier."
    return AlertNotice(
        alert_id=f"{notice.alert_id}:update-{uuid.uuid4().hex[:8]}",
        kind="fired",
        rule=notice.rule,
        task_type=notice.task_type,
        period=notice.period,
        severity=notice.severity,
        title=f"Updated: {notice.title}",
        text=f"{note} {notice.text}" + ("" if not before.withdrawn else " (it had been withdrawn before)"),
        details={**notice.details, "updates": notice.alert_id, "sent_text": notice.text},
        channels=notice.channels,
    )


def _withdrawal(
    alert_id: str, before: _Sent, period: str, evaluation: Evaluation, *, configured: bool = True
) -> AlertNotice:
    """A note that an alert sent for ``period`` no longer holds: on the period's current figures, or because its
    rule is no longer ``configured``."""
    decision = next(
        (d for d in evaluation.decisions if d.rule == before.rule and d.task_type == before.task_type), None
    )
    why = f" Now: {decision.reason}." if decision is not None else ""
    if not configured:
        reason = f"its rule {before.rule} is no longer configured"
    else:
        reason = f"the period was evaluated again and its figures no longer fire it.{why}"
    return AlertNotice(
        alert_id=f"{alert_id}:withdrawn-{uuid.uuid4().hex[:8]}",
        kind="resolved",
        rule=before.rule,
        task_type=before.task_type,
        period=period,
        severity="info",
        title=f"Withdrawn: alert {alert_id}",
        text=f"Alert {alert_id} sent for {period} is withdrawn: {reason.rstrip('.')}. It had said: {before.text}",
        details={"withdraws": alert_id},
    )
