"""The SQL of `Store.ticket_tallies`: a run's trials counted per ticket by the database (`GROUP BY`)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from passhat.collector.store._tally import MASK_ATTEMPTS
from passhat.collector.store.sql import _schema as schema


def _counted() -> sa.ColumnElement[bool]:
    """A trial that speaks about the agent: it ended in neither a simulator nor an infrastructure error."""
    t = schema.trials
    return sa.and_(
        sa.func.coalesce(t.c.simulator_error, "") == "",
        sa.func.coalesce(t.c.infra_error, "") == "",
    )


def _sum_if(condition: sa.ColumnElement[bool], value: sa.ColumnElement[int] | int = 1) -> sa.ColumnElement[int]:
    return sa.func.sum(sa.case((condition, value), else_=0))


def tally_query(project: str, run_id: str) -> sa.Select[Any]:
    """(domain, task_type, ticket_id, trials, passes, attempts bits, passed bits, harness errors) per ticket."""
    t = schema.trials
    counted = _counted()
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
        .where(t.c.project == project, t.c.run_id == run_id, _counted(), sa.not_(t.c.passed))
        .group_by(t.c.ticket_id, t.c.failure_label)
    )


def later_attempts_query(project: str, run_id: str) -> sa.Select[Any]:
    """(ticket_id, attempt, passed) of the counted trials numbered beyond the bit sets' reach."""
    t = schema.trials
    return sa.select(t.c.ticket_id, t.c.attempt, t.c.passed).where(
        t.c.project == project, t.c.run_id == run_id, _counted(), t.c.attempt >= MASK_ATTEMPTS
    )
