"""A trial's database parked while it waits (`TrialConnection`) reads, writes and grades exactly as a held one,
and a derived template shares the rows its overlay did not change (`StartingState.rebased`)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from collections.abc import Sequence

import pytest
from sqlalchemy import select, text

from passhat.checks import install_change_log
from passhat.sandbox import (
    Agent,
    FlawConfig,
    Message,
    ReferenceAgent,
    RowImage,
    RunConfig,
    Sandbox,
    Toolbox,
    TrialContext,
    run_trials,
)
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.trial._database import TrialDatabase
from passhat.sandbox.trial._parking import CopyPool, TrialConnection

IDLE = 0.01


def _connection(database: TrialDatabase) -> TrialConnection:
    assert isinstance(database.raw, TrialConnection)
    return database.raw


def _write(database: TrialDatabase, order_id: str) -> bytes:
    """Update one order, delete another; the database's bytes after."""
    with database.engine.begin() as connection:
        connection.execute(m.orders.update().where(m.orders.c.order_id == order_id).values(status="cancelled"))
        connection.execute(text("DELETE FROM orders WHERE rowid = (SELECT max(rowid) FROM orders)"))
    assert database.raw is not None
    return database.raw.serialize()


def test_a_parked_database_is_byte_for_byte_the_one_it_left(retail: Sandbox) -> None:
    with retail.template.connect() as connection:
        order_id = connection.execute(select(m.orders.c.order_id).order_by(m.orders.c.order_id)).scalars().first()
    assert order_id is not None
    start = (retail.initial, retail.domain.metadata, retail.rowids)

    async def run() -> None:
        parked, held = retail.memory_copy(), retail.memory_copy()
        _connection(parked).arm(IDLE)
        try:
            left = _write(parked, order_id)
            _write(held, order_id)
            await asyncio.sleep(IDLE * 6)
            assert _connection(parked).parked and _connection(parked).parks >= 1  # it gave its connection back
            assert not _connection(held).parked  # never armed: it holds its copy
            # The next statement lays it back in: the bytes it left, the rows a copy never parked holds.
            assert parked.raw is not None and parked.raw.serialize() == left
            assert parked.diff(*start) == held.diff(*start)
            assert {change.op for change in parked.diff(*start).changes} == {"update", "delete"}
            await asyncio.sleep(IDLE * 6)  # parked again, unwritten since: the pages it keeps are the same
            assert _connection(parked).parks >= 2
            with parked.engine.connect() as connection:
                status = connection.execute(select(m.orders.c.status).where(m.orders.c.order_id == order_id))
                assert status.scalar_one() == "cancelled"
            assert parked.raw.serialize() == left
        finally:
            parked.close()
            held.close()

    asyncio.run(run())


def test_an_open_transaction_keeps_the_database_held(retail: Sandbox) -> None:
    async def run() -> None:
        database = retail.memory_copy()
        _connection(database).arm(IDLE)
        try:
            with database.engine.connect() as connection:
                connection.execute(text("UPDATE orders SET status = 'held' WHERE rowid = 1"))
                await asyncio.sleep(IDLE * 6)
                assert not _connection(database).parked  # uncommitted: never parked under the statement
                connection.commit()
            await asyncio.sleep(IDLE * 6)
            assert _connection(database).parked
        finally:
            database.close()

    asyncio.run(run())


def test_a_closed_database_refuses_statements_and_returns_its_connection(retail: Sandbox) -> None:
    database = retail.memory_copy()
    raw = database.raw
    assert raw is not None
    raw.execute("SELECT count(*) FROM orders").fetchone()
    spares = len(retail._spare)
    database.close()
    assert len(retail._spare) == spares + 1
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        raw.execute("SELECT 1")


def test_a_database_used_from_another_thread_is_never_parked_under_it(retail: Sandbox) -> None:
    """An agent's own synchronous tool (pydantic-ai runs it on a worker thread) reading the trial's database:
    from that first use the database keeps its connection, whatever the loop's timers do."""

    async def run() -> None:
        database = retail.memory_copy()
        _connection(database).arm(IDLE)
        try:
            database.engine.dispose()
            count = await asyncio.to_thread(lambda: _connection(database).execute("SELECT count(*) FROM orders"))
            await asyncio.sleep(IDLE * 6)
            assert not _connection(database).parked and _connection(database).parks == 0
            assert count.fetchone()[0] > 0  # the cursor the thread opened still reads the trial's rows
        finally:
            database.close()

    asyncio.run(run())


def test_a_thread_waking_its_database_parks_no_other_trial() -> None:
    """Only the thread that armed a database parks it: a trial woken on a worker thread, over the pool's limit,
    takes a new connection instead of emptying one the loop may be using at that moment."""
    source = sqlite3.connect(":memory:")
    source.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    source.execute("INSERT INTO t VALUES (1)")
    source.commit()
    pool = CopyPool(limit=1)

    async def run() -> None:
        on_loop, on_thread = TrialConnection(source.serialize(), pool), TrialConnection(source.serialize(), pool)
        on_loop.arm(60)
        on_thread.arm(60)
        try:
            assert on_loop.execute("SELECT count(*) FROM t").fetchone() == (1,)
            assert await asyncio.to_thread(lambda: on_thread.execute("SELECT count(*) FROM t").fetchone()) == (1,)
            assert not on_loop.parked and not on_thread.parked and len(pool.live) == 2
            assert on_loop.park_now() and on_loop.parked  # on its own thread it still parks
            assert not on_thread.park_now()  # disarmed by its use on another thread
        finally:
            on_loop.close()
            on_thread.close()

    asyncio.run(run())


STRESS = """
import asyncio, sqlite3
from passhat.sandbox.trial._parking import CopyPool, TrialConnection

source = sqlite3.connect(":memory:")
source.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
source.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x" * 200) for i in range(2000)])
source.commit()
image, pool, wrong = source.serialize(), CopyPool(limit=2), []

async def trial():
    connection = TrialConnection(image, pool)
    connection.arm(0.001)
    def tool():
        for _ in range(20):
            row = connection.execute("SELECT count(*), sum(length(v)) FROM t").fetchone()
            if row != (2000, 400000):
                wrong.append(row)
    try:
        for _ in range(10):
            await asyncio.to_thread(tool)
            await asyncio.sleep(0.002)
    finally:
        connection.close()

async def main():
    await asyncio.gather(*(trial() for _ in range(12)))

asyncio.run(main())
assert not wrong, wrong[:3]
"""


def test_trials_whose_tools_run_on_threads_survive_the_loop_parking_around_them() -> None:
    """Twelve trials, each reading its database from worker threads while the loop's timers would park it every
    millisecond (the pydantic-ai quickstart's shape). Before the fix this process died of a segmentation fault."""
    done = subprocess.run([sys.executable, "-c", STRESS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"


class _Slow:
    """The ReferenceAgent behind a wait before each turn, longer than the parking delay."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner

    async def respond(self, messages: Sequence[Message], tools: Toolbox) -> Message:
        await asyncio.sleep(0.1)
        return await self.inner.respond(messages, tools)


def test_trials_that_park_between_turns_end_as_trials_that_never_wait(retail: Sandbox) -> None:
    flaws = FlawConfig.default()
    scenarios = [retail.scenarios(name, 1, seed=3)[0] for name in sorted(retail.domain.task_types)]

    def slow(context: TrialContext) -> Agent:
        return _Slow(ReferenceAgent(context, flaws))

    config = RunConfig(parallel=len(scenarios))
    waited = asyncio.run(run_trials(retail, scenarios, 1, slow, config=config))
    direct = asyncio.run(run_trials(retail, scenarios, 1, ReferenceAgent.factory(flaws), config=config))

    def outcome(result: object) -> object:
        record = result.record  # type: ignore[attr-defined]
        return (result.scenario.scenario_id, record.passed, record.diff, record.transcript, record.tool_calls)  # type: ignore[attr-defined]

    assert [outcome(r) for r in waited] == [outcome(r) for r in direct]


def test_a_derived_template_equals_a_fresh_log_and_shares_what_it_did_not_change(retail: Sandbox) -> None:
    with retail.template.connect() as connection:
        order = dict(connection.execute(select(m.orders).limit(1)).mappings().one())
    images = [
        RowImage("orders", {"order_id": order["order_id"]}, {**order, "status": "cancelled"}),
        RowImage("orders", {"order_id": 999_999}, None),  # did not exist yet: nothing to lay
    ]
    derived = retail.derive(images)
    try:
        with derived.template.connect() as connection:  # the derived copies start with an empty log
            assert connection.execute(text("SELECT count(*) FROM _passhat_touched")).scalar_one() == 0
        fresh = install_change_log(derived.template, metadata=retail.domain.metadata)
        assert derived.start.snapshot == fresh.snapshot
        assert derived.start.rowids == fresh.rowids
        shared = [name for name in retail.initial.tables if name != "orders"]
        assert shared and all(derived.initial.tables[name] is retail.initial.tables[name] for name in shared)
        assert derived.initial.tables["orders"] is not retail.initial.tables["orders"]
        assert derived.initial.get("orders", {"order_id": order["order_id"]})["status"] == "cancelled"  # type: ignore[index]
    finally:
        derived.close()


def test_a_derived_template_reads_only_the_rows_its_overlay_wrote_and_equals_a_fresh_log(retail: Sandbox) -> None:
    """Rows inserted, deleted and changed across tables: the derived starting state (the origin's rows with the
    logged rows read again) equals a snapshot of the whole copy, rowids too; the rows it did not write are the
    origin's own objects, even in the tables it wrote."""
    orders = retail.initial.rows("orders")
    changed, removed = orders[0], orders[1]
    customer = retail.initial.rows("customers")[0]
    note = {"note_id": 900_001, "customer_id": customer["customer_id"], "kind": "call", "body": "x"}
    note["created_at"] = "2026-10-01T09:00:00"
    columns = retail.domain.metadata.tables["notes"].columns.keys()
    images = [
        RowImage("orders", {"order_id": changed["order_id"]}, {**changed, "status": "cancelled"}),
        RowImage("orders", {"order_id": removed["order_id"]}, None),
        RowImage("customers", {"customer_id": customer["customer_id"]}, {"first_name": "Ada"}, partial=True),
        RowImage("notes", {"note_id": 900_001}, {name: note.get(name) for name in columns}),
    ]
    derived = retail.derive(images)
    try:
        fresh = install_change_log(derived.template, metadata=retail.domain.metadata)
        assert derived.start.snapshot == fresh.snapshot
        assert derived.start.rowids == fresh.rowids
        start = derived.initial
        assert start.get("orders", {"order_id": removed["order_id"]}) is None
        assert start.get("orders", {"order_id": changed["order_id"]})["status"] == "cancelled"  # type: ignore[index]
        assert start.get("customers", {"customer_id": customer["customer_id"]})["first_name"] == "Ada"  # type: ignore[index]
        assert start.get("notes", {"note_id": 900_001}) is not None
        untouched = orders[2]
        key = (untouched["order_id"],)
        assert start.tables["orders"].rows[key] is retail.initial.tables["orders"].rows[key]
    finally:
        derived.close()
