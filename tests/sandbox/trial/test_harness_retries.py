"""A trial the harness broke is run again, a bounded number of times, and each lost run is recorded."""

from __future__ import annotations

from collections.abc import Sequence

from passhat.sandbox import FlawConfig, RunConfig, Sandbox, TrialContext, run_trial_with_retries, run_trials
from passhat.sandbox.agents import Agent, Message, Toolbox, resolve_agent


class FlakyHarness:
    """The offline reference agent behind a connection that drops on the first ``drops`` runs of each trial."""

    def __init__(self, drops: int) -> None:
        self.drops = drops
        self.runs: dict[tuple[str, int], int] = {}
        self.reference = resolve_agent("reference", flaws=FlawConfig.off())

    def __call__(self, context: TrialContext) -> Agent:
        key = (context.scenario.scenario_id, context.attempt)
        self.runs[key] = self.runs.get(key, 0) + 1
        return _Dropping(self.reference(context), drop=self.runs[key] <= self.drops)


class _Dropping:
    def __init__(self, agent: Agent, *, drop: bool) -> None:
        self.agent, self.drop = agent, drop

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        if self.drop:
            raise ConnectionResetError("the agent's connection was reset")
        return await self.agent.respond(conversation, tools)


async def test_a_trial_the_harness_broke_is_run_again_and_its_lost_runs_are_recorded(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    flaky = FlakyHarness(drops=2)
    result = await run_trial_with_retries(retail, scenario, 0, flaky, config=RunConfig(harness_retries=2))
    assert result.passed and result.signature is None
    assert flaky.runs == {(scenario.scenario_id, 0): 3}
    assert len(result.harness_retries) == 2 and len(result.lost_trace_ids) == 2
    assert all(r.startswith("infra_error: agent raised ConnectionResetError") for r in result.harness_retries)
    assert result.details.infra_retries == result.harness_retries  # what the stored row keeps


async def test_retries_are_bounded_and_a_trial_still_broken_stays_a_harness_failure(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    flaky = FlakyHarness(drops=10)
    result = await run_trial_with_retries(retail, scenario, 0, flaky, config=RunConfig(harness_retries=1))
    assert flaky.runs == {(scenario.scenario_id, 0): 2}
    assert result.signature is not None and result.signature.label == "infra_error"
    assert len(result.harness_retries) == 1


async def test_a_failure_of_the_agent_is_never_retried(retail: Sandbox) -> None:
    scenario = retail.scenarios("change_pending_address", 1)[0]
    runs = []

    def refusing(context: TrialContext) -> Agent:
        runs.append(context.attempt)
        return _Refusing()

    result = await run_trial_with_retries(retail, scenario, 0, refusing, config=RunConfig(harness_retries=2))
    assert not result.passed and runs == [0] and result.harness_retries == ()


class _Refusing:
    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        return Message("agent", "I cannot help with that.", final=True, stop=True)


async def test_every_trial_of_a_replay_gets_its_retries(retail: Sandbox) -> None:
    scenarios = retail.scenarios("cancel_pending_order", 2)
    flaky = FlakyHarness(drops=1)
    results = await run_trials(retail, scenarios, 2, flaky, config=RunConfig(parallel=4))
    assert all(r.passed for r in results)
    assert [len(r.harness_retries) for r in results] == [1, 1, 1, 1]


async def test_a_factory_that_raises_fails_its_trial_as_the_harness_not_the_whole_run(retail: Sandbox) -> None:
    """An agent factory that cannot build the agent (here given the wrong function, as `--agent module:build`
    where build takes other arguments) ends each trial as a harness failure naming the factory and its error,
    before the customer speaks; it was an exception that ended the run with a traceback."""
    from passhat.sandbox import ScriptedCustomer, run_trial
    from passhat.sandbox.agents import ModelServerUnusableError

    scenarios = retail.scenarios("cancel_pending_order", 2)
    opened: list[int] = []

    def build(tools: object, context: TrialContext) -> Agent:
        raise AssertionError("never called with one argument")

    def customer(context: TrialContext) -> ScriptedCustomer:
        opened.append(context.attempt)
        return ScriptedCustomer.for_trial(context)

    results = await run_trials(retail, scenarios, 2, build, customer_factory=customer)
    assert len(results) == 4 and not any(r.passed for r in results)
    for result in results:
        assert result.record.termination_reason == "infra_error"
        assert result.signature is not None and result.signature.label == "infra_error"
        assert result.record.infra_error is not None
        assert result.record.infra_error.startswith("the agent factory ")
        assert "build() missing 1 required positional argument: 'context'" in result.record.infra_error
        assert result.record.transcript == []
    assert opened  # the customer was built, and never asked to speak (the transcript is empty)

    def forgot_to_return(context: TrialContext) -> Agent:
        resolve_agent("reference")(context)  # built, and not returned
        return None  # type: ignore[return-value]

    result = await run_trial(retail, scenarios[0], 0, forgot_to_return)
    assert result.record.termination_reason == "infra_error" and result.record.transcript == []
    assert result.record.infra_error == (
        "the agent factory test_a_factory_that_raises_fails_its_trial_as_the_harness_not_the_whole_run.<locals>."
        "forgot_to_return returned NoneType, not an agent (an object with async respond(conversation, tools))"
    )

    def no_customer(context: TrialContext) -> ScriptedCustomer:
        raise KeyError("persona")

    reference = resolve_agent("reference", flaws=FlawConfig.off())
    result = await run_trial(retail, scenarios[0], 0, reference, customer_factory=no_customer)
    assert result.record.termination_reason == "simulator_error"
    assert result.record.simulator_error is not None and "customer factory" in result.record.simulator_error
    assert "KeyError('persona')" in result.record.simulator_error

    def unusable(context: TrialContext) -> Agent:
        raise ModelServerUnusableError("the model server refused every key")

    try:
        await run_trial(retail, scenarios[0], 0, unusable)
    except ModelServerUnusableError:
        pass  # no trial can work: the run stops, as when a turn finds it out
    else:
        raise AssertionError("ModelServerUnusableError from a factory must stop the run")
