"""Graded sessions over HTTP: the agent drives, each session an isolated trial, traced, graded and stored.

`passhat sandbox serve <domain> --sessions` serves this app. An agent in any language opens a session for a task
type, gets the customer's opening message and the session's own MCP endpoint, talks until the customer ends
the conversation, and asks for the verdict. Every session is one trial of the domain (its own database copy),
kept in the store like a replayed trial under one run per server start; repeated sessions of the same
scenario are its successive attempts, so pass^k can be computed over them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hmac
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from passhat.collector.loop._cycle import store_runtime
from passhat.collector.replay import AgentSpec, trial_row
from passhat.collector.store import ReplayRun, Store
from passhat.sandbox import (
    Agent,
    CustomerFactory,
    DomainError,
    GradedSession,
    RunConfig,
    Sandbox,
    Scenario,
    ScriptedCustomer,
    TrialContext,
    TrialResult,
    load_domain,
)

if TYPE_CHECKING:
    import passhat

SESSION_AGENT = "graded session"
"""How stored trials of sessions name their agent (the agent itself is outside passhat)."""


SHUTDOWN_REASON = "the sessions server shut down while the session was open"
"""The `infra_error` of a session ended by its server's shutdown."""


def _outside(context: TrialContext) -> Agent:
    raise DomainError("a graded session's agent runs outside passhat: open a session over HTTP instead")


@dataclass
class _Open:
    session: GradedSession
    stored: asyncio.Task[TrialResult]


class SessionService:
    """The sessions of one served domain: open, converse, end; each finished trial goes to the store."""

    def __init__(
        self,
        domain: str,
        *,
        store: Store | None = None,
        project: str = "default",
        seed: int = 0,
        size: str = "small",
        customer_factory: CustomerFactory = ScriptedCustomer.for_trial,
        timeout: float = 1800.0,
        agent_label: str = SESSION_AGENT,
    ) -> None:
        self.domain = load_domain(domain)
        self.store = store
        self.project = project
        self.seed = seed
        self.size = size
        self.run_id = f"sessions-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M}-{uuid.uuid4().hex[:6]}"
        self._customer_factory = customer_factory
        self._timeout = timeout
        self._agent = AgentSpec(factory=_outside, label=agent_label)
        self._sandboxes: dict[int, Sandbox] = {}
        self._sessions: dict[str, _Open] = {}
        self._attempts: dict[str, int] = {}
        self._runtime: passhat.Passhat | None = None
        self._run_created = False
        self.ended_by_shutdown = 0

    def _sandbox(self, seed: int) -> Sandbox:
        if seed not in self._sandboxes:
            self._sandboxes[seed] = Sandbox(self.domain, seed=seed, size=self.size)
        return self._sandboxes[seed]

    def _ensure_run(self) -> None:
        if self.store is None or self._run_created:
            return
        run = ReplayRun(
            run_id=self.run_id,
            created_at=dt.datetime.now(dt.UTC),
            k=1,
            params={
                "period": None,
                "agent": self._agent.label,
                "domain": self.domain.name,
                "sessions": True,
                "seed": self.seed,
                "size": self.size,
                "exploratory": ["graded sessions: an outside agent drove each trial over HTTP"],
            },
        )
        self.store.create_replay_run(self.project, run)
        self._runtime = store_runtime(self.store, self.project)
        self._run_created = True

    async def open(self, task_type: str, scenario: int | str | None = None, seed: int | None = None) -> dict[str, Any]:
        """Open a session on one scenario of `task_type` (an index into its generated scenarios, or an id)."""
        if task_type not in self.domain.task_types:
            raise LookupError(
                f"domain {self.domain.name!r} has no task type {task_type!r}; "
                f"its task types: {', '.join(sorted(self.domain.task_types))}"
            )
        seed = self.seed if seed is None else seed
        sandbox = await asyncio.to_thread(self._sandbox, seed)
        chosen = self._scenario(sandbox, task_type, scenario, seed)
        self._ensure_run()
        attempt = self._attempts.get(chosen.scenario_id, 0)
        self._attempts[chosen.scenario_id] = attempt + 1
        session = GradedSession(
            sandbox,
            chosen,
            attempt=attempt,
            customer_factory=self._customer_factory,
            config=RunConfig(timeout=self._timeout, run_id=self.run_id),
            runtime=self._runtime,
            label=self._agent.label,
        )
        opening = await session.start()
        session_id = uuid.uuid4().hex
        self._sessions[session_id] = _Open(session, asyncio.ensure_future(self._keep(session)))
        endpoint = session.endpoint
        return {
            "session_id": session_id,
            "task_type": task_type,
            "scenario_id": chosen.scenario_id,
            "attempt": attempt,
            "mcp_url": endpoint.url if endpoint else None,
            "mcp_token": endpoint.token if endpoint else None,
            "policy": self.domain.policy,
            "customer": opening.customer,
            "ended": opening.ended,
        }

    @staticmethod
    def _scenario(sandbox: Sandbox, task_type: str, scenario: int | str | None, seed: int) -> Scenario:
        if isinstance(scenario, str):
            for candidate in sandbox.scenarios(task_type, 200, seed=seed):
                if candidate.scenario_id == scenario:
                    return candidate
            raise LookupError(f"no scenario {scenario!r} of {task_type!r} (seed {seed})")
        index = scenario or 0
        if index < 0:
            raise LookupError(f"scenario must be 0 or more, got {index}")
        drawn = sandbox.scenarios(task_type, index + 1, seed=seed)
        if index >= len(drawn):
            raise LookupError(f"{task_type!r} has {len(drawn)} scenarios for seed {seed}; scenario {index} is beyond")
        return drawn[index]

    async def _keep(self, session: GradedSession) -> TrialResult:
        """Store the session's trial once it is over, whether ended by the agent, the customer or the timeout."""
        result = await session.result()
        if self.store is not None:
            row = trial_row(self.run_id, self._agent, result)
            await asyncio.to_thread(self.store.add_trials, self.project, [row])
            if self._runtime is not None:
                await asyncio.to_thread(self._runtime.flush)
        return result

    def _get(self, session_id: str) -> _Open:
        found = self._sessions.get(session_id)
        if found is None:
            raise KeyError(f"no session {session_id!r} (open one with POST /v1/sessions)")
        return found

    async def message(self, session_id: str, text: str, final: bool = False) -> dict[str, Any]:
        """The agent's message; the customer's answer and whether the conversation has ended."""
        turn = await self._get(session_id).session.say(text, final=final)
        return {"customer": turn.customer, "ended": turn.ended}

    async def end(self, session_id: str) -> dict[str, Any]:
        """End the session and return its verdict (the trial is stored before this returns)."""
        opened = self._get(session_id)
        await opened.session.end()
        result = await opened.stored
        return verdict_of(result, self.run_id)

    async def close(self, *, grace_s: float = 1.0) -> None:
        """End the open sessions and release the sandboxes (server shutdown); `ended_by_shutdown` counts them.

        Each open session ends as an infrastructure error that says the server shut down (never the agent's
        failure) and its trial is stored like any other; one that has not ended within `grace_s` is abandoned."""
        still_open = [opened for opened in self._sessions.values() if not opened.stored.done()]
        for opened in still_open:
            opened.session.shut_down(SHUTDOWN_REASON)
        if still_open:
            _, late = await asyncio.wait([opened.stored for opened in still_open], timeout=grace_s)
            for opened in still_open:
                if opened.stored in late:
                    await opened.session.cancel()
                    opened.stored.cancel()
            await asyncio.gather(*(opened.stored for opened in still_open), return_exceptions=True)
        if self.store is not None and self._run_created:
            await asyncio.to_thread(self.store.finish_replay_run, self.project, self.run_id)
        if self._runtime is not None:
            self._runtime.shutdown()
        for sandbox in self._sandboxes.values():
            sandbox.close()
        self.ended_by_shutdown += len(still_open)


def verdict_of(result: TrialResult, run_id: str) -> dict[str, Any]:
    """The graded session as the agent reads it: passed, the failure signature, the check's diagnostics."""
    record = result.record
    signature = result.signature
    return {
        "passed": result.passed,
        "signature": None if signature is None else signature.label,
        "evidence": None if signature is None else signature.evidence,
        "diagnostics": record.verdict.to_dict(),
        "termination_reason": record.termination_reason,
        "run_id": run_id,
        "ticket_id": result.ticket_id,
        "attempt": result.attempt,
        "trace_id": result.trace_id,
        "tool_calls": [{"name": call.name, "outcome": call.outcome, "turn": call.turn} for call in record.tool_calls],
        "consents": [{"turn": turn, "action": action} for turn, action in sorted(record.consents.items())],
    }


class OpenRequest(BaseModel):
    """`POST /v1/sessions`: the task type, and which of its scenarios (index or id) with which seed."""

    model_config = ConfigDict(extra="forbid")
    task_type: str
    scenario: Annotated[int, Field(ge=0)] | str | None = None  # an index counts from 0
    seed: int | None = None


class MessageRequest(BaseModel):
    """`POST /v1/sessions/{id}/messages`: the agent's message; `final` when it acts, refuses or answers."""

    model_config = ConfigDict(extra="forbid")
    text: str
    final: bool = False


def sessions_app(service: SessionService, token: str) -> FastAPI:
    """The HTTP API of `service`: POST /v1/sessions, /v1/sessions/{id}/messages, /v1/sessions/{id}/end.

    Every request needs `Authorization: Bearer <token>`: the sessions change a database and store trials.
    """
    if not token:
        raise DomainError("a sessions server needs a non-empty bearer token")
    expected = f"Bearer {token}"

    def authorized(request: Request) -> None:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), expected.encode()):
            raise HTTPException(
                401,
                "send Authorization: Bearer <token> (printed when the server started)",
                headers={"WWW-Authenticate": 'Bearer realm="passhat-sessions"'},
            )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await service.close()

    app = FastAPI(title="passhat graded sessions", lifespan=lifespan, dependencies=[Depends(authorized)])

    @app.exception_handler(LookupError)
    async def not_found(request: Request, exc: LookupError) -> JSONResponse:
        message = exc.args[0] if exc.args else str(exc)
        return JSONResponse({"error": "not_found", "message": str(message)}, status_code=404)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        kind = request.headers.get("content-type") or "no content type"
        if "json" not in kind.lower():  # `curl -d '{...}'` sends a form: its JSON is never read as JSON
            message = f"send the body as JSON with content-type: application/json (got {kind})"
            return JSONResponse({"error": "invalid_request", "message": message}, status_code=422)
        return await request_validation_exception_handler(request, exc)

    @app.post("/v1/sessions")
    async def open_session(body: OpenRequest) -> dict[str, Any]:
        return await service.open(body.task_type, body.scenario, body.seed)

    @app.post("/v1/sessions/{session_id}/messages")
    async def send_message(session_id: str, body: MessageRequest) -> dict[str, Any]:
        return await service.message(session_id, body.text, body.final)

    @app.post("/v1/sessions/{session_id}/end")
    async def end_session(session_id: str) -> dict[str, Any]:
        return await service.end(session_id)

    return app
