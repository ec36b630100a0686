"""The SqlStore's replay runs: the runs, their trials, the per-ticket tallies every figure is computed from (kept
when a run finishes), the figures a finished run keeps, and the trials the harness broke (a mixin of `SqlStore`;
the tally SQL itself is in `_tally`)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from passhat.collector.store._codec import dumps, to_us
from passhat.collector.store._interface import StoreError
from passhat.collector.store._rows import HarnessTrial, ReplayRun, RunStatus, TicketTally, TrialRow
from passhat.collector.store._tally import tallies_from_rows
from passhat.collector.store.sql import _schema as schema
from passhat.collector.store.sql._ingest import RowInserter, chunked
from passhat.collector.store.sql._rows import TRIAL_COLUMNS, run_from_row, trial_from_row, trial_values
from passhat.collector.store.sql._tally import (
    kept_query,
    kept_values,
    later_attempts_query,
    signature_query,
    tallies_from_kept,
    tally_query,
)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class RunQueries:
    """What `SqlStore` answers about replay runs and their trials (it provides the engine and the writer)."""

    _engine: sa.Engine
    _inserter: RowInserter
    _driver_integrity_error: type[Exception]

    def _writing(self) -> contextlib.AbstractContextManager[sa.Connection]:
        raise NotImplementedError

    def create_replay_run(self, project: str, run: ReplayRun) -> None:
        try:
            with self._writing() as conn:
                conn.execute(
                    sa.insert(schema.replay_runs).values(
                        project=project,
                        run_id=run.run_id,
                        created_at_us=to_us(run.created_at),
                        k=run.k,
                        status=run.status,
                        params=dumps(run.params),
                        finished_at_us=None if run.finished_at is None else to_us(run.finished_at),
                        summary=None if run.summary is None else dumps(run.summary),
                        error=run.error,
                    )
                )
        except IntegrityError as exc:
            raise StoreError(f"replay run {run.run_id!r} already exists in project {project!r}") from exc

    def get_replay_run(self, project: str, run_id: str) -> ReplayRun | None:
        r = schema.replay_runs
        with self._engine.connect() as conn:
            row = conn.execute(sa.select(r).where(r.c.project == project, r.c.run_id == run_id)).first()
        return None if row is None else run_from_row(row)

    def list_replay_runs(self, project: str, *, limit: int = 50) -> list[ReplayRun]:
        r = schema.replay_runs
        query = (
            sa.select(r)
            .where(r.c.project == project)
            .order_by(r.c.created_at_us.desc(), r.c.run_id)
            .limit(max(limit, 0))
        )
        with self._engine.connect() as conn:
            return [run_from_row(row) for row in conn.execute(query)]

    def add_trials(self, project: str, trials: Sequence[TrialRow]) -> None:
        if not trials:
            return
        r = schema.replay_runs
        wanted = sorted({t.run_id for t in trials})
        try:
            with self._writing() as conn:
                found = set(conn.scalars(sa.select(r.c.run_id).where(r.c.project == project, r.c.run_id.in_(wanted))))
                missing = [run_id for run_id in wanted if run_id not in found]
                if missing:
                    raise StoreError(f"no replay run {missing[0]!r} in project {project!r}")
                rows = chunked([trial_values(project, t) for t in trials])
                self._inserter.insert(conn, schema.trials, TRIAL_COLUMNS, rows)
                for kept in (schema.ticket_tallies, schema.run_figures):
                    conn.execute(sa.delete(kept).where(kept.c.project == project, kept.c.run_id.in_(wanted)))
        except (IntegrityError, self._driver_integrity_error) as exc:  # rows go in through the driver itself
            raise StoreError(f"a trial was already recorded (same run, ticket and attempt): {exc}") from exc

    def ticket_tallies(self, project: str, run_id: str, *, task_type: str | None = None) -> list[TicketTally]:
        """A finished run's kept tallies (kept when it finished); counted from the trials otherwise."""
        r = schema.replay_runs
        with self._engine.connect() as conn:
            status = conn.scalar(sa.select(r.c.status).where(r.c.project == project, r.c.run_id == run_id))
            kept = conn.execute(kept_query(project, run_id, task_type)).all() if status == "finished" else []
            if kept:
                return tallies_from_kept(kept, self._later_attempts(conn, project, run_id, kept))
            if status == "finished" and task_type is not None and self._kept_any(conn, project, run_id):
                return []  # kept, and none of this task type
            tallies = self._count_tallies(conn, project, run_id)
        if status == "finished" and tallies:  # finished before its tallies were kept (schema 5): keep them now
            with self._writing() as conn:
                # Trials added since the read began would make these stale: keep them only if the count holds.
                t = schema.trials
                count = conn.scalar(sa.select(sa.func.count()).where(t.c.project == project, t.c.run_id == run_id))
                if count == sum(t.trials + t.harness_errors for t in tallies):
                    self._keep_tallies(conn, project, run_id, tallies)
        # None kept yet, or none of this task type: counted whole (and kept), then chosen.
        return tallies if task_type is None else [t for t in tallies if t.task_type == task_type]

    def kept_run_figures(self, project: str, run_id: str) -> str | None:
        r, f = schema.replay_runs, schema.run_figures
        query = (
            sa.select(f.c.body)
            .join(r, sa.and_(r.c.project == f.c.project, r.c.run_id == f.c.run_id))
            .where(f.c.project == project, f.c.run_id == run_id, r.c.status == "finished")
        )
        with self._engine.connect() as conn:
            body: str | None = conn.scalar(query)
        return body

    def keep_run_figures(self, project: str, run_id: str, *, trials: int, body: str) -> bool:
        r, t, f = schema.replay_runs, schema.trials, schema.run_figures
        try:
            with self._writing() as conn:
                status = conn.scalar(sa.select(r.c.status).where(r.c.project == project, r.c.run_id == run_id))
                count = conn.scalar(sa.select(sa.func.count()).where(t.c.project == project, t.c.run_id == run_id))
                if status != "finished" or count != trials:
                    return False
                conn.execute(sa.delete(f).where(f.c.project == project, f.c.run_id == run_id))
                conn.execute(sa.insert(f).values(project=project, run_id=run_id, body=body))
        except IntegrityError:  # another reader kept the run's figures at the same moment (PostgreSQL)
            return False
        return True

    @staticmethod
    def _keep_tallies(conn: sa.Connection, project: str, run_id: str, tallies: Sequence[TicketTally]) -> None:
        kept = schema.ticket_tallies
        conn.execute(sa.delete(kept).where(kept.c.project == project, kept.c.run_id == run_id))
        if tallies:
            conn.execute(sa.insert(kept), [kept_values(project, run_id, t) for t in tallies])

    @staticmethod
    def _kept_any(conn: sa.Connection, project: str, run_id: str) -> bool:
        k = schema.ticket_tallies
        return (
            conn.scalar(sa.select(k.c.ticket_id).where(k.c.project == project, k.c.run_id == run_id).limit(1))
            is not None
        )

    def _count_tallies(self, conn: sa.Connection, project: str, run_id: str) -> list[TicketTally]:
        counted = conn.execute(tally_query(project, run_id)).all()
        signatures = conn.execute(signature_query(project, run_id)).all()
        return tallies_from_rows(counted, signatures, self._later_attempts(conn, project, run_id, counted))

    @staticmethod
    def _later_attempts(
        conn: sa.Connection, project: str, run_id: str, rows: Sequence[Any]
    ) -> dict[str, list[tuple[int, bool]]]:
        """(attempt, passed) of counted trials past the bit sets' reach, for the tickets that have any."""
        later: dict[str, list[tuple[int, bool]]] = {}
        if any(row[3] and int(row[5] or 0).bit_count() < int(row[3]) for row in rows):
            for ticket_id, attempt, passed in conn.execute(later_attempts_query(project, run_id)):
                later.setdefault(ticket_id, []).append((int(attempt), bool(passed)))
        return later

    def list_trials(
        self, project: str, run_id: str, *, ticket_id: str | None = None, harness_only: bool = False
    ) -> list[TrialRow]:
        t = schema.trials
        query = sa.select(t).where(t.c.project == project, t.c.run_id == run_id).order_by(t.c.ticket_id, t.c.attempt)
        if ticket_id is not None:
            query = query.where(t.c.ticket_id == ticket_id)
        if harness_only:
            query = query.where(sa.text(schema.HARNESS_BROKE))  # the partial index's own condition
        with self._engine.connect() as conn:
            return [trial_from_row(row) for row in conn.execute(query)]

    def harness_trials(self, project: str, run_id: str) -> list[HarnessTrial]:
        t = schema.trials
        query = (
            sa.select(t.c.ticket_id, t.c.attempt, t.c.failure_label, t.c.failure_evidence)
            .add_columns(t.c.simulator_error, t.c.infra_error)
            .where(t.c.project == project, t.c.run_id == run_id, sa.text(schema.HARNESS_BROKE))
            .order_by(t.c.ticket_id, t.c.attempt)
        )
        with self._engine.connect() as conn:
            return [HarnessTrial(*row) for row in conn.execute(query)]

    def finish_replay_run(
        self,
        project: str,
        run_id: str,
        *,
        status: RunStatus = "finished",
        summary: dict[str, Any] | None = None,
        error: str | None = None,
        at: dt.datetime | None = None,
    ) -> None:
        r = schema.replay_runs
        with self._writing() as conn:
            result = conn.execute(
                sa.update(r)
                .where(r.c.project == project, r.c.run_id == run_id)
                .values(
                    status=status,
                    summary=None if summary is None else dumps(summary),
                    error=error,
                    finished_at_us=to_us(at or _utcnow()),
                )
            )
            f = schema.run_figures  # figures kept of an earlier finish (a resumed run) are computed again
            conn.execute(sa.delete(f).where(f.c.project == project, f.c.run_id == run_id))
            if result.rowcount and status == "finished":  # a finished run keeps its figures' counts
                self._keep_tallies(conn, project, run_id, self._count_tallies(conn, project, run_id))
        if result.rowcount == 0:
            raise StoreError(f"no replay run {run_id!r} in project {project!r}")

    # --- alerts ------------------------------------------------------------------------------------
