"""Production tickets graded on their own changes, sent through the SDK to a real collector over HTTP.

A ticket whose agent said "resolved" while its write went to another order than its intent names is graded
`wrong_entity`, on demand (`grade_period`, `passhat grade`) and by the period's run; correct tickets pass; a
ticket without captured state is left ungraded with the reason.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import pathlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

import passhat
from passhat.collector.cli._app import app
from passhat.collector.demo import TrafficPlan, plan_arrivals, serve_traffic
from passhat.collector.ingest._keys import create_api_key
from passhat.collector.loop import run_period
from passhat.collector.replay import AgentSpec, ReplaySettings, SandboxPool, TicketGrader, Ungradable, grade_period
from passhat.collector.store import (
    NormalizedSpan,
    SpanEvent,
    StateWriteRow,
    Store,
    TicketDetail,
    TicketRow,
    open_store,
    parse_period,
)
from passhat.sandbox import FlawConfig, ReferenceAgent, Scenario, load_domain
from tests.collector.embedded import running_collector

PERIOD = parse_period("2026-W41")
TASK = "cancel_pending_order"


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'grading.db'}")
    yield opened
    opened.close()


def _sibling(pool: SandboxPool, scenario: Scenario) -> dict[str, Any]:
    """Another pending order of the same customer: where a wrong-entity agent writes."""
    initial = pool.base(load_domain("retail")).initial
    order = initial.get("orders", {"order_id": scenario.intent["order_id"]})
    assert order is not None
    others = [
        row
        for row in initial.rows("orders", {"customer_id": order["customer_id"], "status": "pending"})
        if row["order_id"] != order["order_id"]
    ]
    assert others, "cancel_pending_order scenarios are drawn from customers with a sibling pending order"
    return others[0]


def _send(url: str, key: str) -> tuple[str, str]:
    """Two correct tickets by the flawless reference agent, one wrong-entity ticket by hand, one without state.

    Returns the wrong ticket's id and its sibling order's id."""
    retail = load_domain("retail")
    pool = SandboxPool()
    start = int((PERIOD.start_datetime() + dt.timedelta(hours=5)).timestamp() * 1e9)
    runtime = passhat.configure(
        make_global=False, endpoint=url, api_key=key, source="production", clock=lambda: start,
        redact_mode="blank", capture_content=True, service_name="support-agent",
    )  # fmt: skip
    other = passhat.configure(
        make_global=False, endpoint=url, api_key=key, source="production", clock=lambda: start,
        redact_mode="blank", service_name="faq-bot",
    )  # fmt: skip
    try:
        base = pool.base(retail)
        scenarios = base.scenarios(TASK, 3)
        plan = TrafficPlan(PERIOD, 2, {TASK: 1.0})
        arrivals = plan_arrivals(plan, {TASK: scenarios[:2]})
        asyncio.run(serve_traffic(base, arrivals, ReferenceAgent.factory(FlawConfig.off()), runtime))
        wrong = scenarios[2]
        sibling = _sibling(pool, wrong)
        with runtime.ticket("T-wrong", task_type=TASK, intent=dict(wrong.intent), domain="retail") as ticket:
            ticket.customer_says(f"Please cancel my order {wrong.intent['order_id']}.")
            passhat.record_write(
                "orders",
                {"order_id": sibling["order_id"]},
                before={"status": "pending", "cancel_reason": sibling["cancel_reason"]},
                after={"status": "cancelled", "cancel_reason": wrong.intent["reason"]},
                runtime=runtime,
            )
            ticket.agent_says(f"Order {wrong.intent['order_id']} is cancelled.")
            ticket.resolve("resolved")
        # The same service captures state, so a ticket of it without a write wrote nothing.
        with runtime.ticket("T-idle", task_type=TASK, intent=dict(wrong.intent), domain="retail") as ticket:
            ticket.agent_says("I have cancelled it.")
        # Another service never sends state: what its ticket changed is unknown.
        with other.ticket("T-unobserved", task_type=TASK, intent=dict(wrong.intent), domain="retail"):
            pass
        runtime.flush()
        other.flush()
    finally:
        runtime.shutdown()
        other.shutdown()
        pool.close()
    return "T-wrong", str(sibling["order_id"])


def _api(url: str, key: str, path: str, **params: str) -> Any:
    response = httpx.get(f"{url}{path}", params=params, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_wrong_entity_write_is_graded_wrong_entity_on_demand(store: Store, tmp_path: pathlib.Path) -> None:
    key, _ = create_api_key(store, "shop")
    with running_collector(store) as collector:
        wrong_id, sibling = _send(collector.url, key)
        outcome = grade_period(store, "shop", PERIOD)
        by_id = {v.ticket_id: v for v in outcome.verdicts}
        wrong = by_id[wrong_id]
        assert not wrong.passed and wrong.signature == "wrong_entity", wrong.evidence
        assert sibling in (wrong.evidence or "")
        assert wrong.graded_by == "on demand"
        assert not by_id["T-idle"].passed and by_id["T-idle"].signature not in (None, "wrong_entity")
        others = [v for v in outcome.verdicts if v.ticket_id not in (wrong_id, "T-idle")]
        assert len(others) == 2 and all(v.passed for v in others), [v.evidence for v in others]
        (unobserved,) = outcome.ungradable
        assert unobserved.ticket_id == "T-unobserved" and "no state write or read was captured" in unobserved.reason

        # The agent's own word stays "resolved"; the verdict says what really happened.
        listed = _api(collector.url, key, "/api/tickets", source="production")["tickets"]
        row = next(t for t in listed if t["ticket_id"] == wrong_id)
        assert row["outcome"] == "resolved"
        assert row["production_verdict"]["verdict"] == "failed"
        assert row["production_verdict"]["signature"] == "wrong_entity"
        failed = _api(collector.url, key, "/api/tickets", verdict="failed")["tickets"]
        assert sorted(t["ticket_id"] for t in failed) == sorted([wrong_id, "T-idle"])
        by_signature = _api(collector.url, key, "/api/tickets", signature="wrong_entity")["tickets"]
        assert [t["ticket_id"] for t in by_signature] == [wrong_id]
        assert len(_api(collector.url, key, "/api/tickets", verdict="passed")["tickets"]) == 2
        assert row["replays"] is None  # not replayed yet
        never = _api(collector.url, key, "/api/tickets", replays="not_replayed")["tickets"]
        assert len(never) == 5
        ungraded = _api(collector.url, key, "/api/tickets", verdict="ungraded")["tickets"]
        assert [t["ticket_id"] for t in ungraded] == ["T-unobserved"]
        detail = _api(collector.url, key, f"/api/tickets/{wrong_id}")
        assert detail["production_verdict"]["signature"] == "wrong_entity"
        assert detail["production_verdict"]["diagnostics"], "the failing check says which row differs"
        bad = httpx.get(
            f"{collector.url}/api/tickets",
            params={"verdict": "maybe"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert bad.status_code == 422


def test_passhat_grade_grades_the_period_from_the_command_line(store: Store, tmp_path: pathlib.Path) -> None:
    key, _ = create_api_key(store, "shop")
    with running_collector(store) as collector:
        wrong_id, _ = _send(collector.url, key)
    url = f"sqlite:///{tmp_path / 'grading.db'}"
    result = CliRunner().invoke(app, ["grade", "--period", PERIOD.name, "--store", url, "--project", "shop", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["graded"] == 4 and data["passed"] == 2
    assert sum(data["failed"].values()) == 2 and data["failed"]["wrong_entity"] == 1
    (row,) = data["task_types"]
    assert row["task_type"] == TASK and row["ungradable"] == 1 and len(row["pass_rate_ci"]) == 2
    verdict = store.production_verdicts("shop", [wrong_id])[wrong_id]
    assert verdict.signature == "wrong_entity"

    shown = CliRunner().invoke(app, ["grade", "--ticket", wrong_id, "--store", url, "--project", "shop"])
    assert shown.exit_code == 0, shown.output
    assert "wrong_entity 1" in shown.output and "below each pass rate: its 95% interval" in shown.output
    assert "…" not in shown.output  # in 80 columns nothing is cut short, folded at most

    one = CliRunner().invoke(app, ["grade", "--ticket", wrong_id, "--store", url, "--project", "shop", "--json"])
    assert one.exit_code == 0 and json.loads(one.output)["failed"] == {"wrong_entity": 1}
    missing = CliRunner().invoke(app, ["grade", "--ticket", "T-nope", "--store", url, "--project", "shop"])
    assert missing.exit_code == 2 and "no production ticket 'T-nope'" in missing.output
    neither = CliRunner().invoke(app, ["grade", "--store", url])
    assert neither.exit_code == 2 and "give one of --period, --since or --ticket" in neither.output


@pytest.mark.slow
def test_the_periods_run_grades_its_production_tickets(store: Store, tmp_path: pathlib.Path) -> None:
    key, _ = create_api_key(store, "shop")
    with running_collector(store) as collector:
        wrong_id, _ = _send(collector.url, key)
    agent = AgentSpec(ReferenceAgent.factory(FlawConfig.off()), "reference (simulation)", "1", True)
    result = asyncio.run(
        run_period(
            store, "shop", PERIOD, agent, settings=ReplaySettings(k=2, tickets_per_task_type=4, parallel=4),
            report_dir=tmp_path / "reports", resamples=100,
        )
    )  # fmt: skip
    verdict = store.production_verdicts("shop", [wrong_id])[wrong_id]
    assert verdict.signature == "wrong_entity" and verdict.graded_by == result.outcome.run.run_id
    assert store.trial_tallies("shop", [wrong_id]) == {wrong_id: (2, 2)}  # its replays all passed
    data = json.loads(result.report_paths["json"].read_text())
    (row,) = data["sandbox_fidelity"]["task_types"]
    assert row["task_type"] == TASK and row["production_tickets"] == 4 and row["production_passed"] == 2
    assert sum(row["production_signatures"].values()) == 2 and row["production_signatures"]["wrong_entity"] == 1
    # The flawless agent passes every replay of the wrong ticket: its production verdict differs.
    assert wrong_id in [d["ticket_id"] for d in row["differing_tickets"]]
    assert "do not overlap" in data["sandbox_fidelity"]["test"]
    html = result.report_paths["html"].read_text()
    assert 'id="fidelity"' in html and "Sandbox fidelity" in result.report_paths["md"].read_text()


def _detail(ticket: TicketRow, writes: list[StateWriteRow]) -> TicketDetail:
    return TicketDetail(ticket.ticket_id, [ticket], [], [], writes, [])


@pytest.mark.parametrize(
    ("write", "reason"),
    [
        (
            StateWriteRow("t" * 32, "s" * 16, 0, 1, "orders", {}, "bulk_update", rowcount=3),
            "bulk_update of orders carries no row keys",
        ),
        (
            StateWriteRow("t" * 32, "s" * 16, 0, 1, "orders", {"order_id": "#W1"}, "update", None, {"status": "x"}),
            "has no before-image",
        ),
        (
            StateWriteRow(
                "t" * 32,
                "s" * 16,
                0,
                1,
                "orders",
                {"order_id": "#NOPE"},
                "update",
                {"status": "pending"},
                {"status": "cancelled"},
                ["status"],
            ),
            "cannot be laid over the retail seed",
        ),
    ],
)
def test_a_write_that_cannot_be_reapplied_leaves_the_ticket_ungraded_with_the_reason(
    write: StateWriteRow, reason: str
) -> None:
    retail = load_domain("retail")
    grader = TicketGrader({"retail": retail})
    try:
        intent = grader.pool.base(retail).scenarios(TASK, 1)[0].intent
        ticket = TicketRow(
            ticket_id="T-1", trace_id="t" * 32, span_id="s" * 16, task_type=TASK, source="production",
            start_time_ns=0, end_time_ns=1, ticket_hash=1, domain="retail", intent=dict(intent),
        )  # fmt: skip
        graded = grader.grade(ticket, _detail(ticket, [write]))
    finally:
        grader.close()
    assert isinstance(graded, Ungradable) and reason in graded.reason, graded


def _reply_span(ticket: TicketRow, text: str | None) -> NormalizedSpan:
    attributes = {} if text is None else {"passhat.message.content": text}
    return NormalizedSpan(
        trace_id=ticket.trace_id, span_id=ticket.span_id, parent_span_id=None, name="invoke_agent",
        start_time_ns=0, end_time_ns=1, events=[SpanEvent("passhat.agent_message", 1, attributes)],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "expected"),
    [(None, "ungradable"), ("Your order is on its way.", "failed"), ("tracking", "passed")],
)
def test_a_check_of_the_reply_needs_the_replys_content(reply: str | None, expected: str) -> None:
    retail = load_domain("retail")
    grader = TicketGrader({"retail": retail})
    try:
        intent = grader.pool.base(retail).scenarios("order_status_inquiry", 1)[0].intent
        ticket = TicketRow(
            ticket_id="T-1", trace_id="t" * 32, span_id="s" * 16, task_type="order_status_inquiry",
            source="production", start_time_ns=0, end_time_ns=1, ticket_hash=1, domain="retail", intent=dict(intent),
        )  # fmt: skip
        text = f"Your tracking number is {intent['tracking_number']}." if reply == "tracking" else reply
        detail = TicketDetail("T-1", [ticket], [_reply_span(ticket, text)], [], [], [])
        graded = grader.grade(ticket, detail, captures_state=True)
    finally:
        grader.close()
    if expected == "ungradable":
        assert isinstance(graded, Ungradable) and "captured without their content" in graded.reason
    else:
        assert not isinstance(graded, Ungradable), graded.reason
        # Which signature a wrong reply gets is the classifier's business; here only that it failed.
        assert ("passed" if graded.passed else "failed") == expected, graded.evidence
