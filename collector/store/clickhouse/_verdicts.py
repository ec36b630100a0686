"""Production verdicts in ClickHouse: one ReplacingMergeTree row per ticket id (the newest grading wins)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from passhat.collector.store._codec import dumps, from_us_opt
from passhat.collector.store._rows import ProductionVerdict, ReplaysFilter, StatusCode, TicketRow, VerdictFilter
from passhat.collector.store.clickhouse._client import ClickHouseConnection
from passhat.collector.store.clickhouse._rows import (
    COUNTED_BY_AGENT,
    TICKET_COLUMNS,
    micros_col,
    ticket_from_row,
    to_utc,
)

COLUMNS = (
    "ticket_id", "trace_id", "task_type", "start_time_ns", "passed", "graded_at", "domain", "signature", "evidence",
    "verdict", "graded_by",
)  # fmt: skip
_SELECT = ", ".join(micros_col(c) if c == "graded_at" else c for c in COLUMNS)
_CHUNK = 5000
_USABLE = COUNTED_BY_AGENT  # the one harness rule (`reliability.is_harness_failure`)


def _values(project: str, v: ProductionVerdict) -> list[Any]:
    return [
        project, v.ticket_id, v.trace_id, v.task_type, v.start_time_ns, v.passed, to_utc(v.graded_at), v.domain,
        v.signature, v.evidence, None if v.verdict is None else dumps(v.verdict), v.graded_by,
    ]  # fmt: skip


def _from_row(row: Sequence[Any]) -> ProductionVerdict:
    ticket_id, trace_id, task_type, start, passed, graded, domain, signature, evidence, verdict, graded_by = row
    return ProductionVerdict(
        ticket_id=ticket_id,
        trace_id=trace_id,
        task_type=task_type,
        start_time_ns=int(start),
        passed=bool(passed),
        graded_at=cast(Any, from_us_opt(graded)),
        domain=domain,
        signature=signature,
        evidence=evidence,
        verdict=None if verdict is None else json.loads(verdict),
        graded_by=graded_by,
    )


class VerdictTable:
    """The store's production verdicts, on one database."""

    def __init__(self, conn: ClickHouseConnection, db: str) -> None:
        self._conn, self._db = conn, db

    def put(self, project: str, verdicts: Sequence[ProductionVerdict]) -> None:
        latest = {v.ticket_id: v for v in verdicts}
        rows = [_values(project, latest[i]) for i in sorted(latest)]
        self._conn.insert("production_verdicts", rows, ("project", *COLUMNS))

    def of(self, project: str, ticket_ids: Sequence[str]) -> dict[str, ProductionVerdict]:
        wanted = sorted(set(ticket_ids))
        found: dict[str, ProductionVerdict] = {}
        for start in range(0, len(wanted), _CHUNK):
            rows = self._conn.query(
                f"SELECT {_SELECT} FROM {self._db}.production_verdicts FINAL"
                " WHERE project = %(p)s AND ticket_id IN %(ids)s",
                {"p": project, "ids": wanted[start : start + _CHUNK]},
            )
            found.update((row[0], _from_row(row)) for row in rows)
        return found

    def listed(
        self,
        project: str,
        *,
        task_type: str | None,
        since_ns: int | None,
        until_ns: int | None,
        limit: int,
        offset: int,
    ) -> list[ProductionVerdict]:
        where = ["project = %(p)s"]
        params: dict[str, Any] = {"p": project, "limit": max(0, limit), "offset": max(0, offset)}
        for column, op, value in (
            ("task_type", "=", task_type),
            ("start_time_ns", ">=", since_ns),
            ("start_time_ns", "<", until_ns),
        ):
            if value is not None:
                name = f"v{len(params)}"
                where.append(f"{column} {op} %({name})s")
                params[name] = min(value, 2**63 - 1) if isinstance(value, int) else value
        rows = self._conn.query(
            f"SELECT {_SELECT} FROM {self._db}.production_verdicts FINAL WHERE {' AND '.join(where)}"
            " ORDER BY start_time_ns DESC, ticket_id LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )
        return [_from_row(r) for r in rows]

    def tickets(
        self,
        project: str,
        verdict: VerdictFilter | None,
        *,
        signature: str | None,
        replays: ReplaysFilter | None,
        ticket_id_prefix: str | None,
        status: StatusCode | None,
        outcome: str | None,
        task_type: str | None,
        since_ns: int | None,
        until_ns: int | None,
        limit: int,
        offset: int,
    ) -> list[TicketRow]:
        where = ["project = %(p)s", "sign = 1", "source = 'production'"]
        params: dict[str, Any] = {"p": project, "limit": max(0, limit), "offset": max(0, offset)}
        if ticket_id_prefix:
            where.append("startsWith(ticket_id, %(prefix)s)")
            params["prefix"] = ticket_id_prefix
        for column, op, value in (
            ("task_type", "=", task_type),
            ("status", "=", status),
            ("outcome", "=", outcome),
            ("start_time_ns", ">=", since_ns),
            ("start_time_ns", "<", until_ns),
        ):
            if value is not None:
                name = f"v{len(params)}"
                where.append(f"{column} {op} %({name})s")
                params[name] = min(value, 2**63 - 1) if isinstance(value, int) else value
        if replays is not None:
            having = {"all_passed": "min(passed) = 1", "some_failed": "min(passed) = 0", "not_replayed": "1"}[replays]
            member = "NOT IN" if replays == "not_replayed" else "IN"
            where.append(
                f"ticket_id {member} (SELECT ticket_id FROM {self._db}.trials FINAL WHERE project = %(p)s AND "
                f"{_USABLE} GROUP BY ticket_id HAVING {having})"
            )
        graded = ["project = %(p)s"]
        if verdict in ("passed", "failed"):
            graded.append("passed" if verdict == "passed" else "NOT passed")
        if signature is not None:
            graded.append("signature = %(signature)s")
            params["signature"] = signature
        if verdict is not None or signature is not None:
            member = "NOT IN" if verdict == "ungraded" else "IN"
            where.append(
                f"ticket_id {member} (SELECT ticket_id FROM {self._db}.production_verdicts FINAL"
                f" WHERE {' AND '.join(graded)})"
            )
        rows = self._conn.query(
            f"SELECT {', '.join(TICKET_COLUMNS)} FROM {self._db}.tickets FINAL WHERE {' AND '.join(where)}"
            " ORDER BY start_time_ns DESC, ticket_id DESC, trace_id DESC LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )
        return [ticket_from_row(r) for r in rows]

    def tallies(self, project: str, ticket_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        wanted = sorted(set(ticket_ids))
        found: dict[str, tuple[int, int]] = {}
        for start in range(0, len(wanted), _CHUNK):
            rows = self._conn.query(
                f"SELECT ticket_id, countIf(passed), count() FROM {self._db}.trials FINAL"
                f" WHERE project = %(p)s AND ticket_id IN %(ids)s AND {_USABLE} GROUP BY ticket_id",
                {"p": project, "ids": wanted[start : start + _CHUNK]},
            )
            found.update((row[0], (int(row[1]), int(row[2]))) for row in rows)
        return found
