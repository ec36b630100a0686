"""The registry: a spec is JSON and rebuilds the same check; third-party checks load by entry point."""

from __future__ import annotations

import datetime as dt
import json
import pathlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal

import pytest
from sqlalchemy import Engine

import passhat.checks._registry as registry
from passhat.checks import (
    Check,
    CheckContext,
    SpecError,
    StateDiff,
    Verdict,
    all_of,
    any_of,
    build_check,
    check,
    evaluate,
    inserted,
    no_other_writes,
    record_changes,
    registered_checks,
    rerun,
    response_contains,
    take_snapshot,
    updated,
)

PLUGIN = pathlib.Path(__file__).parent / "plugin_pkg"


@pytest.fixture
def refunded(engine: Engine) -> CheckContext:
    initial = take_snapshot(engine)
    with record_changes(engine) as log, engine.begin() as connection:
        connection.exec_driver_sql("UPDATE orders SET status = 'refunded', refunded = 45.5 WHERE id = 'O-1'")
        connection.exec_driver_sql("INSERT INTO refunds (order_id, amount, reason) VALUES ('O-1', 45.5, 'x')")
    return CheckContext(diff=log.diff(), initial=initial, final_response="Refunded $45.50 to your card.")


@pytest.fixture
def clean_registry() -> Iterator[None]:
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def has_gift_tag(ctx: CheckContext) -> bool:
    """A plain module-level check: a spec names it by module and qualified name."""
    return ctx.diff.is_empty


@check(name="tests.refund_issued")
def refund_issued(order_id: str, amount: Decimal, *, placed: dt.datetime | None = None) -> Check:
    return all_of(
        updated("orders", where={"id": order_id}, to={"status": "refunded", "refunded": amount}),
        inserted("refunds", match={"order_id": order_id, "amount": amount}),
        no_other_writes(),
        any_of(response_contains(f"${amount}"), has_gift_tag),
    )


def test_a_spec_is_json_and_rebuilds_a_check_with_the_same_verdict(refunded: CheckContext) -> None:
    original = refund_issued("O-1", Decimal("45.50"), placed=dt.datetime(2026, 11, 1, 10, 30))
    verdict = original(refunded)
    assert verdict.passed, verdict.explanation
    assert verdict.check == "tests.refund_issued"
    assert verdict.spec == original.spec
    stored = json.loads(json.dumps(verdict.to_dict()))
    assert stored["spec"]["args"] == {
        "order_id": "O-1",
        "amount": {"$decimal": "45.50"},
        "placed": {"$datetime": "2026-11-01T10:30:00"},
    }
    again = rerun(stored["spec"], refunded)
    assert again == verdict


def test_composed_primitives_have_nested_specs(refunded: CheckContext) -> None:
    composite = all_of(
        updated("orders", where={"id": "O-1"}, to={"status": "refunded"}),
        no_other_writes(allow=["refunds", ("customers", {"id": "C-1"})]),
        any_of(response_contains("45.5", patterns=[r"card"]), has_gift_tag),
    )
    spec = json.loads(json.dumps(composite.spec))
    assert spec["args"]["checks"][1] == {
        "$check": {"check": "no_other_writes", "args": {"allow": ["refunds", ["customers", {"id": "C-1"}]]}}
    }
    assert spec["args"]["checks"][2]["$check"]["args"]["checks"][1] == {"$callable": f"{__name__}:has_gift_tag"}
    rebuilt = build_check(spec)
    assert rebuilt.spec == composite.spec
    assert rebuilt(refunded) == composite(refunded)


def test_a_lambda_has_no_spec_but_still_runs(refunded: CheckContext) -> None:
    composite = all_of(lambda ctx: True)
    with pytest.raises(SpecError, match="lambda or a nested function"):
        _ = composite.spec
    verdict = composite(refunded)
    assert verdict.passed and verdict.spec is None


def test_a_check_that_raises_is_reported_as_a_broken_check(refunded: CheckContext) -> None:
    def broken(ctx: CheckContext) -> Verdict:
        raise KeyError("amount")

    verdict = all_of(updated("orders", where={"id": "O-1"}, to={"status": "refunded"}), broken)(refunded)
    assert not verdict.passed
    assert verdict.errors() == ["the check broken raised KeyError: 'amount'"]
    odd = evaluate(lambda ctx: "yes", refunded, name="odd")
    assert odd.error == "the check odd returned str; a check returns a Verdict or a bool"


def test_unknown_check_name_lists_what_is_known() -> None:
    with pytest.raises(SpecError, match=r"no check named 'nope'.*known checks: .*updated"):
        build_check({"check": "nope", "args": {}})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"args": {}}, "a check spec looks like"),
        ({"check": "updated", "args": []}, "must be an object"),
        ({"check": "updated", "args": {"table": "orders"}}, "cannot be rebuilt"),
        ({"check": "all_of", "args": {"checks": [{"$callable": "nowhere.module:fn"}]}}, "cannot import"),
    ],
)
def test_bad_specs_are_one_clear_error(spec: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        build_check(spec)


def test_two_factories_cannot_share_a_name(clean_registry: None) -> None:
    def updated(table: str) -> Check:  # same name as the primitive, from another module
        return lambda ctx: True

    with pytest.raises(ValueError, match=r"already registered by passhat\.checks\._primitives:updated"):
        check(updated)


def test_primitives_are_registered() -> None:
    known = registered_checks()
    for name in ("updated", "inserted", "deleted", "unchanged", "no_other_writes", "all_of", "any_of"):
        assert known[name].startswith("passhat.checks."), name


@pytest.mark.slow
def test_third_party_checks_load_through_the_entry_point_group(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, clean_registry: None, refunded: CheckContext
) -> None:
    source = tmp_path / "src"
    shutil.copytree(PLUGIN, source)
    target = tmp_path / "site"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"),
            *("--no-build-isolation", "--target", str(target), str(source)),
        ],
        check=True,
        capture_output=True,
    )
    assert (target / "passhat_tiny_checks-0.1.0.dist-info" / "entry_points.txt").exists()
    monkeypatch.syspath_prepend(str(target))
    monkeypatch.delitem(sys.modules, "passhat_tiny_checks", raising=False)
    try:
        known = registered_checks()
        assert known["tiny.order_status"] == "passhat_tiny_checks:order_status"
        status = build_check({"check": "tiny.order_status", "args": {"order_id": "O-1", "status": "refunded"}})
        verdict = status(refunded)
        assert verdict.passed and verdict.check == "tiny.order_status"
        assert verdict.spec == {
            "check": "tiny.order_status",
            "args": {"order_id": "O-1", "status": "refunded"},
        }
        total = rerun({"check": "tiny.refund_total", "args": {"order_id": "O-1", "amount": "45.5"}}, refunded)
        assert total.passed and total.check == "tiny.refund_total"
        assert not rerun({"check": "tiny.refund_total", "args": {"order_id": "O-1", "amount": "9"}}, refunded).passed
    finally:
        sys.modules.pop("passhat_tiny_checks", None)


def test_a_stored_verdict_reruns_on_the_stored_diff(refunded: CheckContext) -> None:
    original = refund_issued("O-1", Decimal("45.50"))
    verdict = original(refunded)
    stored = json.loads(json.dumps({"verdict": verdict.to_dict(), "diff": refunded.diff.to_dict()}))
    diff = StateDiff.from_dict(stored["diff"])  # Decimal and datetime come back as strings
    again = rerun(stored["verdict"]["spec"], CheckContext(diff=diff, final_response=refunded.final_response))
    assert again.passed and verdict.passed
    wrong = rerun({**stored["verdict"]["spec"], "args": {"order_id": "O-1", "amount": "50"}}, CheckContext(diff))
    assert "refunded is '45.50', expected '50'" in wrong.explanation


def test_a_malformed_stored_diff_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="a stored diff looks like"):
        StateDiff.from_dict({"rows": []})
    with pytest.raises(ValueError, match="not a stored row change"):
        StateDiff.from_dict({"changes": [{"table": "t", "key": {}, "op": "upsert"}]})


def test_a_stored_verdict_reads_back(refunded: CheckContext) -> None:
    verdict = refund_issued("O-1", Decimal("40"))(refunded)
    stored = json.loads(json.dumps(verdict.to_dict()))
    again = Verdict.from_dict(stored)
    assert again.to_dict() == stored
    assert again.explanation == verdict.explanation
    with pytest.raises(ValueError, match="not a stored verdict"):
        Verdict.from_dict({"check": "x"})
