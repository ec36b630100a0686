"""Where failing attempts depart from passing ones, on real trials of the mock library domain: the reference
agent with one failure mode forced, against the same ticket handled by the agent with none."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt

import pytest

from passhat.collector.store import TrialRow
from passhat.collector.ui._divergence import departure, divergences, steps
from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, TrialResult, run_trial
from passhat.sandbox.domains.mock import domain as mock


def _row(result: TrialResult, attempt: int) -> TrialRow:
    return TrialRow(
        run_id="R-1",
        ticket_id=result.scenario.scenario_id,
        task_type=result.scenario.task_type,
        attempt=attempt,
        passed=result.passed,
        termination_reason=result.record.termination_reason,
        started_at=dt.datetime(2026, 11, 30, tzinfo=dt.UTC),
        duration_s=result.duration_s,
        trace_id=result.trace_id,
        failure_label=result.failure_label,
        simulator_error=result.record.simulator_error,
        infra_error=result.record.infra_error,
        details=result.details,
    )


@pytest.fixture(scope="module")
def renewals() -> dict[str, TrialRow]:
    """One renew_loan ticket: attempt 1 passes; 2, 3, 4 each fail by one forced mode."""

    async def run() -> dict[str, TrialRow]:
        with Sandbox(mock, size="default") as sandbox:
            scenario = sandbox.scenarios("renew_loan", 1)[0]
            found = {}
            for attempt, mode in enumerate((None, "wrong_entity", "act_before_confirm", "no_write")):
                flaws = FlawConfig.off() if mode is None else FlawConfig.forced(mode)
                result = await run_trial(sandbox, scenario, 0, ReferenceAgent.factory(flaws))
                assert result.passed == (mode is None), (mode, result.failure_label)
                found[mode or "passing"] = _row(result, attempt)
            return found

    return asyncio.run(run())


def test_a_wrong_entity_departs_at_the_write_on_the_argument_that_differs(renewals: dict[str, TrialRow]) -> None:
    found = divergences([renewals["passing"], renewals["wrong_entity"]])
    d = found[2]
    assert (d.reference, d.kind, d.fields) == (1, "argument", ("loan_id",))
    passing_calls = [c.name for c in renewals["passing"].details.tool_calls]
    assert d.step == passing_calls.index("renew_loan") + 1
    assert d.failing is not None and d.passing is not None
    assert d.failing.arguments["loan_id"] != d.passing.arguments["loan_id"]
    assert "loan_id=" in d.summary and "attempt 1 used" in d.summary


def test_a_write_before_the_customer_agreed_departs_as_a_missing_confirmation(renewals: dict[str, TrialRow]) -> None:
    d = divergences([renewals["passing"], renewals["act_before_confirm"]])[3]
    assert d.kind == "confirmation", d
    assert d.failing is not None and d.failing.name == "renew_loan" and not d.failing.confirmed
    assert d.passing is not None and d.passing.confirmed
    assert "before the customer confirmed" in d.summary


def test_an_attempt_that_never_wrote_departs_where_the_passing_one_went_on(renewals: dict[str, TrialRow]) -> None:
    d = divergences([renewals["passing"], renewals["no_write"]])[4]
    assert (d.kind, d.failing) == ("stopped", None)
    assert d.passing is not None and d.passing.name == "renew_loan"
    assert d.step == len(renewals["no_write"].details.tool_calls) + 1


def test_all_failing_attempts_at_once_and_none_without_a_passing_attempt(renewals: dict[str, TrialRow]) -> None:
    everything = list(renewals.values())
    found = divergences(everything)
    assert sorted(found) == [2, 3, 4]
    assert {d.kind for d in found.values()} == {"argument", "confirmation", "stopped"}
    assert divergences([r for r in everything if not r.passed]) == {}
    # A failing attempt whose calls equal the passing one's is not marked: its failure is not in its calls.
    same = dataclasses.replace(renewals["passing"], passed=False, attempt=5)
    assert 6 not in divergences([renewals["passing"], same])


def test_the_closest_passing_attempt_is_the_one_sharing_the_longest_opening() -> None:
    from passhat.checks import ToolCallRecord

    def call(name: str, **arguments: object) -> ToolCallRecord:
        return ToolCallRecord(name, dict(arguments), "ok", is_write=name.startswith("set"), turn=3)

    a = steps([call("find", id=1), call("get", id=1)], [])
    b = steps([call("find", id=1), call("list"), call("set", id=1)], [(2, "set")])
    failing = steps([call("find", id=1), call("list"), call("set", id=2)], [(2, "set")])
    assert departure(failing, a) == (1, "tool", ())
    assert departure(failing, b) == (2, "argument", ("id",))
    assert departure(b, b) is None
    assert departure(steps([call("set", id=1)], []), steps([call("set", id=1)], [(1, "set")])) == (
        0,
        "confirmation",
        (),
    )
