"""A sandbox no trial is using keeps only the spare connections its next trial reuses (`Sandbox.trim`)."""

from __future__ import annotations

from sqlalchemy import text

from passhat.sandbox import Sandbox, TrialDatabase


def _orders(sandbox: Sandbox) -> int:
    database = sandbox.memory_copy()
    try:
        with database.engine.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM orders")).scalar_one())
    finally:
        database.close()


def test_trim_closes_the_spare_copies_beyond_the_count_and_later_copies_are_whole() -> None:
    with Sandbox("retail") as sandbox:
        expected = _orders(sandbox)
        copies = [sandbox.memory_copy() for _ in range(4)]
        assert len(sandbox._spare) == 1  # a copy takes a connection from the pool only when first used
        for copy in copies:  # in use at once: the first takes the image's own connection, the others new ones
            with copy.engine.connect() as connection:
                assert connection.execute(text("SELECT count(*) FROM orders")).scalar_one() == expected
        assert sandbox._spare == []
        for copy in copies:
            copy.close()
        assert len(sandbox._spare) == 4  # each handed back for a later trial to reuse
        sandbox.trim(1)
        assert len(sandbox._spare) == 1
        assert _orders(sandbox) == expected  # the kept spare serves the next trial
        sandbox.trim(0)
        assert sandbox._spare == []
        assert _orders(sandbox) == expected  # a fresh connection does too


def test_a_workers_shared_base_keeps_its_spares_between_tickets_and_a_tickets_own_template_borrows_them() -> None:
    """A worker never trims the domain's base as a ticket ends: the base serves every ticket whose rows fit the
    seed, and trimming it at each ticket's end made later trials open and parse a new database (39% of a
    replay's trials did). A ticket's own template (its rows laid over the seed) holds no connection of its own:
    its trials take the base's spares, statements prepared, and give them back; trimming it leaves them."""
    from passhat.collector.replay import ReplayTicket
    from passhat.collector.replay._ray import TrialWorker, domain_ref
    from passhat.sandbox import ReferenceAgent, RowImage, RunConfig, load_domain

    retail = load_domain("retail")
    worker = TrialWorker(
        {"retail": domain_ref(retail)}, ReferenceAgent.factory(), RunConfig(), seed=0, size="small", tracing=None
    )
    try:
        base = worker.pool.base(retail)
        scenarios = base.scenarios("cancel_pending_order", 2)
        on_seed = [ReplayTicket(s.scenario_id, s.task_type, "retail", s, ()) for s in scenarios]
        first, second = on_seed
        held = [worker._open(first) for _ in range(3)] + [worker._open(second)]
        assert all(sandbox is base for sandbox in held)
        copies = [base.memory_copy() for _ in range(4)]  # four trials at once on the base, each using its copy
        for copy in copies:
            _use(copy)
        for copy in copies:
            copy.close()
        for _ in range(3):
            worker._close(first)  # the first ticket's last trial ends while the second's runs
        assert len(base._spare) >= 4  # the next trials reuse them
        worker._close(second)
        assert len(base._spare) >= 4

        order = base.initial.rows("orders")[0]
        changed = RowImage("orders", {"order_id": order["order_id"]}, {**order, "status": "cancelled"})
        own = ReplayTicket("T-own", "cancel_pending_order", "retail", scenarios[0], (changed,))
        spares = list(base._spare)
        template = worker._open(own)
        assert template is not base
        copies = [template.memory_copy() for _ in range(3)]
        for copy in copies:
            _use(copy)
        for copy in copies:
            copy.close()
        worker._close(own)  # trims the ticket's template: not the base's spares
        assert sorted(map(id, base._spare)) == sorted(map(id, spares))  # the same connections, none new or closed
        assert template._spare is base._spare
    finally:
        worker.pool.close()


def _use(database: TrialDatabase) -> None:
    """A trial's first statement on its copy (which then holds a connection of its sandbox's pool)."""
    with database.engine.connect() as connection:
        connection.execute(text("SELECT count(*) FROM orders")).scalar_one()


def test_closing_a_derived_sandbox_leaves_its_origins_connections_open() -> None:
    """A derived sandbox's trials borrow its origin's spare connections; closing it (a ticket done) closes none
    of them, and the origin's next trials still read their own rows through them."""
    from passhat.sandbox import RowImage

    with Sandbox("retail") as sandbox:
        expected = _orders(sandbox)
        order = sandbox.initial.rows("orders")[0]
        derived = sandbox.derive([RowImage("orders", {"order_id": order["order_id"]}, {**order, "status": "x"})])
        copies = [derived.memory_copy() for _ in range(3)]
        for copy in copies:
            _use(copy)
        for copy in copies:
            copy.close()
        spares = list(sandbox._spare)
        assert len(spares) >= 3
        derived.close()
        assert sandbox._spare == spares
        for spare in spares:
            assert spare.execute("SELECT 1").fetchone() == (1,)  # open
        assert _orders(sandbox) == expected
