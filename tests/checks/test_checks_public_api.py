"""The public surface of passhat.checks: the contract's names, a sorted __all__, and no upward imports."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import passhat.checks

CONTRACT_NAMES = {
    "Snapshot",
    "take_snapshot",
    "StateDiff",
    "RowChange",
    "diff_snapshots",
    "ChangeLog",
    "record_changes",
    "CheckContext",
    "Verdict",
    "Diagnostic",
    "Check",
    "updated",
    "inserted",
    "deleted",
    "unchanged",
    "no_other_writes",
    "response_contains",
    "response_omits",
    "all_of",
    "any_of",
    "check",
    "ToolCallRecord",
    "TrialRecord",
    "FailureSignature",
    "classify_failure",
    "SIGNATURES",
}

CHECKS_DIR = pathlib.Path(__file__).resolve().parents[2] / "checks"


def test_every_contract_name_is_exported() -> None:
    assert set(passhat.checks.__all__) >= CONTRACT_NAMES


def test_all_matches_the_public_names() -> None:
    # The order is checked for every package by tests/test_public_api.py (ruff's RUF022 order).
    exported = passhat.checks.__all__
    # pytest rewrites asserts in passhat (its pytest11 plugin), adding "@py_builtins"-style names: skip them.
    public = {name for name in vars(passhat.checks) if not name.startswith(("_", "@"))}
    assert set(exported) == public


def test_checks_never_import_the_collector_or_the_sandbox() -> None:
    for module in CHECKS_DIR.glob("*.py"):
        text = module.read_text()
        assert not re.search(r"^\s*(from|import)\s+passhat\.(collector|sandbox)\b", text, re.MULTILINE), module
    code = (
        "import sys, passhat.checks\n"
        "print(sorted(m for m in sys.modules if m.startswith(('passhat.collector', 'passhat.sandbox'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_contract_signatures_accept_the_documented_calls() -> None:
    from passhat.checks import CheckContext, Diagnostic, RowChange, StateDiff, ToolCallRecord, Verdict

    change = RowChange(table="orders", key={"id": 1}, op="update", before={"s": "a"}, after={"s": "b"})
    ctx = CheckContext(StateDiff([change]), "final", ["final"], None)
    assert ctx.diff.updated == [change] and change.changed_fields == {"s": ("a", "b")}
    verdict = Verdict(passed=False, check="x", diagnostics=[Diagnostic("x", "m", table="t")], children=[])
    assert verdict.failures()[0].table == "t"
    call = ToolCallRecord(name="find", arguments={}, outcome="empty")
    assert call.error_type is None and call.is_write is False


def test_a_verdict_gives_the_evaluation_event_attributes() -> None:
    from passhat.checks import Diagnostic, Verdict

    failed = Verdict(False, "refund_issued", [Diagnostic("updated", "orders id='O-1' was not changed")])
    assert failed.evaluation_attributes() == {
        "gen_ai.evaluation.name": "refund_issued",
        "gen_ai.evaluation.score.value": 0.0,
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.explanation": "orders id='O-1' was not changed",
    }
    assert Verdict(True, "x").evaluation_attributes()["gen_ai.evaluation.score.label"] == "pass"
