"""The frozen suite: its size and mix, and the hash that pins its content to the version."""

from __future__ import annotations

import collections

import pytest

from passhat.collector.suite import MANIFEST_HASHES, SUITE_VERSION, SuiteError, load_suite

PINNED_V1 = "16850c072d276e99ab199acb4b600c1630536f77c0bbea68fc9ad449ae4299ce"
"""The content hash of suite v1. A change here means a task changed: give the suite a new version instead."""


def test_the_v1_hash_is_pinned() -> None:
    suite = load_suite("v1")
    assert suite.content_hash == PINNED_V1, (
        "the suite v1 tasks changed (seed data, a scenario draw, a script or a check): keep v1 as it was and add "
        "a new suite version for the new tasks"
    )
    assert MANIFEST_HASHES["v1"] == PINNED_V1
    assert SUITE_VERSION == "v1"


def test_at_least_507_tasks_over_five_domains_with_the_seeds_mix() -> None:
    suite = load_suite()
    manifest = suite.manifest()
    assert manifest["tasks"] >= 507
    sizes = {name: entry["tasks"] for name, entry in manifest["domains"].items()}
    assert set(sizes) == {"retail", "travel", "banking", "insurance", "consulting"}
    assert sizes["consulting"] == max(sizes.values()) and sizes["retail"] == min(sizes.values())
    share = manifest["response_checked"] / manifest["tasks"]
    assert 0.04 <= share <= 0.08  # the seed: 30 of 507 add a check on the final response
    types = sum(len(entry["task_types"]) for entry in manifest["domains"].values())
    assert types == 76  # every task type of the five domains has at least one task
    ids = [task.task_id for task in suite.tasks]
    assert len(set(ids)) == len(ids)
    assert all(task.scenario.scenario_id == task.task_id for task in suite.tasks)


def test_response_checked_tasks_are_those_whose_check_reads_the_reply() -> None:
    suite = load_suite()
    kinds = collections.Counter(task.kind for task in suite.tasks if task.response_check)
    assert kinds["confidentiality"] >= 5  # one confidentiality task type per domain at least
    conversational = [task for task in suite.tasks if task.kind in ("read_only", "refuse", "confidentiality")]
    assert conversational and all(task.response_check for task in conversational)


def test_selecting_unknown_names_says_what_exists() -> None:
    suite = load_suite()
    with pytest.raises(SuiteError, match=r"no domain 'mars'.*banking, consulting"):
        suite.select(domains=["mars"])
    with pytest.raises(SuiteError, match="no task type 'nope'"):
        suite.select(task_types=["nope"])
    assert {t.domain for t in suite.select(domains=["retail"])} == {"retail"}
    with pytest.raises(SuiteError, match="no suite version 'v0'"):
        load_suite("v0")
