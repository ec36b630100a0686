"""Failure modes are injected per step: each chance is drawn on its own, so a longer chain fails more often."""

from __future__ import annotations

from collections import defaultdict

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, run_trials
from passhat.sandbox.domains.mock import domain as mock


def test_each_chance_fails_with_the_modes_rate_so_n_chances_fail_with_one_minus_the_survival_to_the_n() -> None:
    rate = 0.1
    flaws = FlawConfig(rates={"no_write": rate}, vary_by_scenario=False)
    trials = [(f"s{i}", attempt) for i in range(2000) for attempt in range(2)]
    shares = []
    for chances in (1, 2, 4, 8):
        failed = [any(flaws.step("t", "no_write", s, a, index) for index in range(chances)) for s, a in trials]
        shares.append(sum(failed) / len(failed))
        assert abs(shares[-1] - (1 - (1 - rate) ** chances)) < 0.03, (chances, shares[-1])
    assert shares == sorted(shares)


def test_a_forced_mode_or_a_mixture_is_chosen_once_per_trial_not_per_step() -> None:
    assert not FlawConfig.forced("no_write").per_step("t")
    assert not FlawConfig.from_mixture([(1.0, 0.5)]).per_step("t")
    assert FlawConfig.default().per_step("t")
    assert FlawConfig.forced("no_write").choose("t", frozenset({"no_write"}), "s", 0) == "no_write"
    assert FlawConfig.default().choose("t", frozenset({"no_write"}), "s", 0) is None


async def test_a_chain_with_more_writes_fails_more_often_at_the_same_per_step_rate() -> None:
    # renew_several_loans renews 2, 3 or 4 loans: one write each, so 2, 3 or 4 chances to confirm and not write.
    rate = 0.12
    flaws = FlawConfig(rates={"no_write": rate}, vary_by_scenario=False)
    with Sandbox(mock, size="default") as sandbox:
        scenarios = sandbox.scenarios("renew_several_loans", 60)
        results = await run_trials(sandbox, scenarios, 6, ReferenceAgent.factory(flaws))
    by_length: dict[int, list[bool]] = defaultdict(list)
    for result in results:
        by_length[len(result.scenario.intent["loans"])].append(result.passed)
        assert result.passed == (result.injected is None)
        if not result.passed:
            # Skipped at the first write, nothing changed: no_write. Skipped later, the chain stopped partway
            # after real writes: the classifier calls that unresolved.
            wrote = not result.record.diff.is_empty
            assert result.signature is not None
            assert result.signature.label == ("unresolved" if wrote else "no_write")
    failure = {n: 1 - sum(passed) / len(passed) for n, passed in by_length.items()}
    assert failure[2] < failure[3] <= failure[4] + 0.1, failure
    assert abs(failure[2] - (1 - (1 - rate) ** 2)) < 0.09, failure
