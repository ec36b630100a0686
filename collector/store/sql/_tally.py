"""The SQL of `Store.ticket_tallies`: a run's trials counted per ticket by the database (`GROUP BY`).

A finished run's tallies are kept in their own table when it finishes (a finished run keeps its figures: SQLite
would otherwise count a million trials again after every start); adding trials to the run drops them, and the
next read of the still finished run keeps them again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import sqlalchemy as sa

from passhat.checks import NOT_AGENT_FAULT
from passhat.collector.store._codec import dumps
from passhat.collector.store._rows import TicketTally
from passhat.collector.store._tally import MASK_ATTEMPTS, tallies_from_rows
from passhat.collector.store.sql import _schema as schema


def counted_by_agent() -> sa.ColumnElement[bool]:
    """A trial that speaks about the agent: the harness did not break it (`reliability.is_harness_failure`: no
    simulator or infrastructure error, nor their signature)."""
    t = schema.trials
    return sa.and_(
        sa.func.coalesce(t.c.simulator_error, "") == "",
        sa.func.coalesce(t.c.infra_error, "") == "",
        sa.func.coalesce(t.c.failure_label, "").not_in(sorted(NOT_AGENT_FAULT)),
    )


def _sum_if(condition: sa.ColumnElement[bool], value: sa.ColumnElement[int] | int = 1) -> sa.ColumnElement[int]:
    return sa.func.sum(sa.case((condition, value), else_=0))


def tally_query(project: str, run_id: str) -> sa.Select[Any]:
    """(domain, task_type, ticket_id, trials, passes, attempts bits, passed bits, harness errors) per ticket."""
    t = schema.trials
    counted = counted_by_agent()
    bit = sa.cast(sa.literal(1), sa.BigInteger).op("<<")(t.c.attempt)
    low = sa.and_(counted, t.c.attempt < MASK_ATTEMPTS)
    return (
        sa.select(
            sa.func.min(t.c.domain),
            sa.func.min(t.c.task_type),
            t.c.ticket_id,
            _sum_if(counted),
            _sum_if(sa.and_(counted, t.c.passed)),
            _sum_if(low, bit),
            _sum_if(sa.and_(low, t.c.passed), bit),
            _sum_if(sa.not_(counted)),
        )
        .where(t.c.project == project, t.c.run_id == run_id)
        .group_by(t.c.ticket_id)
    )


def signature_query(project: str, run_id: str) -> sa.Select[Any]:
    """(ticket_id, failure_label, count) of the counted failed trials."""
    t = schema.trials
    return (
        sa.select(t.c.ticket_id, t.c.failure_label, sa.func.count())
        .where(t.c.project == project, t.c.run_id == run_id, counted_by_agent(), sa.not_(t.c.passed))
        .group_by(t.c.ticket_id, t.c.failure_label)
    )


def later_attempts_query(project: str, run_id: str) -> sa.Select[Any]:
    """(ticket_id, attempt, passed) of the counted trials numbered beyond the bit sets' reach."""
    t = schema.trials
    return sa.select(t.c.ticket_id, t.c.attempt, t.c.passed).where(
        t.c.project == project, t.c.run_id == run_id, counted_by_agent(), t.c.attempt >= MASK_ATTEMPTS
    )


def kept_query(project: str, run_id: str, task_type: str | None = None) -> sa.Select[Any]:
    """A finished run's kept tallies (of one task type, with ``task_type``), in the aggregate's column order, then
    their signatures."""
    k = schema.ticket_tallies
    query = sa.select(
        k.c.domain, k.c.task_type, k.c.ticket_id, k.c.trials, k.c.passes, k.c.attempts, k.c.passed,
        k.c.harness_errors, k.c.signatures,
    ).where(k.c.project == project, k.c.run_id == run_id)  # fmt: skip
    return query if task_type is None else query.where(k.c.task_type == task_type)


def kept_values(project: str, run_id: str, tally: TicketTally) -> dict[str, Any]:
    """The row keeping one ticket's tally (bit sets cut to the attempts a BIGINT holds)."""
    low = (1 << MASK_ATTEMPTS) - 1
    return {
        "project": project, "run_id": run_id, "ticket_id": tally.ticket_id, "domain": tally.domain,
        "task_type": tally.task_type, "trials": tally.trials, "passes": tally.passes,
        "attempts": tally.attempts & low, "passed": tally.passed & low, "harness_errors": tally.harness_errors,
        "signatures": dumps(tally.signatures),
    }  # fmt: skip


_loads = orjson.loads


def tallies_from_kept(rows: Sequence[Any], later: dict[str, list[tuple[int, bool]]]) -> list[TicketTally]:
    """Tallies from kept rows (their later attempts read back from the trials)."""
    signatures = [
        (row[2], label, count) for row in rows if row[8] != "{}" for label, count in (_loads(row[8]) or {}).items()
    ]
    return tallies_from_rows([tuple(row[:8]) for row in rows], signatures, later)
