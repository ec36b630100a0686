"""The ClickHouseStore's replay runs: the runs (versioned rows read through FINAL), their trials, the per-ticket
tallies every figure is computed from (counted by ClickHouse aggregates on each read) and the figures a finished
run keeps (a mixin of `ClickHouseStore`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from passhat.collector.store._interface import StoreError
from passhat.collector.store._rows import HarnessTrial, ReplayRun, RunStatus, TicketTally, TrialRow
from passhat.collector.store._tally import MASK_ATTEMPTS, tallies_from_rows
from passhat.collector.store.clickhouse._client import ClickHouseConnection
from passhat.collector.store.clickhouse._rows import (
    COUNTED_BY_AGENT,
    RUN_COLUMNS,
    RUN_SELECT,
    TRIAL_COLUMNS,
    TRIAL_SELECT,
    run_from_row,
    run_values,
    to_utc,
    trial_from_row,
    trial_values,
)
from passhat.collector.store.clickhouse._run_figures import RunFigures

#: Trial keys bound into one duplicate check (a batch of 8,000 exceeded the default maximum query size).
_KEY_CHUNK = 2_000


class RunQueries:
    """What `ClickHouseStore` answers about replay runs and their trials (it provides the connection, the
    database's name and the kept figures)."""

    _conn: ClickHouseConnection
    _db: str
    _figures: RunFigures

    def _run(self, project: str, run_id: str) -> tuple[ReplayRun, int] | None:
        rows = self._conn.query(
            f"SELECT {RUN_SELECT}, version FROM {self._db}.replay_runs FINAL WHERE project = %(p)s AND run_id = %(r)s",
            {"p": project, "r": run_id},
        )
        return (run_from_row(rows[0][:-1]), int(rows[0][-1])) if rows else None

    def create_replay_run(self, project: str, run: ReplayRun) -> None:
        with self._conn.lock:
            if self._run(project, run.run_id) is not None:
                raise StoreError(f"replay run {run.run_id!r} already exists in project {project!r}")
            self._conn.insert("replay_runs", [run_values(project, run, 1)], (*RUN_COLUMNS, "version"))

    def get_replay_run(self, project: str, run_id: str) -> ReplayRun | None:
        found = self._run(project, run_id)
        return found[0] if found else None

    def list_replay_runs(self, project: str, *, limit: int = 50) -> list[ReplayRun]:
        rows = self._conn.query(
            f"SELECT {RUN_SELECT} FROM {self._db}.replay_runs FINAL WHERE project = %(p)s"
            " ORDER BY created_at DESC, run_id DESC LIMIT %(n)s",
            {"p": project, "n": max(0, limit)},
        )
        return [run_from_row(r) for r in rows]

    def add_trials(self, project: str, trials: Sequence[TrialRow]) -> None:
        if not trials:
            return
        with self._conn.lock:
            run_ids = sorted({t.run_id for t in trials})
            known = {
                r[0]
                for r in self._conn.query(
                    f"SELECT DISTINCT run_id FROM {self._db}.replay_runs WHERE project = %(p)s AND run_id IN %(r)s",
                    {"p": project, "r": run_ids},
                )
            }
            missing = [r for r in run_ids if r not in known]
            if missing:
                raise StoreError(f"no replay run {missing[0]!r} in project {project!r}")
            keys = [(t.run_id, t.ticket_id, t.attempt) for t in trials]
            stored: list[tuple[Any, ...]] = []
            # The keys are bound into the query text: in chunks, so a batch of any size stays under the server's
            # maximum query size.
            for start in range(0, len(keys), _KEY_CHUNK):
                stored = self._conn.query(
                    f"SELECT run_id, ticket_id, attempt FROM {self._db}.trials"
                    " WHERE project = %(p)s AND (run_id, ticket_id, attempt) IN %(k)s LIMIT 1",
                    {"p": project, "k": keys[start : start + _KEY_CHUNK]},
                )
                if stored:
                    break
            if stored or len(set(keys)) != len(keys):
                clash = stored[0] if stored else next(k for k in keys if keys.count(k) > 1)
                raise StoreError(f"a trial was already recorded (run, ticket, attempt) = {tuple(clash)!r}")
            self._conn.insert("trials", [trial_values(project, t) for t in trials], ("project", *TRIAL_COLUMNS))
            self._figures.forget(project, run_ids)

    def ticket_tallies(self, project: str, run_id: str, *, task_type: str | None = None) -> list[TicketTally]:
        counted = COUNTED_BY_AGENT
        low = f"{counted} AND attempt < {MASK_ATTEMPTS}"
        bit = "bitShiftLeft(toUInt64(1), attempt)"
        where = "project = %(p)s AND run_id = %(r)s"
        params = {"p": project, "r": run_id}
        if task_type is not None:
            where += " AND task_type = %(t)s"
            params["t"] = task_type
        rows = self._conn.query(
            f"SELECT any(domain), any(task_type), ticket_id, countIf({counted}), countIf({counted} AND passed),"
            f" sumIf({bit}, {low}), sumIf({bit}, {low} AND passed), countIf(NOT ({counted}))"
            f" FROM {self._db}.trials FINAL WHERE {where} GROUP BY ticket_id",
            params,
        )
        signatures = self._conn.query(
            f"SELECT ticket_id, failure_label, count() FROM {self._db}.trials FINAL"
            f" WHERE {where} AND {counted} AND NOT passed GROUP BY ticket_id, failure_label",
            params,
        )
        later: dict[str, list[tuple[int, bool]]] = {}
        if any(row[3] and int(row[5] or 0).bit_count() < int(row[3]) for row in rows):
            for ticket_id, attempt, passed in self._conn.query(
                f"SELECT ticket_id, attempt, passed FROM {self._db}.trials FINAL"
                f" WHERE {where} AND {counted} AND attempt >= {MASK_ATTEMPTS}",
                params,
            ):
                later.setdefault(ticket_id, []).append((int(attempt), bool(passed)))
        return tallies_from_rows(rows, signatures, later)

    def kept_run_figures(self, project: str, run_id: str) -> str | None:
        found = self._run(project, run_id)
        if found is None or found[0].status != "finished":
            return None
        return self._figures.kept(project, run_id)

    def keep_run_figures(self, project: str, run_id: str, *, trials: int, body: str) -> bool:
        with self._conn.lock:  # add_trials holds it too: the count and the write see the same trials
            found = self._run(project, run_id)
            if found is None or found[0].status != "finished" or self._figures.trials(project, run_id) != trials:
                return False
            self._figures.keep(project, run_id, body)
        return True

    def list_trials(
        self, project: str, run_id: str, *, ticket_id: str | None = None, harness_only: bool = False
    ) -> list[TrialRow]:
        one = "" if ticket_id is None else " AND ticket_id = %(t)s"
        one += f" AND NOT ({COUNTED_BY_AGENT})" if harness_only else ""
        rows = self._conn.query(
            f"SELECT {TRIAL_SELECT} FROM {self._db}.trials FINAL WHERE project = %(p)s AND run_id = %(r)s{one}"
            " ORDER BY ticket_id, attempt",
            {"p": project, "r": run_id, "t": ticket_id},
        )
        return [trial_from_row(r) for r in rows]

    def harness_trials(self, project: str, run_id: str) -> list[HarnessTrial]:
        """`Store.harness_trials`: their six columns only (a trial's details and verdict are most of its row)."""
        rows = self._conn.query(
            "SELECT ticket_id, attempt, failure_label, failure_evidence, simulator_error, infra_error"
            f" FROM {self._db}.trials FINAL WHERE project = %(p)s AND run_id = %(r)s AND NOT ({COUNTED_BY_AGENT})"
            " ORDER BY ticket_id, attempt",
            {"p": project, "r": run_id},
        )
        return [HarnessTrial(*row) for row in rows]

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
        with self._conn.lock:
            found = self._run(project, run_id)
            if found is None:
                raise StoreError(f"no replay run {run_id!r} in project {project!r}")
            run, version = found
            done = ReplayRun(
                run_id=run.run_id,
                created_at=run.created_at,
                k=run.k,
                status=status,
                params=run.params,
                finished_at=to_utc(at) if at else dt.datetime.now(dt.UTC),
                summary=summary if summary is not None else run.summary,
                error=error,
            )
            self._conn.insert("replay_runs", [run_values(project, done, version + 1)], (*RUN_COLUMNS, "version"))
            self._figures.forget(project, [run_id])  # a resumed run's figures are computed again
