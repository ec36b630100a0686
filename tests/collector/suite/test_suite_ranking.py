"""The table's statistics: Kendall's W on known rankings, and two flaw profiles ranked in the expected order in
every domain of the whole suite, with paired intervals that exclude zero at the suite's size."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from passhat.collector.store import open_store
from passhat.collector.suite import SuiteRunSettings, kendall_w, load_suite, run_suite, suite_agent, suite_table


def test_kendall_w_on_known_rankings() -> None:
    same = np.array([[0.9, 0.5, 0.2], [0.8, 0.4, 0.1], [0.95, 0.6, 0.3]])  # 3 domains rank 3 agents alike
    assert kendall_w(same) == pytest.approx(1.0)
    swapped = np.array([[0.9, 0.5], [0.5, 0.9]])  # two domains, opposite orders
    assert kendall_w(swapped) == pytest.approx(0.0)
    # Hand-computed: ranks (1,2,3), (1,3,2), (2,1,3): rank sums 4, 6, 8; S = 8; W = 12 * 8 / (9 * 24) = 0.444...
    mixed = np.array([[0.9, 0.5, 0.2], [0.9, 0.2, 0.5], [0.5, 0.9, 0.2]])
    assert kendall_w(mixed) == pytest.approx(12 * 8 / (9 * 24))
    assert kendall_w(np.zeros((2, 3))) != kendall_w(np.zeros((2, 3)))  # every value tied: W is undefined (nan)


@pytest.mark.slow
def test_careful_ranks_above_sloppy_in_every_domain_at_the_suites_size(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'ranking.db'}")
    store.ensure_project("default")
    settings = SuiteRunSettings(k=1)  # the whole suite, one trial a task: pass@1 per domain
    ids = [
        asyncio.run(run_suite(store, "default", suite_agent("reference", flaws=name), settings)).run.run_id
        for name in ("sloppy", "careful")
    ]
    table = suite_table(store, "default", ids)
    store.close()
    sloppy, careful = ids
    assert table.agents[0]["tasks"] == len(load_suite().tasks) >= 507
    assert table.domains == ["banking", "consulting", "insurance", "retail", "travel"]
    for domain in [*table.domains, "overall"]:
        assert table.ranks[domain] == [careful, sloppy], domain
        (pair,) = [p for p in table.paired if p["domain"] == domain]
        assert (pair["baseline"], pair["candidate"]) == (sloppy, careful)
        low, high = pair["pass_at_1"]["interval"]
        assert 0.0 < low < high, f"{domain}: careful minus sloppy {pair['pass_at_1']}"
        assert pair["tasks"] == table.cells[domain][careful]["tasks"] >= 80
    agreement = table.agreement
    assert agreement["value"] == pytest.approx(1.0) and agreement["domains"] == 5 and agreement["agents"] == 2
    assert agreement["interval"][1] == pytest.approx(1.0)
    for run_id in ids:
        swing = table.swing[run_id]
        assert swing["interval"][0] <= swing["swing"] <= swing["interval"][1]
