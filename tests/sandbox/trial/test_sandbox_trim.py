"""A sandbox no trial is using keeps only the spare connections its next trial reuses (`Sandbox.trim`)."""

from __future__ import annotations

from sqlalchemy import text

from passhat.sandbox import Sandbox


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
