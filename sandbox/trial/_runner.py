"""The trial runner: k attempts per scenario, each on its own database copy and tool server."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry.trace import SpanKind

import passhat
from passhat import semconv
from passhat.checks import (
    NOT_AGENT_FAULT,
    CheckContext,
    FailureSignature,
    ToolCallRecord,
    TrialRecord,
    Turn,
    classify_failure,
)
from passhat.sandbox.agents import (
    Agent,
    AgentError,
    AgentFactory,
    Customer,
    CustomerFactory,
    McpEndpoint,
    Message,
    ModelServerUnusableError,
    ScriptedCustomer,
    Toolbox,
    ToolResult,
    ToolTransportError,
    TrialContext,
    Usage,
    check_model_servers,
    usage_of,
)
from passhat.sandbox.domain import Scenario
from passhat.sandbox.trial._curtailed import Curtailment, run_curtailed
from passhat.sandbox.trial._database import Sandbox, TrialDatabase
from passhat.sandbox.trial._details import TrialDetails
from passhat.sandbox.trial._parties import Unbuilt, built
from passhat.sandbox.trial._serve import Transport, connect, serve_toolbox

if TYPE_CHECKING:
    from passhat.checks import Verdict


@dataclass(frozen=True)
class RunConfig:
    """How trials run: transport, parallelism and the orchestrator's limits."""

    transport: Transport = "direct"
    parallel: int = 8
    max_turns: int = 30
    max_tool_errors: int = 10
    timeout: float = 300.0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    harness_retries: int = 2  # times a trial the harness broke is run again (`run_trial_with_retries`)

    def __post_init__(self) -> None:
        if self.harness_retries < 0:
            raise ValueError(f"harness_retries must be 0 or more, got {self.harness_retries}")


@dataclass(frozen=True)
class TrialResult:
    """One graded trial: the contract's TrialRecord plus what the runner measured."""

    scenario: Scenario
    attempt: int
    record: TrialRecord
    signature: FailureSignature | None
    injected: str | None
    duration_s: float
    overhead_s: float
    usage: Usage
    trace_id: str
    agent: str = ""
    harness_retries: tuple[str, ...] = ()  # why earlier runs of this trial were lost to the harness
    lost_trace_ids: tuple[str, ...] = ()  # their traces

    @property
    def passed(self) -> bool:
        """Whether the trial's check passed."""
        return self.record.passed

    @property
    def ticket_id(self) -> str:
        """The ticket (scenario) this trial attempted."""
        return self.scenario.scenario_id

    @property
    def task_type(self) -> str:
        return self.scenario.task_type

    @property
    def domain(self) -> str:
        return self.scenario.domain

    @property
    def failure_label(self) -> str | None:
        """The failure signature's label (None when the trial passed)."""
        return None if self.signature is None else self.signature.label

    @property
    def failure_evidence(self) -> str | None:
        """What the failure signature found (for a harness failure: the error's own type and message)."""
        return None if self.signature is None else self.signature.evidence

    @property
    def details(self) -> TrialDetails:
        """What the trial's stored record holds beyond its row (derived from the record, never kept twice)."""
        details = TrialDetails.of_record(self.record, usage=self.usage, injected=self.injected, agent=self.agent)
        return dataclasses.replace(details, infra_retries=self.harness_retries)


class _Trace:
    """Emits a trial's tool spans and messages under its ticket span (contract attribute names)."""

    def __init__(self, runtime: passhat.Passhat, ticket: passhat.Ticket) -> None:
        self.runtime = runtime
        self.ticket = ticket
        self.count = 0

    async def tool_called(
        self, name: str, arguments: dict[str, Any], result: ToolResult, call_id: str | None, took_ns: int
    ) -> None:
        """A child span of the ticket for one MCP call, on the runtime's clock (the ticket span's own), spanning
        the time the call took: a simulated clock (the demo's) places it inside its ticket, not days after."""
        self.count += 1
        attributes: dict[str, Any] = {
            semconv.OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
            semconv.TOOL_NAME: name,
            semconv.TOOL_CALL_ID: call_id or f"call_{self.count}",
            semconv.TOOL_TYPE: "function",
            semconv.TOOL_OUTCOME: result.outcome,  # the one rule, as the trial record has it
        }
        if result.error_type:
            attributes[semconv.ERROR_TYPE] = result.error_type
        if self.runtime.capture_content:
            attributes[semconv.TOOL_CALL_ARGUMENTS] = json.dumps(arguments, default=str)
            attributes[semconv.TOOL_CALL_RESULT] = result.text
        end = self.runtime.now() or time.time_ns()
        span = self.runtime.tracer.start_span(
            f"{semconv.OP_EXECUTE_TOOL} {name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=end - max(took_ns, 0),
        )
        span.end(end_time=end)

    def message(self, message: Message) -> None:
        if message.role == "customer":
            self.ticket.customer_says(message.text)
        else:
            self.ticket.agent_says(message.text)


async def _converse(
    agent: Agent, customer: Customer, tools: Toolbox, config: RunConfig, trace: _Trace
) -> tuple[list[Message], str, str | None, str | None, str | None]:
    """Customer and agent turns until one stops or a limit is hit: (messages, reason, simulator error, harness
    error, the agent's own failure)."""
    messages: list[Message] = []
    for party in (customer, agent):
        if isinstance(party, Unbuilt):  # its factory failed: the trial ends before anyone speaks
            return (messages, party.reason, *party.errors())
    try:
        opening = await customer.opening()
    except ModelServerUnusableError:
        raise  # no trial can work: the run stops (never this trial's outcome)
    except Exception as exc:
        return messages, "simulator_error", f"customer failed to open: {exc!r}", None, None
    messages.append(opening)
    trace.message(opening)
    for _ in range(config.max_turns):
        tools.turn = len(messages)  # calls made while the agent answers belong to its coming turn
        try:
            turn = await agent.respond(messages, tools)
        except ToolTransportError as exc:
            return messages, "infra_error", None, str(exc), None
        except ModelServerUnusableError:
            raise
        except AgentError as exc:  # the agent's own failure, as its framework says: graded, counted
            return messages, "agent_error", None, None, str(exc)
        except Exception as exc:
            return messages, "infra_error", None, f"agent raised {exc!r}", None
        if turn.stop and not turn.text:  # the agent ended without a word (a graded session closed): nothing said
            return messages, "agent_stop", None, None, None
        messages.append(turn)
        trace.message(turn)
        if turn.stop:
            return messages, "agent_stop", None, None, None
        if tools.errors >= config.max_tool_errors:
            return messages, "tool_error_limit", None, None, None
        try:
            reply = await customer.respond(messages)
        except ModelServerUnusableError:
            raise
        except Exception as exc:
            return messages, "simulator_error", f"customer failed: {exc!r}", None, None
        messages.append(reply)
        trace.message(reply)
        if reply.stop:
            return messages, "customer_stop", None, None, None
    return messages, "step_limit", None, None, None


async def run_trial(
    sandbox: Sandbox,
    scenario: Scenario,
    attempt: int,
    agent_factory: AgentFactory,
    *,
    customer_factory: CustomerFactory = ScriptedCustomer.for_trial,
    config: RunConfig | None = None,
    runtime: passhat.Passhat | None = None,
    ticket_id: str | None = None,
    production: bool = False,
) -> TrialResult:
    """Run one trial end to end: fresh database copy and tool server, conversation, grading, trace.

    ``production=True`` traces the run as a production ticket called ``ticket_id`` (how the demo simulates a
    deployed agent's traffic): no replay attributes and no evaluation event, only what an instrumented agent
    would emit, including its state writes with their before-images.
    """
    config = config or RunConfig()
    runtime = runtime or _local_runtime()
    domain = sandbox.domain
    task = domain.task_type(scenario.task_type)
    started = time.perf_counter()
    database: TrialDatabase = sandbox.memory_copy() if config.transport != "stdio" else sandbox.file_copy()
    if config.transport in ("direct", "memory"):  # its tool server runs on this loop: park it while it waits
        database.park_when_idle()
    overhead = time.perf_counter() - started
    context = TrialContext(domain, scenario, attempt, config.run_id, runtime.tracer)
    try:
        agent: Agent = built(agent_factory, context, "agent", "infra_error")
        customer: Customer = built(customer_factory, context, "customer", "simulator_error")
    except ModelServerUnusableError:
        database.close()
        raise
    agent_name = str(getattr(agent, "label", type(agent).__name__))
    replay: dict[str, Any] = {} if production else {"replay_run_id": config.run_id, "trial_attempt": attempt}
    ticket = runtime.ticket(
        ticket_id or f"{scenario.scenario_id}#{attempt}",
        task_type=scenario.task_type,
        intent=dict(scenario.intent),
        source="production" if production else "sandbox",
        domain=domain.name,
        agent_name=agent_name,
        **replay,
    )
    infra_error: str | None = None
    simulator_error: str | None = None
    agent_error: str | None = None
    messages: list[Message] = []
    calls: list[ToolCallRecord] = []
    with ticket:
        trace = _Trace(runtime, ticket)
        try:
            async with asyncio.timeout(config.timeout):
                connect_started = time.perf_counter()
                async with (
                    connect(domain, database, config.transport) as client,
                    contextlib.AsyncExitStack() as endpoints,
                ):
                    overhead += time.perf_counter() - connect_started

                    async def open_endpoint(toolbox: Toolbox) -> McpEndpoint:
                        return await endpoints.enter_async_context(serve_toolbox(toolbox))

                    tools = Toolbox(
                        client,
                        lookup_tools=domain.lookup_tools,
                        write_tools=domain.write_tools,
                        on_call=trace.tool_called,
                        engine=database.engine,
                        errors=domain.errors,
                        open_endpoint=open_endpoint if client is not None else None,
                    )
                    # An agent that uses its backend directly calls its own @passhat.tool functions: those
                    # calls join the record in call order, by the same outcome rule as MCP calls.
                    with passhat.collect_tool_calls(on_call=tools.record_own_call):
                        messages, reason, simulator_error, infra_error, agent_error = await _converse(
                            agent, customer, tools, config, trace
                        )
                    calls = tools.calls
        except TimeoutError:
            reason = "timeout"
        except ModelServerUnusableError:
            database.close()
            raise
        except Exception as exc:  # the tool server or its transport failed
            reason, infra_error = "infra_error", f"tool server failed: {exc!r}"
        finally:
            closer = getattr(agent, "aclose", None)
            if closer is not None:
                await closer()
        grading_started = time.perf_counter()
        consents = {index: m.consent for index, m in enumerate(messages) if m.consent is not None}
        grading = domain.check_for(scenario.task_type, scenario.intent)
        verdict, diff = _grade(sandbox, database, grading, messages, calls, task.needs_initial)
        agent_texts = [m.text for m in messages if m.role == "agent"]
        record = TrialRecord(
            passed=verdict.passed and infra_error is None and simulator_error is None,
            verdict=verdict,
            diff=diff,
            tool_calls=list(calls),
            termination_reason=reason,
            transcript=[(m.role, m.text) for m in messages],
            final_response=agent_texts[-1] if agent_texts else "",
            simulator_error=simulator_error,
            infra_error=infra_error,
            expected_write_tables=set(scenario.expected_write_tables),
            error_categories=domain.errors,
            consents=consents,
            agent_error=agent_error,
        )
        signature = classify_failure(record)
        _record_outcome(runtime, ticket, record, signature, diff, production=production)
        overhead += time.perf_counter() - grading_started
    close_started = time.perf_counter()
    database.close()
    overhead += time.perf_counter() - close_started
    return TrialResult(
        scenario=scenario,
        attempt=attempt,
        record=record,
        signature=signature,
        injected=getattr(agent, "flaw", None),
        duration_s=time.perf_counter() - started,
        overhead_s=overhead,
        usage=usage_of(agent) + usage_of(customer),
        trace_id=ticket.trace_id,
        agent=agent_name,
    )


def _grade(
    sandbox: Sandbox,
    database: TrialDatabase,
    check: Any,
    messages: Sequence[Message],
    calls: Sequence[ToolCallRecord],
    needs_initial: bool,
) -> tuple[Verdict, Any]:
    diff = database.diff(sandbox.initial, sandbox.domain.metadata, sandbox.rowids)
    agent_texts = [m.text for m in messages if m.role == "agent"]
    context = CheckContext(
        diff=diff,
        final_response=agent_texts[-1] if agent_texts else "",
        agent_messages=agent_texts,
        # Retail's checks carry their expected values; the starting state is for checks that compute them.
        initial=sandbox.initial if needs_initial else None,
        conversation=tuple(Turn(m.role, m.text, m.consent) for m in messages),
        tool_calls=tuple(calls),
    )
    return check(context), diff


def _record_outcome(
    runtime: passhat.Passhat,
    ticket: passhat.Ticket,
    record: TrialRecord,
    signature: FailureSignature | None,
    diff: Any,
    *,
    production: bool = False,
) -> None:
    for change in diff.changes:
        runtime.record_write(change.table, change.key, before=change.before, after=change.after, op=change.op)
    if production:
        ticket.resolve("resolved" if record.termination_reason in ("customer_stop", "agent_stop") else "abandoned")
        return
    ticket.span.add_event(
        semconv.EVENT_EVALUATION_RESULT,
        {
            semconv.EVALUATION_NAME: record.verdict.check,
            semconv.EVALUATION_SCORE_VALUE: 1.0 if record.passed else 0.0,
            semconv.EVALUATION_SCORE_LABEL: "pass" if record.passed else "fail",
            semconv.EVALUATION_EXPLANATION: signature.evidence if signature else "passed",
        },
    )
    ticket.span.set_attribute(semconv.TRIAL_TERMINATION_REASON, record.termination_reason)
    if signature is not None:
        ticket.span.set_attribute(semconv.TRIAL_SIGNATURE, signature.label)
    ticket.resolve("passed" if record.passed else "failed")


_runtime: passhat.Passhat | None = None


def _local_runtime() -> passhat.Passhat:
    """A passhat runtime of the sandbox's own (spans kept in-process) when the caller gives none."""
    global _runtime
    if _runtime is None:
        from opentelemetry.sdk.trace import TracerProvider

        # Nothing leaves this provider (it has no exporter), so there is no personal data to replace.
        _runtime = passhat.configure(
            tracer_provider=TracerProvider(), source="sandbox", redact=False, make_global=False
        )
    return _runtime


async def run_trials(
    sandbox: Sandbox,
    scenarios: Sequence[Scenario],
    k: int,
    agent_factory: AgentFactory,
    *,
    customer_factory: CustomerFactory = ScriptedCustomer.for_trial,
    config: RunConfig | None = None,
    runtime: passhat.Passhat | None = None,
    curtailment: Curtailment | None = None,
) -> list[TrialResult]:
    """Run k attempts of every scenario, `config.parallel` at a time; results in scenario × attempt order.

    With ``curtailment`` a scenario's attempts stop once its pass^k and pass@k are settled (see `Curtailment`).
    A model agent's or customer's server is checked first (`check_model_servers`); one that cannot be reached, or
    fails every first call the same way, raises `ModelServerUnusableError` and stops the trials.
    """
    config = config or RunConfig()
    limit = asyncio.Semaphore(max(1, config.parallel))
    await check_model_servers(agent_factory, customer_factory)

    async def one(scenario: Scenario, attempt: int) -> TrialResult:
        from passhat.sandbox.trial._retry import run_trial_with_retries  # it builds on run_trial, above

        async with limit:
            return await run_trial_with_retries(
                sandbox,
                scenario,
                attempt,
                agent_factory,
                customer_factory=customer_factory,
                config=config,
                runtime=runtime,
            )

    if curtailment is None:
        return await gather_trials([one(s, a) for s in scenarios for a in range(k)])
    return await _run_curtailed(scenarios, k, curtailment, one)


T = TypeVar("T")


async def gather_trials(trials: Sequence[Awaitable[T]]) -> list[T]:
    """`asyncio.gather` of trials that, when one raises (`ModelServerUnusableError`: the run stops), cancels the others
    and waits for them to close their databases and tool servers before the error goes on."""
    tasks = [asyncio.ensure_future(trial) for trial in trials]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _run_curtailed(
    scenarios: Sequence[Scenario],
    k: int,
    curtailment: Curtailment,
    one: Callable[[Scenario, int], Awaitable[TrialResult]],
) -> list[TrialResult]:
    by_scenario: list[dict[int, TrialResult]] = [{} for _ in scenarios]

    async def ticket(index: int) -> None:
        async def attempt(a: int) -> bool | None:
            result = await one(scenarios[index], a)
            by_scenario[index][a] = result
            broken = result.signature is not None and result.signature.label in NOT_AGENT_FAULT
            return None if broken else result.passed

        await run_curtailed(attempt, k, curtailment)

    await gather_trials([ticket(i) for i in range(len(scenarios))])
    return [results[a] for results in by_scenario for a in sorted(results)]
