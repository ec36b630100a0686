"""Trials with the ReferenceAgent (an offline simulation): correct paths pass, injected failures are named."""

from __future__ import annotations

import collections
import random

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import text

import passhat
from passhat.checks import diff_snapshots, take_snapshot
from passhat.sandbox import (
    EXPECTED_SIGNATURE,
    FAILURE_MODES,
    DomainError,
    FlawConfig,
    ReferenceAgent,
    RunConfig,
    Sandbox,
    run_trial,
    run_trials,
)


@pytest.mark.slow
async def test_with_failures_off_every_scenario_of_every_task_type_passes(retail: Sandbox) -> None:
    scenarios = retail.scenarios(count=20)
    results = await run_trials(retail, scenarios, 1, ReferenceAgent.factory(FlawConfig.off()))
    failed = [(r.scenario.scenario_id, r.signature) for r in results if not r.passed]
    assert len(results) == 20 * len(retail.domain.task_types)
    assert failed == []
    assert {r.record.termination_reason for r in results} == {"customer_stop"}


@pytest.mark.slow
async def test_each_forced_failure_fails_the_trial_and_the_classifier_names_it(retail: Sandbox) -> None:
    # Over every task type and every failure mode it supports (write, chain, inquiry, refusal, confidentiality).
    named: collections.Counter[bool] = collections.Counter()
    misnamed: list[tuple[str, str, str | None]] = []
    for mode in FAILURE_MODES:
        scenarios = [
            s for s in retail.scenarios(count=4) if mode in retail.domain.task_types[s.task_type].failure_modes
        ]
        results = await run_trials(retail, scenarios, 1, ReferenceAgent.factory(FlawConfig.forced(mode)))
        for result in results:
            assert result.injected == mode
            assert not result.passed, (mode, result.scenario.scenario_id)
            label = result.signature.label if result.signature else None
            named[label == EXPECTED_SIGNATURE[mode]] += 1
            if label != EXPECTED_SIGNATURE[mode]:
                misnamed.append((mode, result.scenario.task_type, label))
    accuracy = named[True] / (named[True] + named[False])
    assert accuracy >= 0.95, misnamed
    kinds = {retail.domain.task_types[name].kind for name in retail.domain.task_types}
    assert kinds >= {"write", "chain", "read_only", "refuse", "confidentiality"}


async def test_a_trial_is_reproducible_from_scenario_and_attempt(retail: Sandbox) -> None:
    flaws = FlawConfig(rates={mode: 0.1 for mode in FAILURE_MODES}, vary_by_scenario=False)
    scenarios = retail.scenarios("cancel_pending_order", 10)
    first = await run_trials(retail, scenarios, 3, ReferenceAgent.factory(flaws))
    again = await run_trials(retail, scenarios, 3, ReferenceAgent.factory(flaws))
    assert [(r.injected, r.passed, r.record.transcript) for r in first] == [
        (r.injected, r.passed, r.record.transcript) for r in again
    ]
    assert any(r.injected for r in first)


def test_default_rates_vary_by_scenario_and_stay_in_bounds() -> None:
    # A one-write task: one chance of every mode per trial.
    flaws = FlawConfig.default()

    def fails(scenario: str, attempt: int) -> bool:
        return any(flaws.step("t", mode, scenario, attempt, 0) for mode in FAILURE_MODES)

    chosen = [True if fails(f"retail/t/0/{i:04d}", a) else None for i in range(200) for a in range(5)]
    share = sum(c is not None for c in chosen) / len(chosen)
    assert 0.05 < share < 0.35
    never = [i for i in range(200) if all(chosen[i * 5 + a] is None for a in range(5))]
    assert len(never) > 40  # some tickets are handled every time


@pytest.mark.slow
async def test_two_hundred_concurrent_trials_do_not_interfere(retail: Sandbox) -> None:
    write_types = [n for n, t in retail.domain.task_types.items() if t.kind in {"write", "chain"}]
    scenarios = [s for name in write_types for s in retail.scenarios(name, 20)]
    scenarios = random.Random(1).sample(scenarios, 200)
    results = await run_trials(
        retail, scenarios, 1, ReferenceAgent.factory(FlawConfig.off()), config=RunConfig(parallel=200)
    )
    assert len(results) == 200
    # Each check asserts its own rows changed and nothing else did: a neighbour's write would fail it.
    assert [r.scenario.scenario_id for r in results if not r.passed] == []
    assert all(r.record.diff.changes for r in results)


async def test_the_fast_trial_diff_equals_a_full_snapshot_diff(retail: Sandbox) -> None:
    database = retail.memory_copy()
    try:
        with database.engine.begin() as connection:
            connection.execute(text("UPDATE orders SET status = 'cancelled' WHERE status = 'pending'"))
            connection.execute(text("UPDATE payment_methods SET balance = balance + 1 WHERE kind = 'gift_card'"))
            connection.execute(text("DELETE FROM notes"))
            connection.execute(
                text("INSERT INTO notes (customer_id, kind, body, created_at) VALUES (NULL, 'remark', 'x', 'now')")
            )
        fast = database.diff(retail.initial, retail.domain.metadata, retail.rowids)
        full = diff_snapshots(retail.initial, take_snapshot(database.engine, metadata=retail.domain.metadata))
        assert len(fast.changes) > 10
        assert sorted(map(repr, fast.changes)) == sorted(map(repr, full.changes))
    finally:
        database.close()


async def test_each_trial_is_traced_as_a_sandbox_ticket(retail: Sandbox) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runtime = passhat.configure(tracer_provider=provider, make_global=False)
    scenario = retail.scenarios("return_delivered_items", 1)[0]
    result = await run_trial(
        retail, scenario, 2, ReferenceAgent.factory(), config=RunConfig(run_id="run-1"), runtime=runtime
    )
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.attributes and s.attributes.get("gen_ai.operation.name") == "invoke_agent")
    assert root.attributes is not None
    assert root.attributes["passhat.source"] == "sandbox"
    assert root.attributes["passhat.task_type"] == "return_delivered_items"
    assert root.attributes["passhat.replay.run_id"] == "run-1"
    assert root.attributes["passhat.trial.attempt"] == 2
    assert root.attributes["passhat.ticket.outcome"] == "passed"
    tools = [s for s in spans if s.attributes and s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert [s.attributes["gen_ai.tool.name"] for s in tools if s.attributes] == [
        c.name for c in result.record.tool_calls
    ]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in tools)
    events = {event.name for event in root.events}
    assert {"passhat.state_write", "gen_ai.evaluation.result", "passhat.customer_message"} <= events
    assert format(root.context.trace_id, "032x") == result.trace_id


def test_a_mixture_gives_each_scenario_its_own_success_rate() -> None:
    flaws = FlawConfig.from_mixture([(0.5, 1.0), (0.5, 0.0)])
    modes = frozenset(FAILURE_MODES)
    outcomes = {
        scenario: [flaws.choose("t", modes, scenario, attempt) is None for attempt in range(20)]
        for scenario in (f"s{i}" for i in range(400))
    }
    always = sum(all(runs) for runs in outcomes.values())
    never = sum(not any(runs) for runs in outcomes.values())
    assert always + never == 400  # every scenario sits at p = 1 or p = 0
    assert 150 < always < 250


def test_a_mixture_matches_its_pass_rates_on_average() -> None:
    flaws = FlawConfig.from_mixture([(0.31, 0.99), (0.60, 0.58), (0.09, 0.0)])
    modes = frozenset(FAILURE_MODES)
    passes = [sum(flaws.choose("t", modes, f"s{i}", attempt) is None for attempt in range(20)) for i in range(3000)]
    pass_at_1 = sum(passes) / (20 * 3000)
    pass_hat_20 = sum(p == 20 for p in passes) / 3000
    assert abs(pass_at_1 - 0.654) < 0.02
    assert abs(pass_hat_20 - 0.253) < 0.03


def test_a_bad_mixture_is_rejected() -> None:
    with pytest.raises(DomainError, match=r"\[0, 1\]"):
        FlawConfig.from_mixture([(1.0, 1.5)])
