"""Curtailed replay: a ticket's attempts stop once its pass^k and pass@k are settled, changing neither."""

from __future__ import annotations

import collections

import pytest

from passhat.sandbox import Curtailment, FlawConfig, ReferenceAgent, Sandbox, TrialResult, run_curtailed, run_trials


def _fixed(outcomes: list[bool | None]) -> tuple[list[int], object]:
    ran: list[int] = []

    async def attempt(a: int) -> bool | None:
        ran.append(a)
        return outcomes[a]

    return ran, attempt


async def test_attempts_stop_at_the_first_pass_and_fail() -> None:
    ran, attempt = _fixed([True, True, True, False, True, True])
    assert await run_curtailed(attempt, 6, Curtailment(min_trials=2)) == 4  # type: ignore[arg-type]
    assert sorted(ran) == [0, 1, 2, 3]


async def test_a_ticket_that_always_passes_or_always_fails_runs_all_k() -> None:
    for outcome in (True, False):
        ran, attempt = _fixed([outcome] * 5)
        assert await run_curtailed(attempt, 5, Curtailment(min_trials=2)) == 5  # type: ignore[arg-type]
        assert sorted(ran) == [0, 1, 2, 3, 4]


async def test_the_first_min_trials_attempts_always_run() -> None:
    ran, attempt = _fixed([True, False, True, True, True])
    assert await run_curtailed(attempt, 5, Curtailment(min_trials=3)) == 3  # type: ignore[arg-type]
    assert sorted(ran) == [0, 1, 2]


async def test_errored_attempts_count_towards_k_but_settle_nothing() -> None:
    _, attempt = _fixed([None, True, None, False, True])
    assert await run_curtailed(attempt, 5, Curtailment(min_trials=1)) == 4  # type: ignore[arg-type]


async def test_a_resumed_ticket_runs_only_the_attempts_it_lacks() -> None:
    ran, attempt = _fixed([True, True, False, True])
    count = await run_curtailed(attempt, 4, Curtailment(min_trials=2), known={0: True, 1: True})  # type: ignore[arg-type]
    assert count == 3 and ran == [2]


def test_min_trials_must_be_positive() -> None:
    with pytest.raises(ValueError, match="min_trials"):
        Curtailment(min_trials=0)


def _per_ticket(results: list[TrialResult], k: int) -> dict[str, tuple[int, int]]:
    """Per ticket: the full design's pass^k and pass@k indicators over the usable attempts run."""
    outcomes: dict[str, list[bool]] = collections.defaultdict(list)
    for r in results:
        if r.record.simulator_error is None and r.record.infra_error is None:
            outcomes[r.scenario.scenario_id].append(r.passed)
    return {t: (int(all(v) and len(v) == k), int(any(v))) for t, v in outcomes.items()}


@pytest.mark.slow
async def test_curtailed_and_full_designs_give_identical_per_ticket_pass_hat_k_and_pass_at_k(retail: Sandbox) -> None:
    k = 6
    scenarios = retail.scenarios(count=1)
    factory = ReferenceAgent.factory(FlawConfig.default())
    full = await run_trials(retail, scenarios, k, factory)
    curtailed = await run_trials(retail, scenarios, k, factory, curtailment=Curtailment(min_trials=2))
    full_by = {(r.scenario.scenario_id, r.attempt): r.passed for r in full}
    assert all(full_by[(r.scenario.scenario_id, r.attempt)] == r.passed for r in curtailed)  # the same attempts
    assert _per_ticket(curtailed, k) == _per_ticket(full, k)
    assert len(curtailed) < len(full)
