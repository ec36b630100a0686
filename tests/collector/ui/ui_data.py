"""A project's worth of data for the UI's tests: production tickets with full traces, two official runs with
k = 4 trials per sampled ticket, an exploratory run, and an alert that fired. Ids carry the project's name, so a
page of one project can be searched for any trace of the other's."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from passhat.collector.store import AlertEvent, NormalizedSpan, ReplayRun, SpanEvent, Store, TrialRow
from passhat.sandbox import TrialDetails
from tests.collector.store.store_contract import NS, new_span_id, now_ns, ticket_span, tool_span

TASK_TYPES = ("refund", "exchange", "cancel")
K = 4
PERIODS = ("2026-W46", "2026-W47")
#: Per task type, how many of the K attempts pass for each of its tickets, in each period (cancel regresses).
PASSES = {
    "refund": ((4, 4, 3), (4, 3, 4)),
    "exchange": ((4, 4, 4), (4, 4, 4)),
    "cancel": ((4, 4, 3), (1, 0, 2)),
}


@dataclass(frozen=True)
class Seeded:
    project: str
    tickets: list[str]
    official_runs: list[str]
    exploratory_run: str


def ticket_id(project: str, task_type: str, n: int) -> str:
    return f"{project.upper()}-{task_type}-{n}"


def _trace(project: str, task_type: str, n: int, start_ns: int) -> list[NormalizedSpan]:
    root = ticket_span(ticket_id(project, task_type, n), task_type=task_type, start_ns=start_ns)
    root.events = [
        SpanEvent("passhat.customer_message", start_ns + NS // 10, {"passhat.message.content": f"{project}: my order"}),
        SpanEvent("passhat.agent_message", start_ns + NS, {"passhat.message.content": "Your refund is on its way."}),
    ]
    chat = NormalizedSpan(
        trace_id=root.trace_id,
        span_id=new_span_id(),
        parent_span_id=root.span_id,
        name="chat claude-sonnet",
        start_time_ns=start_ns + NS // 5,
        end_time_ns=start_ns + NS // 2,
        operation="chat",
        status="ok",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "claude-sonnet",
            "gen_ai.usage.input_tokens": 812,
        },
    )
    lookup = tool_span(root, "get_order", reads=1, offset_ns=NS // 2 + 1000)
    refund = tool_span(root, "refund_order", writes=1, offset_ns=NS // 2 + 5000)
    spans = [root, chat, lookup, refund]
    if n == 0:
        spans.append(tool_span(root, "find_customer", outcome="error", offset_ns=NS // 2 + 9000))
    return spans


def trial(run_id: str, task_type: str, ticket: str, attempt: int, passed: bool, started: dt.datetime) -> TrialRow:
    return TrialRow(
        run_id=run_id,
        ticket_id=ticket,
        task_type=task_type,
        attempt=attempt,
        passed=passed,
        termination_reason="agent_stop",
        started_at=started + dt.timedelta(seconds=attempt),
        duration_s=1.5 + attempt,
        domain="retail",
        failure_label=None if passed else "wrong_entity",
        failure_evidence=None if passed else "refunded order O-2, not O-1",
        verdict={
            "passed": passed,
            "check": task_type,
            "diagnostics": [] if passed else [{"message": "orders O-1: status is 'delivered', expected 'refunded'"}],
            "children": [],
        },
        details=TrialDetails.from_json(
            {
                "changes": [
                    {
                        "table": "orders",
                        "key": {"id": "O-1" if passed else "O-2"},
                        "op": "update",
                        "before": {"status": "delivered"},
                        "after": {"status": "refunded"},
                    }
                ],
                "final_response": "Your refund of $45.50 is on its way.",
                "tool_calls": [{"name": "get_order", "outcome": "ok", "error_type": None, "is_write": False}],
                "transcript": [["customer", "I want a refund"], ["agent", "Done: your refund is on its way."]],
                "simulated": True,
            }
        ),
    )


def seed(store: Store, project: str) -> Seeded:
    """Fill `project` (created if needed) with the data above."""
    store.ensure_project(project)
    start = now_ns() - 6 * 3600 * NS
    spans: list[NormalizedSpan] = []
    tickets: list[str] = []
    for t_index, task_type in enumerate(TASK_TYPES):
        for n in range(3):
            spans.extend(_trace(project, task_type, n, start + (t_index * 3 + n) * 60 * NS))
            tickets.append(ticket_id(project, task_type, n))
    store.write_batch(project, spans)
    created = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=14)
    runs: list[str] = []
    for p_index, period in enumerate(PERIODS):
        run_id = f"run-{project}-{period}"
        when = created + dt.timedelta(days=7 * p_index)
        params = {
            "period": period,
            "k": K,
            "agent": "ReferenceAgent (offline simulation)",
            "agent_version": f"1.{p_index}",
            "simulated": True,
            "tickets_per_task_type": 3,
            "sizes": {},
            "seed": 0,
            "tickets": tickets,
        }
        store.create_replay_run(project, ReplayRun(run_id, when, k=K, params=params))
        trials = [
            trial(run_id, task_type, ticket_id(project, task_type, n), a, a < PASSES[task_type][p_index][n], when)
            for task_type in TASK_TYPES
            for n in range(3)
            for a in range(K)
        ]
        store.add_trials(project, trials)
        store.finish_replay_run(project, run_id, at=when + dt.timedelta(hours=1))
        runs.append(run_id)
    # A one-off run of one ticket, finished *after* the period's official run: the newest finished run of its
    # period, yet exploratory (it never gives the period's figures unless promoted).
    exploratory = f"run-{project}-{PERIODS[0]}-again"
    later = created + dt.timedelta(hours=3)
    store.create_replay_run(
        project,
        ReplayRun(
            exploratory,
            later,
            k=K,
            params={
                "period": PERIODS[0],
                "tickets": tickets[:1],
                "exploratory": ["1 ticket instead of 3 per task type"],
            },
        ),
    )
    store.add_trials(project, [trial(exploratory, "refund", tickets[0], a, True, later) for a in range(K)])
    store.finish_replay_run(project, exploratory, at=later + dt.timedelta(hours=1))
    store.add_alert_event(
        project,
        AlertEvent(
            f"alert-{project}-1",
            "pass_hat_k_drop",
            dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(hours=1),
            f"{project}: cancel pass^4 dropped",
            severity="critical",
            task_type="cancel",
            payload={
                "kind": "fired",
                "title": f"cancel pass^4 dropped ({project})",
                "scope": "cancel",
                "period": PERIODS[1],
                "text": "pass^4 fell from 66.7% to 0.0%",
                "details": {"baseline": 0.667, "current": 0.0, "p_value": 0.004},
            },
            deliveries={"demo-webhook": "ok"},
        ),
    )
    return Seeded(project, tickets, runs, exploratory)
