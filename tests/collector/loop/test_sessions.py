"""Graded sessions: a plain HTTP client drives a trial (the customer answers, the tools are the session's own MCP
endpoint), gets the verdict, and the trial is stored with its trace like any replayed trial."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from passhat.collector.loop import SessionService, sessions_app
from passhat.collector.store import Store, open_store
from passhat.sandbox import Sandbox
from tests.sandbox.retail_paths import CancelTicket, cancel_ticket

TOKEN = "sessions-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Served:
    url: str
    store: Store
    service: SessionService


@pytest.fixture(scope="module")
def ticket() -> Iterator[CancelTicket]:
    with Sandbox("retail", seed=0, size="small") as sandbox:
        yield cancel_ticket(sandbox)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One sessions server for the module (its sandbox is built once); each test reads only its own trials."""
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('sessions') / 'store.db'}")
    store.ensure_project("shop")
    service = SessionService("retail", store=store, project="shop", seed=0, size="small")
    config = uvicorn.Config(sessions_app(service, TOKEN), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the sessions server did not start"
        threading.Event().wait(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Served(f"http://127.0.0.1:{port}", store, service)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        store.close()


async def _call(session: dict[str, Any], name: str, arguments: dict[str, Any]) -> Any:
    """One MCP tool call on the session's own endpoint (a fresh connection each time, as a stateless agent does)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {session['mcp_token']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(session["mcp_url"], http_client=http)) as client,
    ):
        result = await client.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, text
    return json.loads(text)


async def _drive(
    served: Served, ticket: CancelTicket, *, wrong_entity: bool, early: bool = False
) -> tuple[list[dict[str, Any]], Any]:
    """Play the scripted path through the session API: each turn's tool calls over MCP, then its text (with
    `early`, the cancellation is made in the turn that proposes it, before the customer's yes)."""
    async with httpx.AsyncClient(base_url=served.url, headers=AUTH, timeout=60) as http:
        opened = await http.post("/v1/sessions", json={"task_type": "cancel_pending_order", "scenario": 0})
        assert opened.status_code == 200, opened.text
        session = opened.json()
        assert session["policy"].startswith("#") or len(session["policy"]) > 100
        assert ticket.order_id in session["customer"]
        replies = []
        turns = ticket.turns(wrong_entity=wrong_entity)
        if early:
            turns[1] = dataclasses.replace(turns[1], calls=(*turns[1].calls, *turns[2].calls))
            turns[2] = dataclasses.replace(turns[2], calls=())
        for number, turn in enumerate(turns):
            for step in turn.calls:
                await _call(session, step.name, step.arguments)
            sent = await http.post(
                f"/v1/sessions/{session['session_id']}/messages",
                json={"text": turn.text, "final": number == len(turns) - 1},
            )
            assert sent.status_code == 200, sent.text
            replies.append(sent.json())
        verdict = await http.post(f"/v1/sessions/{session['session_id']}/end")
        assert verdict.status_code == 200, verdict.text
        return replies, verdict.json()


async def test_a_session_driven_over_http_is_graded_and_stored_with_its_trace(
    served: Served, ticket: CancelTicket
) -> None:
    assert ticket.scenario.scenario_id.endswith("/0000")  # scenario 0 is the one the session opens
    replies, verdict = await _drive(served, ticket, wrong_entity=False)
    assert [r["ended"] for r in replies] == [False, False, True]
    assert ticket.scenario.intent["email"] in replies[0]["customer"]  # the customer answered the question
    assert "go ahead" in replies[1]["customer"].lower()
    assert verdict["passed"] is True and verdict["signature"] is None
    assert verdict["diagnostics"]["passed"] is True
    assert [c["name"] for c in verdict["tool_calls"]] == ["find_customer_by_email", "get_order", "cancel_pending_order"]
    # Each call has its place in the conversation, and the customer's yes (turn 4) is a recorded fact.
    assert [c["turn"] for c in verdict["tool_calls"]] == [3, 3, 5]
    trials = served.store.list_trials("shop", served.service.run_id)
    mine = [t for t in trials if t.trace_id == verdict["trace_id"]]
    assert mine[0].details.consents == ((4, "*"),)
    assert verdict["consents"] == [{"turn": 4, "action": "*"}]
    assert [(t.ticket_id, t.attempt, t.passed) for t in mine] == [
        (ticket.scenario.scenario_id, verdict["attempt"], True)
    ]
    assert mine[0].details.agent == "graded session"
    # The trace was flushed into the store before the verdict returned.
    spans = served.store.get_trace("shop", verdict["trace_id"])
    names = {span.name for span in spans}
    assert "execute_tool cancel_pending_order" in names and "invoke_agent" in {s.name.split(" ")[0] for s in spans}


async def test_a_session_that_cancels_the_other_order_is_graded_wrong_entity(
    served: Served, ticket: CancelTicket
) -> None:
    _, first = await _drive(served, ticket, wrong_entity=False)
    _, second = await _drive(served, ticket, wrong_entity=True)
    assert first["passed"] is True
    assert second["passed"] is False and second["signature"] == "wrong_entity"
    assert second["diagnostics"]["passed"] is False
    # Sessions of the same scenario are its successive attempts, as a replay's k trials of one ticket are.
    assert second["attempt"] == first["attempt"] + 1
    trials = {t.attempt: t for t in served.store.list_trials("shop", served.service.run_id)}
    assert (trials[first["attempt"]].passed, trials[second["attempt"]].failure_label) == (True, "wrong_entity")


async def test_a_session_that_cancels_before_the_customers_yes_is_a_policy_violation(
    served: Served, ticket: CancelTicket
) -> None:
    _, verdict = await _drive(served, ticket, wrong_entity=False, early=True)
    assert verdict["passed"] is False and verdict["signature"] == "policy_violation"
    assert [c["turn"] for c in verdict["tool_calls"]] == [3, 3, 3]


def test_sessions_need_the_bearer_token_and_say_what_is_wrong(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        refused = http.post("/v1/sessions", json={"task_type": "cancel_pending_order"})
        assert refused.status_code == 401 and "Bearer" in refused.json()["detail"]
        unknown = http.post("/v1/sessions", json={"task_type": "refund_everything"}, headers=AUTH)
        assert unknown.status_code == 404 and "cancel_pending_order" in unknown.json()["message"]
        missing = http.post("/v1/sessions/nope/messages", json={"text": "hi"}, headers=AUTH)
        assert missing.status_code == 404 and "POST /v1/sessions" in missing.json()["message"]
        malformed = http.post("/v1/sessions", json={"task": "x"}, headers=AUTH)
        assert malformed.status_code == 422
        below = http.post("/v1/sessions", json={"task_type": "cancel_pending_order", "scenario": -1}, headers=AUTH)
        assert below.status_code == 422 and "greater than or equal to 0" in below.text  # the client's mistake
        # JSON sent as a form (`curl -d` without a content type): told to send JSON, not "a valid dictionary"
        as_form = {**AUTH, "content-type": "application/x-www-form-urlencoded"}
        form = http.post("/v1/sessions", content=b'{"task_type": "cancel_pending_order"}', headers=as_form)
        assert form.status_code == 422 and form.json() == {
            "error": "invalid_request",
            "message": "send the body as JSON with content-type: application/json "
            "(got application/x-www-form-urlencoded)",
        }


async def test_ending_a_session_early_grades_what_the_agent_did(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.url, headers=AUTH, timeout=60) as http:
        session = (await http.post("/v1/sessions", json={"task_type": "cancel_pending_order", "scenario": 1})).json()
        verdict = (await http.post(f"/v1/sessions/{session['session_id']}/end")).json()
        after = await http.post(f"/v1/sessions/{session['session_id']}/messages", json={"text": "hello?"})
    assert verdict["passed"] is False and verdict["termination_reason"] == "agent_stop"
    assert verdict["signature"] == "unresolved"
    assert after.status_code == 200 and after.json() == {"customer": "", "ended": True}
