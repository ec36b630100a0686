"""The ticket list in ClickHouse (`Store.ticket_page`): filters, sort, total and page in one database's queries."""

from __future__ import annotations

from typing import Any

from passhat.collector.store._ticket_list import TicketFilter, TicketPage
from passhat.collector.store.clickhouse._client import ClickHouseConnection
from passhat.collector.store.clickhouse._rows import COUNTED_BY_AGENT, TICKET_COLUMNS, ticket_from_row

_INT64 = 2**63 - 1


class TicketList:
    """The ticket list's queries over the `tickets`, `production_verdicts` and `trials` tables of one database."""

    def __init__(self, conn: ClickHouseConnection, db: str) -> None:
        self._conn = conn
        self._db = db

    def _verdicts(self, condition: str) -> str:
        return f"(SELECT ticket_id FROM {self._db}.production_verdicts FINAL WHERE project = %(p)s AND {condition})"

    def _where(self, filters: TicketFilter, params: dict[str, Any]) -> list[str]:
        where = ["project = %(p)s", "sign = 1"]
        if filters.empty:
            return [*where, "0"]
        if filters.ticket_id_prefix:
            where.append("startsWith(ticket_id, %(prefix)s)")
            params["prefix"] = filters.ticket_id_prefix
        if filters.search:
            # ASCII case ignored, as SQL's lower() does; position() takes the text literally.
            where.append(
                "(positionCaseInsensitive(ticket_id, %(search)s) > 0"
                " OR positionCaseInsensitive(ifNull(intent, ''), %(search)s) > 0)"
            )
            params["search"] = filters.search
        source = "production" if filters.graded else filters.source
        for column, op, value in (
            ("task_type", "=", filters.task_type),
            ("domain", "=", filters.domain),
            ("source", "=", source),
            ("status", "=", filters.status),
            ("outcome", "=", filters.outcome),
            ("start_time_ns", ">=", filters.since_ns),
            ("start_time_ns", "<", filters.until_ns),
        ):
            if value is not None:
                name = f"v{len(params)}"
                where.append(f"{column} {op} %({name})s")
                params[name] = max(min(value, _INT64), -_INT64 - 1) if isinstance(value, int) else value
        if filters.replays is not None:
            having = {"all_passed": "min(passed) = 1", "some_failed": "min(passed) = 0", "not_replayed": "1"}
            member = "NOT IN" if filters.replays == "not_replayed" else "IN"
            where.append(
                f"ticket_id {member} (SELECT ticket_id FROM {self._db}.trials FINAL WHERE project = %(p)s AND "
                f"{COUNTED_BY_AGENT} GROUP BY ticket_id HAVING {having[filters.replays]})"
            )
        if filters.verdict == "ungraded":
            where.append(f"ticket_id NOT IN {self._verdicts('1')}")
        elif filters.verdict is not None or filters.signature is not None:
            graded = ["1"]
            if filters.verdict is not None:
                graded.append("passed" if filters.verdict == "passed" else "NOT passed")
            if filters.signature is not None:
                graded.append("signature = %(signature)s")
                params["signature"] = filters.signature
            where.append(f"ticket_id IN {self._verdicts(' AND '.join(graded))}")
        return where

    def page(self, project: str, filters: TicketFilter, *, limit: int, offset: int) -> TicketPage:
        params: dict[str, Any] = {"p": project, "limit": max(0, limit), "offset": max(0, offset)}
        conditions = self._where(filters, params)
        where = " AND ".join(conditions)
        # The total without FINAL: a cancelled ticket row has its cancel row (sign -1) beside it, with the same
        # values (the traffic view counts the same way), so the signs of the rows that match sum to the tickets.
        unsigned = " AND ".join(c for c in conditions if c != "sign = 1")
        total = self._conn.query(f"SELECT sum(sign) FROM {self._db}.tickets WHERE {unsigned}", params)
        newest = "start_time_ns DESC, trace_id, ticket_id"
        if filters.sort == "task_type":
            order = f"task_type, {newest}"
        elif filters.sort == "verdict":  # failed production verdicts first, then none, then passed
            failed, passed = self._verdicts("NOT passed"), self._verdicts("passed")
            order = f"multiIf(ticket_id IN {failed}, 0, ticket_id IN {passed}, 2, 1), {newest}"
        else:
            order = newest
        # The page's keys first (FINAL sorts a million rows' few columns, not every column), then its rows by key.
        keys = self._conn.query(
            f"SELECT ticket_hash, trace_id, ticket_id FROM {self._db}.tickets FINAL WHERE {where}"
            f" ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )
        if not keys:
            return TicketPage([], int(total[0][0] or 0) if total else 0)
        # Their rows by the table's index (its ticket hash), every version, collapsed here as FINAL collapses them:
        # a version whose cancel row is there is gone, and the newest version left is the ticket's row.
        rows = self._conn.query(
            f"SELECT ticket_hash, trace_id, ticket_id, sign, version, {', '.join(TICKET_COLUMNS)}"
            f" FROM {self._db}.tickets WHERE project = %(p)s AND ticket_hash IN %(hashes)s",
            {"p": project, "hashes": sorted({key[0] for key in keys})},
        )
        signs: dict[tuple[Any, ...], int] = {}
        for row in rows:
            signs[tuple(row[:3]), row[4]] = signs.get((tuple(row[:3]), row[4]), 0) + row[3]
        current: dict[tuple[Any, ...], tuple[int, Any]] = {}
        for row in rows:
            key = tuple(row[:3])
            if row[3] == 1 and signs[key, row[4]] > 0 and (key not in current or row[4] > current[key][0]):
                current[key] = (row[4], row[5:])
        found = [ticket_from_row(current[key][1]) for key in map(tuple, keys) if key in current]
        return TicketPage(found, int(total[0][0] or 0) if total else 0)
