"""Alert state is ordered by period: an older period never resolves a newer alert, and re-evaluating a period
after a re-run updates or withdraws what was sent for it instead of sending it again or contradicting it."""

from __future__ import annotations

from passhat.collector.alerts import AlertLog, AlertRule, RetryPolicy, WebhookChannel
from passhat.collector.store import Store

from .receivers import Receiver
from .test_evaluate import K, period, tickets

RULE = AlertRule(name="task-floor", kind="threshold", task_type="*", threshold=0.5, min_tickets=10)
FAST = RetryPolicy(attempts=2, backoff_seconds=0.01)
HEALTHY = tickets(40, 30)  # pass^5 75%
BROKEN = tickets(40, 4)  # pass^5 10%


def _events(receiver: Receiver) -> list[tuple[str, str]]:
    return [(r["json"]["event"], r["json"]["alert_id"]) for r in receiver.requests]


def test_an_older_period_never_resolves_a_newer_alert(store: Store, receiver: Receiver) -> None:
    log = AlertLog(store, "shop")
    channels = [WebhookChannel("ops", receiver.url)]
    log.run_period([RULE], channels, FAST, period("2026-W48", cancel=HEALTHY), [], k=K)
    log.run_period([RULE], channels, FAST, period("2026-W49", cancel=BROKEN), [], k=K)
    assert _events(receiver) == [("alert.fired", "task-floor/cancel:2026-W49")]

    again = log.run_period([RULE], channels, FAST, period("2026-W48", cancel=HEALTHY), [], k=K)

    assert again.historical and again.attempts == {}
    assert _events(receiver) == [("alert.fired", "task-floor/cancel:2026-W49")]
    assert "task-floor/cancel" in log.load_state().open


def test_the_next_period_recovered_resolves_once(store: Store, receiver: Receiver) -> None:
    log = AlertLog(store, "shop")
    channels = [WebhookChannel("ops", receiver.url)]
    for name, counts in (("2026-W48", HEALTHY), ("2026-W49", BROKEN), ("2026-W48", HEALTHY), ("2026-W50", HEALTHY)):
        log.run_period([RULE], channels, FAST, period(name, cancel=counts), [], k=K)
    log.run_period([RULE], channels, FAST, period("2026-W50", cancel=HEALTHY), [], k=K)  # W50 re-run

    assert _events(receiver) == [
        ("alert.fired", "task-floor/cancel:2026-W49"),
        ("alert.resolved", "task-floor/cancel:2026-W49:resolved"),
    ]
    assert log.load_state().open == {}


def test_reevaluating_a_period_with_new_figures_sends_an_update(store: Store, receiver: Receiver) -> None:
    log = AlertLog(store, "shop")
    channels = [WebhookChannel("ops", receiver.url)]
    log.run_period([RULE], channels, FAST, period("2026-W49", cancel=BROKEN), [], k=K)

    rerun = log.run_period([RULE], channels, FAST, period("2026-W49", cancel=tickets(40, 8)), [], k=K)

    [update] = [r["json"] for r in receiver.requests[1:]]
    assert update["event"] == "alert.fired" and update["title"].startswith("Updated:")
    assert "replace the ones sent earlier" in update["text"] and "20.0%" in update["text"]
    assert update["details"]["updates"] == "task-floor/cancel:2026-W49"
    assert list(rerun.attempts) == [update["alert_id"]]
    # The same figures once more: nothing new to say.
    log.run_period([RULE], channels, FAST, period("2026-W49", cancel=tickets(40, 8)), [], k=K)
    assert len(receiver.requests) == 2


def test_an_alert_the_new_figures_no_longer_fire_is_withdrawn(store: Store, receiver: Receiver) -> None:
    log = AlertLog(store, "shop")
    channels = [WebhookChannel("ops", receiver.url)]
    log.run_period([RULE], channels, FAST, period("2026-W49", cancel=BROKEN), [], k=K)

    log.run_period([RULE], channels, FAST, period("2026-W49", cancel=HEALTHY), [], k=K)

    withdrawn = receiver.requests[-1]["json"]
    assert (
        withdrawn["event"] == "alert.resolved" and withdrawn["title"] == "Withdrawn: alert task-floor/cancel:2026-W49"
    )
    assert "no longer fire it" in withdrawn["text"] and "75.0%" in withdrawn["text"]
    assert log.load_state().open == {}
    log.run_period([RULE], channels, FAST, period("2026-W49", cancel=HEALTHY), [], k=K)
    assert len(receiver.requests) == 2


def test_an_alert_whose_rule_was_removed_is_withdrawn_saying_so(store: Store, receiver: Receiver) -> None:
    """The period evaluated again without the alert's rule (a configuration without it): the withdrawal names the
    removed rule; it said the figures no longer fired it, though they still would."""
    log = AlertLog(store, "shop")
    channels = [WebhookChannel("ops", receiver.url)]
    log.run_period([RULE], channels, FAST, period("2026-W49", cancel=BROKEN), [], k=K)

    log.run_period([], channels, FAST, period("2026-W49", cancel=BROKEN), [], k=K)

    withdrawn = receiver.requests[-1]["json"]
    assert withdrawn["event"] == "alert.resolved" and withdrawn["title"].startswith("Withdrawn:")
    assert "its rule task-floor is no longer configured" in withdrawn["text"]
    assert "no longer fire it" not in withdrawn["text"]
