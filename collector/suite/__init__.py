"""The frozen benchmark suite: fixed tasks over the five domains, suite runs, the cross-agent table, the gate.

`load_suite` builds a version's tasks (hash-pinned: `Suite.content_hash`); `run_suite` runs a part of it k times
with an agent, each trial in the store; `suite_table` is the seed's table for one or more runs (`render_html`
its offline page); `ship_gate` / `gate_run` fail a build when a task type's pass^k is credibly too low.
"""

from passhat.collector.suite._gate import GateFailure, GateResult, gate_run, ship_gate
from passhat.collector.suite._html import render_html, write_html
from passhat.collector.suite._profiles import PROFILES, FlawProfile, profile, suite_agent
from passhat.collector.suite._run import SuiteOutcome, SuiteRunSettings, run_suite, suite_of, suite_runs
from passhat.collector.suite._table import SEED_POINTS, SuiteTable, kendall_w, suite_table
from passhat.collector.suite._tasks import (
    MANIFEST_HASHES,
    SPECS,
    SUITE_VERSION,
    Suite,
    SuiteError,
    SuiteSpec,
    SuiteTask,
    load_suite,
    versions,
)

__all__ = [
    "MANIFEST_HASHES",
    "PROFILES",
    "SEED_POINTS",
    "SPECS",
    "SUITE_VERSION",
    "FlawProfile",
    "GateFailure",
    "GateResult",
    "Suite",
    "SuiteError",
    "SuiteOutcome",
    "SuiteRunSettings",
    "SuiteSpec",
    "SuiteTable",
    "SuiteTask",
    "gate_run",
    "kendall_w",
    "load_suite",
    "profile",
    "render_html",
    "run_suite",
    "ship_gate",
    "suite_agent",
    "suite_of",
    "suite_runs",
    "suite_table",
    "versions",
    "write_html",
]
