"""A finished run's kept figures in ClickHouse: one ReplacingMergeTree row per run, the newest write wins.

Adding trials to a run, or finishing it again, writes an empty row over what was kept (read as "not kept"), so
the figures are computed again from the run's tallies on their next read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from passhat.collector.store.clickhouse._client import ClickHouseConnection

COLUMNS = ("project", "run_id", "body", "version")  # the table: `_schema._run_figures`


class RunFigures:
    """Kept figures of finished runs (the caller holds the connection's lock around writes that must be atomic
    with the trials they were counted from)."""

    def __init__(self, conn: ClickHouseConnection, db: str) -> None:
        self._conn = conn
        self._db = db

    def kept(self, project: str, run_id: str) -> str | None:
        rows = self._conn.query(
            f"SELECT body FROM {self._db}.run_figures FINAL WHERE project = %(p)s AND run_id = %(r)s",
            {"p": project, "r": run_id},
        )
        return str(rows[0][0]) if rows and rows[0][0] else None

    def trials(self, project: str, run_id: str) -> int:
        rows = self._conn.query(
            f"SELECT count() FROM {self._db}.trials FINAL WHERE project = %(p)s AND run_id = %(r)s",
            {"p": project, "r": run_id},
        )
        return int(rows[0][0])

    def keep(self, project: str, run_id: str, body: str) -> None:
        self._conn.insert("run_figures", [[project, run_id, body, time.time_ns()]], COLUMNS)

    def forget(self, project: str, run_ids: Iterable[str]) -> None:
        now = time.time_ns()
        self._conn.insert("run_figures", [[project, run_id, "", now] for run_id in run_ids], COLUMNS)
