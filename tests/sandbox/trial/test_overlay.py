"""Laying a production ticket's captured rows over the seed, so its trials start where the ticket did."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile

import pytest
from sqlalchemy import select

from passhat.sandbox import FlawConfig, OverlayError, ReferenceAgent, RowImage, Sandbox, run_trials
from passhat.sandbox.domains.retail import models as m


def _an_order(retail: Sandbox, status: str) -> dict[str, object]:
    with retail.template.connect() as connection:
        row = connection.execute(select(m.orders).where(m.orders.c.status == status).limit(1)).mappings().one()
    return dict(row)


def test_a_captured_row_replaces_the_seeded_one(retail: Sandbox) -> None:
    order = _an_order(retail, "pending")
    image = RowImage("orders", {"order_id": order["order_id"]}, {**order, "status": "cancelled"})
    derived = retail.derive([image])
    try:
        with derived.template.connect() as connection:
            status = connection.execute(
                select(m.orders.c.status).where(m.orders.c.order_id == order["order_id"])
            ).scalar_one()
        assert status == "cancelled"
        assert derived.initial.get("orders", {"order_id": order["order_id"]})["status"] == "cancelled"  # type: ignore[index]
        with retail.template.connect() as connection:  # the original template is untouched
            assert (
                connection.execute(
                    select(m.orders.c.status).where(m.orders.c.order_id == order["order_id"])
                ).scalar_one()
                == "pending"
            )
    finally:
        derived.close()


def test_a_partial_image_restores_only_the_changed_columns(retail: Sandbox) -> None:
    order = _an_order(retail, "delivered")
    derived = retail.derive([RowImage("orders", {"order_id": order["order_id"]}, {"status": "shipped"}, partial=True)])
    try:
        row = derived.initial.get("orders", {"order_id": order["order_id"]})
        assert row is not None and row["status"] == "shipped" and row["customer_id"] == order["customer_id"]
    finally:
        derived.close()


def test_the_earliest_image_of_a_row_wins(retail: Sandbox) -> None:
    order = _an_order(retail, "pending")
    key = {"order_id": order["order_id"]}
    derived = retail.derive(
        [RowImage("orders", key, {"status": "processed"}, partial=True), RowImage("orders", key, {"status": "x"}, True)]
    )
    try:
        assert derived.initial.get("orders", key)["status"] == "processed"  # type: ignore[index]
    finally:
        derived.close()


async def test_trials_on_a_derived_sandbox_see_no_change_from_the_overlay(retail: Sandbox) -> None:
    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    derived = retail.derive([RowImage("customers", {"customer_id": "nobody-here"}, None)])
    try:
        results = await run_trials(derived, [scenario], 2, ReferenceAgent.factory(FlawConfig.off()))
        assert all(r.passed for r in results)
        assert all(len(r.record.diff.changes) == len(results[0].record.diff.changes) for r in results)
    finally:
        derived.close()


async def test_a_derived_sandbox_compiles_no_statement_its_origin_compiled(
    retail: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ticket's own template keeps its origin's compiled statements: its first trial compiled every one again
    before (about 12 ms a retail ticket, paid by every ticket whose rows differ from the seed)."""
    from sqlalchemy.sql import compiler

    scenario = retail.scenarios("cancel_pending_order", 1)[0]
    await run_trials(retail, [scenario], 1, ReferenceAgent.factory(FlawConfig.off()))  # the origin compiles them
    compiled: list[str] = []
    original = compiler.SQLCompiler.__init__

    def counting(self: compiler.SQLCompiler, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        compiled.append(str(self.string))

    monkeypatch.setattr(compiler.SQLCompiler, "__init__", counting)
    derived = retail.derive([RowImage("customers", {"customer_id": "nobody-here"}, None)])
    try:
        results = await run_trials(derived, [scenario], 1, ReferenceAgent.factory(FlawConfig.off()))
        assert results[0].passed
        assert compiled == [], f"compiled again on the derived sandbox: {compiled}"
    finally:
        derived.close()


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (RowImage("invoices", {"id": 1}, {"id": 1}), "does not have"),
        (RowImage("orders", {"order_id": "O-x"}, {"colour": "red"}), "no column 'colour'"),
        (RowImage("orders", {"order_id": "O-missing"}, {"status": "pending"}, partial=True), "no such row"),
    ],
)
def test_rows_that_do_not_fit_are_named(retail: Sandbox, image: RowImage, message: str) -> None:
    with pytest.raises(OverlayError, match=message):
        retail.derive([image])


def _leftovers(prefix: str) -> set[str]:
    return {path.name for path in pathlib.Path(tempfile.gettempdir()).glob(f"{prefix}*")}


def test_a_ticket_whose_rows_do_not_fit_leaves_no_directory_behind(retail: Sandbox) -> None:
    before = _leftovers("passhat-retail-ticket-")
    with pytest.raises(OverlayError):
        retail.derive([RowImage("orders", {"order_id": "O-x"}, {"colour": "red"})])
    assert _leftovers("passhat-retail-ticket-") <= before


def test_a_sandbox_never_closed_leaves_no_copy_in_the_temporary_directory(tmp_path: pathlib.Path) -> None:
    # A script that forgets `close` (or dies of an exception): its sandboxes' databases go when the process ends.
    script = tmp_path / "forgets.py"
    script.write_text(
        "from passhat.sandbox import RowImage, Sandbox\n"
        "sandbox = Sandbox('retail')\n"
        "ticket = sandbox.derive([RowImage('orders', {'order_id': 'O-new'}, None)])\n"
        "print(sandbox.workdir)\n"
        "print(ticket.workdir)\n"
        "raise SystemExit(3)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    folders = [pathlib.Path(line) for line in done.stdout.split()]
    assert len(folders) == 2 and all(folder.name.startswith("passhat-retail-") for folder in folders)
    assert not any(folder.exists() for folder in folders)


def test_a_closed_sandbox_removes_its_directory_once(tmp_path: pathlib.Path) -> None:
    sandbox = Sandbox("retail")
    folder = sandbox.workdir
    assert folder.is_dir()
    sandbox.close()
    assert not folder.exists()
    sandbox.close()  # again: nothing left to do, no error
    given = Sandbox("retail", workdir=tmp_path / "mine")
    given.close()
    assert (tmp_path / "mine").is_dir()  # a directory the caller gave is the caller's
