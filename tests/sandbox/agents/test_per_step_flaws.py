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


class _CountingFlaws(FlawConfig):
    """Per-step rates that never fire, recording every chance the plan gives each mode."""

    def step(self, task_type: str, mode: str, scenario_id: str, attempt: int, index: int) -> bool:
        self.chances.append((task_type, mode, index))  # type: ignore[attr-defined]
        return False


async def test_retail_gives_every_order_the_customer_names_its_own_empty_lookup_chance() -> None:
    """Identification is one lookup; each order number the customer gives is another (not the account's orders)."""
    from passhat.sandbox import load_domain

    flaws = _CountingFlaws(rates={"empty_lookup": 0.5})
    object.__setattr__(flaws, "chances", [])
    with Sandbox(load_domain("retail"), size="small") as sandbox:
        single = sandbox.scenarios("return_delivered_items", 1)
        chain = sandbox.scenarios("multi_order_return", 1)
        results = await run_trials(sandbox, single + chain, 1, ReferenceAgent.factory(flaws))
    assert all(result.passed for result in results)
    counted = defaultdict(int)
    for task_type, mode, _ in flaws.chances:  # type: ignore[attr-defined]
        if mode == "empty_lookup":
            counted[task_type] += 1
    orders_in_chain = len(chain[0].intent["order_ids"])
    assert counted == {"return_delivered_items": 1 + 1, "multi_order_return": 1 + orders_in_chain}
