"""The Store-backed alert log: every notice and every delivery attempt is stored; state survives a restart."""

from __future__ import annotations

from passhat.collector.alerts import (
    STATE_RULE,
    AlertLog,
    AlertRule,
    AlertState,
    EmailChannel,
    RetryPolicy,
    SlackChannel,
    WebhookChannel,
)
from passhat.collector.store import Store

from .receivers import Mailbox, Receiver
from .test_evaluate import K, period, tickets

RULE = AlertRule(name="floor", kind="threshold", task_type="refund", threshold=0.5, min_tickets=10)
FAST = RetryPolicy(attempts=3, backoff_seconds=0.01)


def test_a_fired_alert_and_each_attempt_are_stored(store: Store, receiver: Receiver) -> None:
    receiver.fail_first = 1
    log = AlertLog(store, "shop")
    outcome = log.run_period(
        [RULE], [WebhookChannel("ops", receiver.url)], FAST, period("W1", refund=tickets(40, 4)), [], k=K
    )
    assert [n.alert_id for n in outcome.evaluation.fire] == ["floor/refund:W1"]
    [notice] = log.notices()
    assert notice.alert_id == "floor/refund:W1" and notice.payload["kind"] == "fired"
    assert notice.deliveries == {"ops": "ok"}
    attempts = log.attempts("floor/refund:W1")
    assert [(a.payload["attempt"], a.payload["ok"]) for a in attempts] == [(1, False), (2, True)]
    assert (
        attempts[0].deliveries["ops"]
        == f"webhook {receiver.url.removesuffix('/hook')} answered HTTP 503: receiver failing on purpose"
    )
    assert len(receiver.requests) == 1


def test_state_is_reloaded_so_an_open_alert_is_not_sent_again(store: Store, receiver: Receiver) -> None:
    channels = [WebhookChannel("ops", receiver.url)]
    AlertLog(store, "shop").run_period([RULE], channels, FAST, period("W1", refund=tickets(40, 4)), [], k=K)
    # A new AlertLog (as after a restart) reads the state back from the store.
    restarted = AlertLog(store, "shop")
    assert "floor/refund" in restarted.load_state().open
    second = restarted.run_period([RULE], channels, FAST, period("W2", refund=tickets(40, 4)), [], k=K)
    assert second.evaluation.notices == [] and second.evaluation.decisions[0].outcome == "still_open"
    third = restarted.run_period([RULE], channels, FAST, period("W3", refund=tickets(40, 36)), [], k=K)
    assert [n.kind for n in third.evaluation.notices] == ["resolved"]
    assert [e.payload["kind"] for e in restarted.notices()] == ["resolved", "fired"]
    assert [r["json"]["event"] for r in receiver.requests] == ["alert.fired", "alert.resolved"]


def test_rerunning_a_period_sends_nothing_twice(store: Store, receiver: Receiver) -> None:
    log = AlertLog(store, "shop")
    channels = [WebhookChannel("ops", receiver.url)]
    log.run_period([RULE], channels, FAST, period("W1", refund=tickets(40, 4)), [], k=K)
    again = log.run_period([RULE], channels, FAST, period("W1", refund=tickets(40, 4)), [], k=K)
    assert again.attempts == {} and again.skipped == ["floor/refund:W1"]
    assert len(receiver.requests) == 1


def test_a_notice_recorded_before_a_crash_is_not_delivered_again(store: Store, receiver: Receiver) -> None:
    log = AlertLog(store, "shop")
    channels = [WebhookChannel("ops", receiver.url)]
    log.run_period([RULE], channels, FAST, period("W1", refund=tickets(40, 4)), [], k=K)
    # Simulate a crash after delivery but before the state was saved: save the empty state over it.
    log.save_state(AlertState())
    rerun = log.run_period([RULE], channels, FAST, period("W1", refund=tickets(40, 4)), [], k=K)
    assert rerun.skipped == ["floor/refund:W1"] and len(receiver.requests) == 1


def test_state_rows_stay_out_of_the_notice_list(store: Store) -> None:
    log = AlertLog(store, "shop")
    log.save_state(AlertState(last_period="W1"))
    log.save_state(AlertState(last_period="W2"))
    assert log.notices() == []
    assert log.load_state().last_period == "W2"
    assert len(store.list_alert_events("shop", rule=STATE_RULE)) == 2


def test_projects_do_not_share_alert_state(store: Store, receiver: Receiver) -> None:
    store.ensure_project("other")
    AlertLog(store, "shop").run_period(
        [RULE], [WebhookChannel("ops", receiver.url)], FAST, period("W1", refund=tickets(40, 4)), [], k=K
    )
    assert AlertLog(store, "other").load_state() == AlertState()


def test_a_drop_alert_reaches_slack_and_email_and_resolves(store: Store, receiver: Receiver, mailbox: Mailbox) -> None:
    rule = AlertRule(name="refund-drop", kind="drop", task_type="refund", min_tickets=20, permutations=999)
    channels = [
        SlackChannel("slack", receiver.url),
        EmailChannel("mail", mailbox.host, "passhat@example.test", ("oncall@example.test",), port=mailbox.port),
    ]
    log = AlertLog(store, "shop")
    history = [period(f"W{i}", refund=tickets(50, 40)) for i in (4, 3, 2, 1)]
    fired = log.run_period([rule], channels, FAST, period("W5", refund=tickets(50, 20)), history, k=K)
    assert [n.kind for n in fired.evaluation.notices] == ["fired"]
    history = [period("W5", refund=tickets(50, 20)), *history]
    resolved = log.run_period([rule], channels, FAST, period("W6", refund=tickets(50, 41)), history, k=K)
    assert [n.kind for n in resolved.evaluation.notices] == ["resolved"]

    texts = [r["json"]["text"] for r in receiver.requests]
    assert texts[0].startswith(":rotating_light: [shop] pass^5 of refund dropped from 80.0% to 40.0% in W5")
    assert texts[1].startswith(":white_check_mark: [shop] pass^5 of refund recovered in W6")
    subjects = [m.content.split(b"\r\n")[0] for m in mailbox.messages if isinstance(m.content, bytes)]
    assert len(mailbox.messages) == 2 and all(b"Subject: [passhat]" in s for s in subjects)

    assert [e.payload["kind"] for e in log.notices()] == ["resolved", "fired"]
    assert [e.alert_id for e in log.notices(kinds=("fired",))] == ["refund-drop/refund:W5"]
    assert all(e.deliveries == {"slack": "ok", "mail": "ok"} for e in log.notices())
