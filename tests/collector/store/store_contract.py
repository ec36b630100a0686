"""The contract every `Store` implementation passes: subclass `StoreContract` and provide a `store` fixture
that yields a freshly migrated, empty store (see test_sql_store.py).

Times are built from now, so the tests hold on any day and in stores with TTLs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import itertools
import os
import pickle
import time
from typing import Any

import pytest

from passhat.checks import RowChange
from passhat.collector.store import (
    AlertEvent,
    ApiKey,
    NormalizedSpan,
    ReplayRun,
    SpanBatch,
    SpanEvent,
    StateWriteRow,
    Store,
    StoreError,
    TicketRow,
    ToolCallRow,
    TrialRow,
    VerdictText,
    tallies_of_trials,
    verdict_text,
)
from passhat.sandbox import TrialDetails

NS = 1_000_000_000
_counter = itertools.count(1)


def new_trace_id() -> str:
    return os.urandom(16).hex()


def new_span_id() -> str:
    return os.urandom(8).hex()


def ticket_hash(ticket_id: str) -> int:
    return int.from_bytes(hashlib.sha256(ticket_id.encode("utf-8")).digest()[:8], "big")


def now_ns() -> int:
    return time.time_ns()


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def ticket_span(
    ticket_id: str,
    *,
    task_type: str = "refund",
    source: str = "production",
    trace_id: str | None = None,
    span_id: str | None = None,
    start_ns: int | None = None,
    intent: dict[str, Any] | None = None,
    outcome: str | None = "resolved",
    run_id: str | None = None,
    attempt: int | None = None,
) -> NormalizedSpan:
    trace_id = trace_id or new_trace_id()
    span_id = span_id or new_span_id()
    start = start_ns if start_ns is not None else now_ns() - 5 * NS
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        "passhat.ticket.id": ticket_id,
        "passhat.task_type": task_type,
        "passhat.source": source,
    }
    return NormalizedSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=None,
        name="invoke_agent support",
        start_time_ns=start,
        end_time_ns=start + 2 * NS,
        operation="invoke_agent",
        kind=1,
        status="ok",
        service_name="shop-agent",
        scope_name="passhat",
        attributes=attributes,
        resource_attributes={"service.name": "shop-agent"},
        events=[
            SpanEvent("passhat.customer_message", start + 1000, {"passhat.message.content": "hi"}),
        ],
        ticket=TicketRow(
            ticket_id=ticket_id,
            trace_id=trace_id,
            span_id=span_id,
            task_type=task_type,
            source=source,  # type: ignore[arg-type]
            start_time_ns=start,
            end_time_ns=start + 2 * NS,
            ticket_hash=ticket_hash(ticket_id),
            status="ok",
            agent_name="support",
            conversation_id=f"conv-{ticket_id}",
            intent=intent if intent is not None else {"order_id": "O-1", "items": [1, 2]},
            domain="retail",
            outcome=outcome,
            replay_run_id=run_id,
            trial_attempt=attempt,
            service_name="shop-agent",
        ),
    )


def tool_span(
    parent: NormalizedSpan,
    tool_name: str = "get_order",
    *,
    outcome: str = "ok",
    writes: int = 0,
    reads: int = 0,
    offset_ns: int = 100_000,
) -> NormalizedSpan:
    span_id = new_span_id()
    start = parent.start_time_ns + offset_ns
    state_rows: list[StateWriteRow] = []
    events: list[SpanEvent] = []
    for seq in range(reads):
        row = {"id": seq, "status": "delivered", "total": 12.5}
        events.append(SpanEvent("passhat.state_read", start + seq, {"passhat.state_read.table": "orders"}))
        state_rows.append(
            StateWriteRow(
                trace_id=parent.trace_id,
                span_id=span_id,
                seq=seq,
                time_ns=start + seq,
                table="orders",
                key={"id": seq},
                op="read",
                before=row,
            )
        )
    for i in range(writes):
        seq = reads + i
        events.append(SpanEvent("passhat.state_write", start + seq, {"passhat.state_write.table": "orders"}))
        state_rows.append(
            StateWriteRow(
                trace_id=parent.trace_id,
                span_id=span_id,
                seq=seq,
                time_ns=start + seq,
                table="orders",
                key={"id": i},
                op="update",
                before={"status": "delivered"},
                after={"status": "refunded"},
                changed=["status"],
                rowcount=1,
            )
        )
    return NormalizedSpan(
        trace_id=parent.trace_id,
        span_id=span_id,
        parent_span_id=parent.span_id,
        name=f"execute_tool {tool_name}",
        start_time_ns=start,
        end_time_ns=start + 1000,
        operation="execute_tool",
        status="error" if outcome == "error" else "ok",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool_name},
        events=events,
        tool_call=ToolCallRow(
            trace_id=parent.trace_id,
            span_id=span_id,
            parent_span_id=parent.span_id,
            tool_name=tool_name,
            outcome=outcome,  # type: ignore[arg-type]
            start_time_ns=start,
            end_time_ns=start + 1000,
            call_id=f"toolu_{next(_counter)}",
            tool_type="function",
            error_type="not_found" if outcome == "error" else None,
            arguments='{"order_id": "O-1"}',
            result=None,
        ),
        state_writes=state_rows,
    )


def api_key(project: str, n: int = 1) -> ApiKey:
    prefix = f"phk_{os.urandom(4).hex()}"
    return ApiKey(
        prefix=prefix,
        project=project,
        key_hash=hashlib.sha256(f"{prefix}-{n}".encode()).hexdigest(),
        created_at=utcnow(),
        label=f"key {n}",
    )


class StoreContract:
    """Behaviour every Store must have. Needs a `store` fixture: a migrated, empty store."""

    # --- lifecycle ---------------------------------------------------------------------------------
    def test_migrate_is_idempotent_and_reports_the_version(self, store: Store) -> None:
        version = store.schema_version()
        assert version >= 1
        assert store.migrate() == version
        assert store.schema_version() == version
        assert store.ping()

    # --- projects and keys ---------------------------------------------------------------------------
    def test_ensure_project_creates_once(self, store: Store) -> None:
        first = store.ensure_project("shop")
        again = store.ensure_project("shop")
        assert first.name == again.name == "shop"
        assert first.created_at == again.created_at
        assert store.get_project("nope") is None
        store.ensure_project("bank")
        assert [p.name for p in store.list_projects()] == ["bank", "shop"]

    def test_api_key_is_found_by_hash_listed_and_revoked(self, store: Store) -> None:
        store.ensure_project("shop")
        store.ensure_project("bank")
        key = api_key("shop")
        store.add_api_key(key)
        store.add_api_key(api_key("bank", 2))
        found = store.find_api_key(key.key_hash)
        assert found is not None
        assert (found.prefix, found.project, found.label, found.active) == (key.prefix, "shop", "key 1", True)
        assert store.find_api_key("0" * 64) is None
        assert [k.prefix for k in store.list_api_keys("shop")] == [key.prefix]
        assert len(store.list_api_keys()) == 2
        assert store.revoke_api_key(key.prefix) is True
        revoked = store.find_api_key(key.key_hash)
        assert revoked is not None and not revoked.active
        assert store.revoke_api_key(key.prefix) is False
        assert store.revoke_api_key("phk_unknown") is False

    def test_api_key_prefix_is_unique(self, store: Store) -> None:
        store.ensure_project("shop")
        key = api_key("shop")
        store.add_api_key(key)
        clash = ApiKey(key.prefix, "shop", "f" * 64, utcnow())
        with pytest.raises(StoreError):
            store.add_api_key(clash)

    # --- writes --------------------------------------------------------------------------------------
    def test_write_batch_accepts_new_spans_and_counts_duplicates(self, store: Store) -> None:
        store.ensure_project("shop")
        root = ticket_span("T-1")
        spans = [root, *(tool_span(root, f"tool_{i}") for i in range(3))]
        result = store.write_batch("shop", spans)
        assert (result.accepted, result.duplicates) == (4, 0)
        again = store.write_batch("shop", [*spans, tool_span(root, "late")])
        assert (again.accepted, again.duplicates) == (1, 4)
        assert store.count_spans("shop") == 5

    def test_duplicates_within_one_batch_are_counted_once(self, store: Store) -> None:
        store.ensure_project("shop")
        root = ticket_span("T-1")
        result = store.write_batch("shop", [root, root, root])
        assert (result.accepted, result.duplicates) == (1, 2)
        assert store.count_spans("shop") == 1

    def test_write_batches_returns_one_result_per_batch(self, store: Store) -> None:
        store.ensure_project("shop")
        store.ensure_project("bank")
        a, b = ticket_span("A"), ticket_span("B")
        results = store.write_batches([SpanBatch("shop", [a]), SpanBatch("bank", [b]), SpanBatch("shop", [a])])
        assert [(r.accepted, r.duplicates) for r in results] == [(1, 0), (1, 0), (0, 1)]
        assert store.write_batches([]) == []
        assert store.write_batch("shop", []).accepted == 0

    def test_redelivery_adds_no_derived_rows(self, store: Store) -> None:
        store.ensure_project("shop")
        root = ticket_span("T-1")
        tool = tool_span(root, "refund", writes=2, reads=1)
        for _ in range(3):
            store.write_batch("shop", [tool, root])
        detail = store.get_ticket("shop", "T-1")
        assert detail is not None
        assert len(detail.attempts) == 1
        assert len(detail.tool_calls) == 1
        assert len(detail.state_writes) == 2
        assert len(detail.state_reads) == 1
        assert [t.tickets for t in store.traffic("shop", days=1)] == [1]

    def test_rows_built_in_another_process_are_stored_as_their_spans_are(self, store: Store) -> None:
        """A replay's workers build the store's rows of a trial's spans (`row_builder`, pickled there and back);
        `write_built` stores them as `write_batch` stores the spans: the same trace, ticket and traffic, and a
        re-delivery or a repeat within the call counted as duplicates, adding nothing."""
        build = store.row_builder()
        if build is None:  # this store takes spans only, and says so
            with pytest.raises(NotImplementedError, match="write_batch"):
                store.write_built("shop", [])
            return
        build = pickle.loads(pickle.dumps(build))
        for project in ("spans", "rows"):
            store.ensure_project(project)
        one, two = ticket_span("T-1"), ticket_span("T-2")
        trial_one = [tool_span(one, "refund", writes=2, reads=1), one, tool_span(one, "lookup")]
        trial_two = [two, tool_span(two, "refund", writes=1)]
        assert store.write_batch("spans", [*trial_one, *trial_two]).accepted == 5
        parts = [pickle.loads(pickle.dumps(build("rows", trial))) for trial in (trial_one, trial_two)]
        result = store.write_built("rows", parts)
        assert (result.accepted, result.duplicates) == (5, 0)
        for root in (one, two):
            assert store.get_trace("rows", root.trace_id) == store.get_trace("spans", root.trace_id)
            rows, spans = (
                store.get_ticket("rows", root.ticket.ticket_id),
                store.get_ticket("spans", root.ticket.ticket_id),
            )
            assert rows is not None and spans is not None
            assert (rows.attempts, rows.tool_calls, rows.state_writes, rows.state_reads) == (
                spans.attempts, spans.tool_calls, spans.state_writes, spans.state_reads
            )  # fmt: skip
        assert [t.tickets for t in store.traffic("rows", days=1)] == [2]
        again = store.write_built("rows", [*parts, build("rows", [tool_span(one, "late")])])
        assert (again.accepted, again.duplicates) == (1, 5)
        twice = build("rows", [ticket_span("T-3")])
        assert (store.write_built("rows", [twice, twice]).accepted, store.count_spans("rows")) == (1, 7)
        assert [t.tickets for t in store.traffic("rows", days=1)] == [3]
        detail = store.get_ticket("rows", "T-1")
        assert detail is not None and len(detail.tool_calls) == 3 and len(detail.state_writes) == 2

    def test_rows_built_for_another_project_are_refused(self, store: Store) -> None:
        build = store.row_builder()
        if build is None:
            assert store.row_builder() is None  # nothing is built elsewhere for this store
            return
        for project in ("shop", "bank"):
            store.ensure_project(project)
        with pytest.raises(ValueError, match="another project"):
            store.write_built("shop", [build("bank", [ticket_span("T-1")])])
        with pytest.raises(TypeError, match="row_builder"):
            store.write_built("shop", [[ticket_span("T-1")]])
        assert store.count_spans("shop") == store.count_spans("bank") == 0

    def test_same_ids_in_two_projects_are_both_kept(self, store: Store) -> None:
        store.ensure_project("shop")
        store.ensure_project("bank")
        root = ticket_span("T-1")
        assert store.write_batch("shop", [root]).accepted == 1
        assert store.write_batch("bank", [root]).accepted == 1

    def test_trace_round_trips_attributes_events_and_derived_rows(self, store: Store) -> None:
        store.ensure_project("shop")
        root = ticket_span("T-ü", intent={"order": "Ø-9", "n": 3, "nested": {"a": [1, None, True]}})
        tool = tool_span(root, "refund", writes=1, outcome="error")
        store.write_batch("shop", [tool, root])
        spans = store.get_trace("shop", root.trace_id)
        assert [s.span_id for s in spans] == [root.span_id, tool.span_id]
        got_root, got_tool = spans
        assert got_root.attributes == root.attributes
        assert got_root.resource_attributes == root.resource_attributes
        assert got_root.events == root.events
        assert (got_root.name, got_root.status, got_root.kind, got_root.operation) == (
            root.name,
            "ok",
            1,
            "invoke_agent",
        )
        assert (got_root.start_time_ns, got_root.end_time_ns) == (root.start_time_ns, root.end_time_ns)
        assert got_root.ticket == root.ticket
        assert got_tool.parent_span_id == root.span_id
        assert got_tool.tool_call == tool.tool_call
        assert got_tool.state_writes == tool.state_writes
        assert store.get_trace("shop", new_trace_id()) == []

    def test_nul_characters_in_text_never_fail_a_write(self, store: Store) -> None:
        """OTLP strings may hold U+0000, which PostgreSQL's text cannot: such a span is stored (a NUL outside
        JSON becomes U+FFFD there), and the rest of its batch with it."""
        store.ensure_project("shop")
        root = ticket_span("T-\x00nul", task_type="refund\x00")
        root.name = "invoke_agent sup\x00port"
        root.attributes["passhat.note"] = "a\x00b"
        root.events.append(SpanEvent("odd\x00event", root.start_time_ns + 5, {"k\x00": "v\x00"}))
        tool = tool_span(root, "re\x00fund", writes=1)
        other = ticket_span("T-plain")
        assert store.write_batch("shop", [root, tool, other]).accepted == 3
        spans = store.get_trace("shop", root.trace_id)
        assert [s.span_id for s in spans] == [root.span_id, tool.span_id]
        assert spans[0].attributes["passhat.note"] == "a\x00b"  # JSON keeps it everywhere
        assert spans[0].events[-1].attributes == {"k\x00": "v\x00"}
        assert spans[0].name in (root.name, root.name.replace("\x00", "\ufffd"))
        tickets = {t.ticket_id.replace("\ufffd", "\x00") for t in store.list_tickets("shop")}
        assert tickets == {"T-\x00nul", "T-plain"}
        detail = store.get_ticket("shop", "T-\x00nul")  # a lookup by the id as sent finds it
        assert detail is not None and [s.span_id for s in detail.spans] == [root.span_id, tool.span_id]

    def test_extreme_ticket_hash_round_trips(self, store: Store) -> None:
        store.ensure_project("shop")
        root = ticket_span("T-max")
        assert root.ticket is not None
        ticket = TicketRow(**{**_fields(root.ticket), "ticket_hash": 2**64 - 1})
        low = ticket_span("T-min")
        assert low.ticket is not None
        low_ticket = TicketRow(**{**_fields(low.ticket), "ticket_hash": 0})
        store.write_batch("shop", [_with_ticket(root, ticket), _with_ticket(low, low_ticket)])
        rows = {t.ticket_id: t.ticket_hash for t in store.list_tickets("shop")}
        assert rows == {"T-max": 2**64 - 1, "T-min": 0}
        assert [t.ticket_id for t in store.list_tickets("shop", max_hash=2**63)] == ["T-min"]

    # --- tickets -------------------------------------------------------------------------------------
    def test_list_tickets_filters_and_orders_newest_first(self, store: Store) -> None:
        store.ensure_project("shop")
        base = now_ns() - 3600 * NS
        spans = [
            ticket_span("T-1", task_type="refund", start_ns=base),
            ticket_span("T-2", task_type="exchange", start_ns=base + 10 * NS),
            ticket_span("T-3", task_type="refund", start_ns=base + 20 * NS),
            ticket_span("T-3", task_type="refund", source="sandbox", start_ns=base + 30 * NS, run_id="r1"),
        ]
        store.write_batch("shop", spans)
        ids = lambda rows: [(t.ticket_id, t.source) for t in rows]  # noqa: E731
        assert ids(store.list_tickets("shop")) == [
            ("T-3", "sandbox"),
            ("T-3", "production"),
            ("T-2", "production"),
            ("T-1", "production"),
        ]
        assert ids(store.list_tickets("shop", task_type="refund", source="production")) == [
            ("T-3", "production"),
            ("T-1", "production"),
        ]
        assert ids(store.list_tickets("shop", since_ns=base + 10 * NS, until_ns=base + 30 * NS)) == [
            ("T-3", "production"),
            ("T-2", "production"),
        ]
        assert ids(store.list_tickets("shop", limit=2, offset=1)) == [
            ("T-3", "production"),
            ("T-2", "production"),
        ]
        sandbox = store.list_tickets("shop", source="sandbox")
        assert sandbox[0].replay_run_id == "r1"

    def test_list_tickets_filters_by_outcome(self, store: Store) -> None:
        store.ensure_project("shop")
        resolved = ticket_span("T-11", outcome="resolved")
        escalated = ticket_span("T-12", outcome="escalated")
        store.write_batch("shop", [resolved, escalated])
        assert [t.ticket_id for t in store.list_tickets("shop", outcome="escalated")] == ["T-12"]
        assert {t.ticket_id for t in store.list_tickets("shop")} == {"T-11", "T-12"}

    def test_list_tickets_of_one_replay_run(self, store: Store) -> None:
        store.ensure_project("shop")
        base = now_ns() - 3600 * NS
        store.write_batch(
            "shop",
            [
                ticket_span("T-1", start_ns=base),
                ticket_span("T-1#0", source="sandbox", start_ns=base + NS, run_id="r1", attempt=0),
                ticket_span("T-1#1", source="sandbox", start_ns=base + 2 * NS, run_id="r1", attempt=1),
                ticket_span("T-1#0", source="sandbox", start_ns=base + 3 * NS, run_id="r2", attempt=0),
            ],
        )
        ids = lambda rows: [(t.ticket_id, t.replay_run_id) for t in rows]  # noqa: E731
        assert ids(store.list_tickets("shop", source="sandbox", replay_run_id="r1")) == [
            ("T-1#1", "r1"),
            ("T-1#0", "r1"),
        ]
        assert ids(store.list_tickets("shop", replay_run_id="r2")) == [("T-1#0", "r2")]
        assert store.list_tickets("shop", replay_run_id="r3") == []

    def test_ticket_with_its_attempts_tool_calls_and_writes(self, store: Store) -> None:
        store.ensure_project("shop")
        prod = ticket_span("T-9")
        trial = ticket_span("T-9", source="sandbox", start_ns=prod.start_time_ns + 60 * NS, run_id="r", attempt=1)
        prod_tools = [
            tool_span(prod, "find_order", reads=2, offset_ns=10),
            tool_span(prod, "refund", writes=1),
        ]
        trial_tools = [tool_span(trial, "refund", writes=3)]
        store.write_batch("shop", [*prod_tools, prod, *trial_tools, trial, ticket_span("other")])
        detail = store.get_ticket("shop", "T-9")
        assert detail is not None
        assert detail.ticket_id == "T-9"
        assert [a.source for a in detail.attempts] == ["production", "sandbox"]
        assert len(detail.spans) == 5
        assert [c.tool_name for c in detail.tool_calls] == ["find_order", "refund", "refund"]
        assert len(detail.state_writes) == 4
        assert len(detail.state_reads) == 2
        assert detail.state_reads[0].before == {"id": 0, "status": "delivered", "total": 12.5}
        prod_only = store.get_ticket("shop", "T-9", source="production")
        assert prod_only is not None
        assert len(prod_only.attempts) == 1 and len(prod_only.tool_calls) == 2 and len(prod_only.spans) == 3
        assert store.get_ticket("shop", "T-404") is None
        assert store.get_ticket("shop", "T-9", source="sandbox") is not None

    def test_outermost_agent_span_wins_within_a_trace(self, store: Store) -> None:
        store.ensure_project("shop")
        outer = ticket_span("T-5", task_type="outer")
        inner = ticket_span("T-5", task_type="inner", trace_id=outer.trace_id, start_ns=outer.start_time_ns + 1000)
        store.write_batch("shop", [inner])
        store.write_batch("shop", [outer])
        rows = store.list_tickets("shop")
        assert [(t.span_id, t.task_type) for t in rows] == [(outer.span_id, "outer")]
        assert [(t.task_type, t.tickets) for t in store.traffic("shop", days=1)] == [("outer", 1)]

    @pytest.mark.parametrize("together", [False, True], ids=["inner first", "one batch"])
    def test_one_ticket_per_trace_the_named_ticket_over_a_nested_framework_agent(
        self, store: Store, together: bool
    ) -> None:
        store.ensure_project("shop")
        outer = ticket_span("T-6", task_type="refund")
        # A framework's nested agent span names no ticket: its ticket id would be the trace id.
        inner = ticket_span(
            outer.trace_id, task_type="agent", trace_id=outer.trace_id, start_ns=outer.start_time_ns + 1000
        )
        if together:
            store.write_batch("shop", [inner, outer])
        else:
            store.write_batch("shop", [inner])
            store.write_batch("shop", [outer])
        assert [(t.ticket_id, t.task_type) for t in store.list_tickets("shop")] == [("T-6", "refund")]
        assert [(t.task_type, t.tickets) for t in store.traffic("shop", days=1)] == [("refund", 1)]

    def test_a_named_ticket_ranks_before_an_earlier_unnamed_agent_root(self, store: Store) -> None:
        store.ensure_project("shop")
        named = ticket_span("T-7", task_type="refund")
        unnamed = ticket_span(
            named.trace_id, task_type="workflow", trace_id=named.trace_id, start_ns=named.start_time_ns - 1000
        )
        store.write_batch("shop", [named])
        store.write_batch("shop", [unnamed])
        assert [t.ticket_id for t in store.list_tickets("shop")] == ["T-7"]
        assert [(t.task_type, t.tickets) for t in store.traffic("shop", days=1)] == [("refund", 1)]

    # --- traffic -------------------------------------------------------------------------------------
    def test_traffic_counts_tickets_per_task_type_per_day(self, store: Store) -> None:
        store.ensure_project("shop")
        today = dt.datetime.now(dt.UTC).date()
        noon = dt.datetime.combine(today, dt.time(12), tzinfo=dt.UTC)
        day_ns = 86400 * NS
        noon_ns = int(noon.timestamp()) * NS
        spans = [
            ticket_span("a", task_type="refund", start_ns=noon_ns),
            ticket_span("b", task_type="refund", start_ns=noon_ns + NS),
            ticket_span("c", task_type="exchange", start_ns=noon_ns),
            ticket_span("d", task_type="refund", start_ns=noon_ns - day_ns),
            ticket_span("e", task_type="refund", start_ns=noon_ns - 5 * day_ns),
            ticket_span("f", task_type="refund", source="sandbox", start_ns=noon_ns),
        ]
        store.write_batch("shop", spans)
        got = [(t.day, t.task_type, t.tickets) for t in store.traffic("shop", days=2, today=today)]
        yesterday = today - dt.timedelta(days=1)
        assert got == [(yesterday, "refund", 1), (today, "exchange", 1), (today, "refund", 2)]
        week = store.traffic("shop", days=7, today=today)
        assert sum(t.tickets for t in week) == 5
        sandbox = store.traffic("shop", days=1, source="sandbox", today=today)
        assert [(t.task_type, t.tickets, t.source) for t in sandbox] == [("refund", 1, "sandbox")]

    # --- isolation -----------------------------------------------------------------------------------
    def test_projects_never_see_each_others_data(self, store: Store) -> None:
        store.ensure_project("shop")
        store.ensure_project("bank")
        root = ticket_span("T-1")
        store.write_batch("shop", [root, tool_span(root, writes=1)])
        store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=4))
        store.add_alert_event("shop", AlertEvent("al-1", "drop", utcnow(), "pass^k fell"))
        assert store.count_spans("bank") == 0
        assert store.list_tickets("bank") == []
        assert store.get_ticket("bank", "T-1") is None
        assert store.get_trace("bank", root.trace_id) == []
        assert store.traffic("bank", days=1) == []
        assert store.get_replay_run("bank", "run-1") is None
        assert store.list_replay_runs("bank") == []
        assert store.list_alert_events("bank") == []
        with pytest.raises(StoreError):
            store.add_trials("bank", [_trial("run-1", "T-1", 0)])

    # --- replay runs and trials ---------------------------------------------------------------------
    def test_replay_run_lifecycle(self, store: Store) -> None:
        store.ensure_project("shop")
        created = utcnow() - dt.timedelta(minutes=5)
        run = ReplayRun("run-1", created, k=3, params={"period": "2026-W48", "task_types": ["refund"]})
        store.create_replay_run("shop", run)
        store.create_replay_run("shop", ReplayRun("run-2", created + dt.timedelta(minutes=1), k=5))
        with pytest.raises(StoreError):
            store.create_replay_run("shop", run)
        got = store.get_replay_run("shop", "run-1")
        assert got == run
        trials = [_trial("run-1", t, a, passed=(a != 1)) for t in ("T-2", "T-1") for a in range(3)]
        store.add_trials("shop", trials[:4])
        store.add_trials("shop", trials[4:])
        listed = store.list_trials("shop", "run-1")
        assert [(t.ticket_id, t.attempt) for t in listed] == [(t, a) for t in ("T-1", "T-2") for a in range(3)]
        assert listed[0] == trials[3]
        assert store.list_trials("shop", "run-2") == []
        assert [t.attempt for t in store.list_trials("shop", "run-1", ticket_id="T-2")] == [0, 1, 2]
        summary = {"refund": {"tickets": 2, "pass_hat_k": 0.0}}
        store.finish_replay_run("shop", "run-1", summary=summary, at=created + dt.timedelta(minutes=2))
        done = store.get_replay_run("shop", "run-1")
        assert done is not None
        assert (done.status, done.summary, done.finished_at) == (
            "finished",
            summary,
            created + dt.timedelta(minutes=2),
        )
        store.finish_replay_run("shop", "run-2", status="failed", error="sandbox crashed")
        failed = store.get_replay_run("shop", "run-2")
        assert failed is not None and (failed.status, failed.error) == ("failed", "sandbox crashed")
        assert failed.finished_at is not None
        assert [r.run_id for r in store.list_replay_runs("shop")] == ["run-2", "run-1"]
        assert [r.run_id for r in store.list_replay_runs("shop", limit=1)] == ["run-2"]
        with pytest.raises(StoreError):
            store.finish_replay_run("shop", "run-404")
        with pytest.raises(StoreError):
            store.add_trials("shop", [_trial("run-404", "T-1", 0)])

    def test_ticket_tallies_count_each_ticket_as_its_trials_do(self, store: Store) -> None:
        store.ensure_project("shop")
        store.ensure_project("bank")
        store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=4))
        store.create_replay_run("bank", ReplayRun("run-1", utcnow(), k=4))
        trials = [
            *[_trial("run-1", "T-1", a, passed=a % 2 == 0) for a in range(4)],
            *[_trial("run-1", "T-2", a) for a in (0, 2, 3)],
            dataclasses.replace(_trial("run-1", "T-2", 1, passed=False), infra_error="ConnectionError: refused"),
            dataclasses.replace(
                _trial("run-1", "T-3", 0, passed=False), task_type="exchange", simulator_error="customer broke"
            ),
            dataclasses.replace(_trial("run-1", "T-4", 70, passed=True), task_type="exchange"),  # beyond 62 bits
            dataclasses.replace(_trial("run-1", "T-4", 3, passed=False), task_type="exchange", failure_label="other"),
        ]
        store.add_trials("shop", trials)
        store.add_trials("bank", [_trial("run-1", "T-1", 0, passed=False)])
        tallies = store.ticket_tallies("shop", "run-1")
        assert tallies == tallies_of_trials(trials)
        by_id = {t.ticket_id: t for t in tallies}
        assert (by_id["T-1"].trials, by_id["T-1"].passes, by_id["T-1"].signatures) == (4, 2, {"wrong_entity": 2})
        assert (by_id["T-2"].trials, by_id["T-2"].harness_errors, by_id["T-2"].passes_in_first(2)) == (3, 1, 2)
        assert (by_id["T-3"].trials, by_id["T-3"].harness_errors) == (0, 1)
        assert by_id["T-4"].attempts == (1 << 70) | (1 << 3)
        assert (by_id["T-4"].passes_in_first(1), by_id["T-4"].passes_in_first(2)) == (0, 1)
        assert [t.ticket_id for t in store.ticket_tallies("bank", "run-1")] == ["T-1"]
        assert store.ticket_tallies("shop", "run-404") == []

    def test_one_task_types_tallies_and_the_trials_the_harness_broke(self, store: Store) -> None:
        """What a task type's page and a run's page read: that task type's tallies (the same as the run's, chosen),
        before and after the run's tallies are kept; the trials the harness broke, by their columns only."""
        store.ensure_project("shop")
        store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=2))
        trials = [
            *[_trial("run-1", "T-1", a, passed=a == 0) for a in range(2)],
            dataclasses.replace(_trial("run-1", "T-2", 0, passed=False), infra_error="ConnectionError: refused"),
            dataclasses.replace(_trial("run-1", "T-2", 1), task_type="refund"),
            dataclasses.replace(
                _trial("run-1", "T-3", 0, passed=False), task_type="exchange", simulator_error="customer broke"
            ),
            dataclasses.replace(
                _trial("run-1", "T-3", 1, passed=False), task_type="exchange", failure_label="simulator_error"
            ),
            dataclasses.replace(_trial("run-1", "T-4", 0), task_type="exchange"),
        ]
        store.add_trials("shop", trials)
        for finished in (False, True):
            if finished:
                store.finish_replay_run("shop", "run-1")
            whole = store.ticket_tallies("shop", "run-1")
            for task_type in ("refund", "exchange"):
                chosen = store.ticket_tallies("shop", "run-1", task_type=task_type)
                assert chosen == [t for t in whole if t.task_type == task_type] and chosen
            assert store.ticket_tallies("shop", "run-1", task_type="no such type") == []
            assert store.ticket_tallies("shop", "run-1") == whole  # nothing kept twice, nothing lost
        broken = store.harness_trials("shop", "run-1")
        assert [(t.ticket_id, t.attempt) for t in broken] == [("T-2", 0), ("T-3", 0), ("T-3", 1)]
        assert [
            (t.ticket_id, t.attempt, t.failure_label, t.failure_evidence, t.simulator_error, t.infra_error)
            for t in store.list_trials("shop", "run-1", harness_only=True)
        ] == [
            (t.ticket_id, t.attempt, t.failure_label, t.failure_evidence, t.simulator_error, t.infra_error)
            for t in broken
        ]
        assert broken[0].infra_error == "ConnectionError: refused" and broken[2].failure_label == "simulator_error"
        assert store.harness_trials("shop", "run-404") == []

    def test_a_finished_run_counts_trials_added_after_it_finished(self, store: Store) -> None:
        store.ensure_project("shop")
        store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=2))
        store.add_trials("shop", [_trial("run-1", "T-1", a) for a in range(2)])
        store.finish_replay_run("shop", "run-1")
        first = store.ticket_tallies("shop", "run-1")
        assert store.ticket_tallies("shop", "run-1") == first  # read again (kept, where the store keeps them)
        store.add_trials("shop", [_trial("run-1", "T-1", 2, passed=False), _trial("run-1", "T-2", 0)])
        again = {t.ticket_id: (t.trials, t.passes) for t in store.ticket_tallies("shop", "run-1")}
        assert again == {"T-1": (3, 2), "T-2": (1, 1)}

    def test_a_finished_run_keeps_figures_only_for_the_trials_they_were_computed_from(self, store: Store) -> None:
        store.ensure_project("shop")
        store.ensure_project("bank")
        store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=2))
        store.create_replay_run("bank", ReplayRun("run-1", utcnow(), k=2))
        store.add_trials("shop", [_trial("run-1", "T-1", a) for a in range(2)])
        assert not store.keep_run_figures("shop", "run-1", trials=2, body="running")  # not finished: not kept
        assert store.kept_run_figures("shop", "run-1") is None
        store.finish_replay_run("shop", "run-1")
        assert not store.keep_run_figures("shop", "run-1", trials=3, body="stale")  # counted from other trials
        assert store.kept_run_figures("shop", "run-1") is None
        assert store.keep_run_figures("shop", "run-1", trials=2, body="figures 1")
        assert store.keep_run_figures("shop", "run-1", trials=2, body="figures 2")  # the newest wins
        assert store.kept_run_figures("shop", "run-1") == "figures 2"
        assert store.kept_run_figures("bank", "run-1") is None
        store.add_trials("shop", [_trial("run-1", "T-2", 0)])  # trials added to the finished run: dropped
        assert store.kept_run_figures("shop", "run-1") is None
        assert store.keep_run_figures("shop", "run-1", trials=3, body="figures 3")
        assert store.kept_run_figures("shop", "run-1") == "figures 3"
        store.finish_replay_run("shop", "run-1")  # finished again (resumed): computed again
        assert store.kept_run_figures("shop", "run-1") is None
        assert store.keep_run_figures("shop", "run-1", trials=3, body="figures 4")
        store.finish_replay_run("shop", "run-1", status="failed", error="resumed and broke")
        assert store.kept_run_figures("shop", "run-1") is None
        assert not store.keep_run_figures("shop", "run-404", trials=0, body="none")
        assert store.kept_run_figures("shop", "run-404") is None

    def test_a_batch_of_twenty_thousand_trials_is_written_whole(self, store: Store) -> None:
        store.ensure_project("shop")
        store.create_replay_run("shop", ReplayRun("big", utcnow(), k=20))
        template = _trial("big", "T-0", 0)
        trials = [
            dataclasses.replace(template, ticket_id=f"T-{i // 20:05d}", attempt=i % 20, passed=i % 3 != 0)
            for i in range(20_000)
        ]
        store.add_trials("shop", trials)
        tallies = store.ticket_tallies("shop", "big")
        assert (len(tallies), sum(t.trials for t in tallies)) == (1_000, 20_000)
        assert sum(t.passes for t in tallies) == sum(t.passed for t in trials)
        with pytest.raises(StoreError):
            store.add_trials("shop", trials[-5:])

    # --- alerts --------------------------------------------------------------------------------------
    def test_alert_events_are_listed_newest_first_with_filters(self, store: Store) -> None:
        store.ensure_project("shop")
        t0 = utcnow() - dt.timedelta(hours=3)
        events = [
            AlertEvent("a1", "drop", t0, "refund pass^k fell", task_type="refund", payload={"from": 0.8}),
            AlertEvent("a2", "threshold", t0 + dt.timedelta(hours=1), "low", deliveries={"slack": "ok"}),
            AlertEvent("a3", "drop", t0 + dt.timedelta(hours=2), "again", severity="critical"),
        ]
        for event in events:
            store.add_alert_event("shop", event)
        assert store.list_alert_events("shop") == list(reversed(events))
        assert [e.alert_id for e in store.list_alert_events("shop", rule="drop")] == ["a3", "a1"]
        since = t0 + dt.timedelta(minutes=30)
        assert [e.alert_id for e in store.list_alert_events("shop", since=since)] == ["a3", "a2"]
        assert [e.alert_id for e in store.list_alert_events("shop", limit=1)] == ["a3"]

    # --- queries of the web UI -----------------------------------------------------------------------
    def test_search_tickets_by_id_prefix_status_and_outcome(self, store: Store) -> None:
        store.ensure_project("shop")
        base = now_ns() - 3600 * NS
        failed = ticket_span("T-12", start_ns=base + 10 * NS, outcome="escalated")
        failed.status = "error"
        assert failed.ticket is not None
        failed.ticket.status = "error"
        store.write_batch(
            "shop",
            [
                ticket_span("T-1", start_ns=base),
                failed,
                ticket_span("T-2", task_type="exchange", start_ns=base + 20 * NS),
                ticket_span("t-1%", start_ns=base + 30 * NS),
            ],
        )
        ids = lambda rows: [t.ticket_id for t in rows]  # noqa: E731
        assert ids(store.search_tickets("shop", ticket_id_prefix="T-1")) == ["T-12", "T-1"]
        assert ids(store.search_tickets("shop", ticket_id_prefix="t-1%")) == ["t-1%"]  # literal, case kept
        assert ids(store.search_tickets("shop", status="error")) == ["T-12"]
        assert ids(store.search_tickets("shop", outcome="resolved", task_type="refund")) == ["t-1%", "T-1"]
        assert ids(store.search_tickets("shop", since_ns=base + 10 * NS, until_ns=base + 30 * NS)) == ["T-2", "T-12"]
        assert ids(store.search_tickets("shop", limit=2, offset=1)) == ["T-2", "T-12"]
        assert store.search_tickets("bank", ticket_id_prefix="T") == []

    def test_a_trials_verdict_is_stored_as_given_and_read_back_exactly_on_first_use(self, store: Store) -> None:
        """A verdict given as its JSON text (a replay worker's row) is written as that text; read back, a row keeps
        its verdict's text until the verdict is first read, and reads it exactly (an integer past 64 bits too)."""
        store.ensure_project("shop")
        store.create_replay_run("shop", ReplayRun("run-1", utcnow(), k=2))
        verdict = {"passed": False, "check": "updated", "expected": {"amount": 2**70, "note": "r\u00e9embourser"}}
        as_dict = dataclasses.replace(_trial("run-1", "T-1", 0, passed=False), verdict=verdict)
        text = '{"passed":false,"check":"updated","expected":{"amount":1180591620717411303424,"note":"rembourser"}}'
        as_text = dataclasses.replace(_trial("run-1", "T-1", 1, passed=False), verdict=VerdictText(text))
        assert "verdict" not in as_text.__dict__ and verdict_text(as_text) == text
        store.add_trials("shop", [as_dict, as_text, _trial("run-1", "T-2", 0)])
        found = {(t.ticket_id, t.attempt): t for t in store.list_trials("shop", "run-1")}
        first, second = found[("T-1", 0)], found[("T-1", 1)]
        assert "verdict" not in first.__dict__  # not read back yet
        assert first.verdict == verdict and first.verdict["expected"]["amount"] == 2**70
        assert second.verdict == {
            "passed": False,
            "check": "updated",
            "expected": {"amount": 2**70, "note": "rembourser"},
        }
        assert verdict_text(second) == text  # stored as it came
        assert first == as_dict and second == as_text
        assert found[("T-2", 0)].verdict == _trial("run-1", "T-2", 0).verdict
        assert pickle.loads(pickle.dumps(second)) == second

    def test_list_ticket_trials_spans_runs_in_start_order(self, store: Store) -> None:
        store.ensure_project("shop")
        earlier = utcnow() - dt.timedelta(days=7)
        store.create_replay_run("shop", ReplayRun("run-a", earlier, k=2))
        store.create_replay_run("shop", ReplayRun("run-b", earlier + dt.timedelta(days=7), k=2))
        old = [dataclasses.replace(_trial("run-a", "T-1", a), started_at=earlier) for a in range(2)]
        new = [_trial("run-b", "T-1", a, passed=False) for a in range(2)]
        store.add_trials("shop", [*new, *old, _trial("run-b", "T-2", 0)])
        found = store.list_ticket_trials("shop", "T-1")
        assert [(t.run_id, t.attempt, t.passed) for t in found] == [
            ("run-a", 0, True),
            ("run-a", 1, True),
            ("run-b", 0, False),
            ("run-b", 1, False),
        ]
        assert found[2] == new[0]
        assert store.list_ticket_trials("bank", "T-1") == []


def _fields(row: TicketRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in TicketRow.__dataclass_fields__}


def _with_ticket(span: NormalizedSpan, ticket: TicketRow) -> NormalizedSpan:
    values = {name: getattr(span, name) for name in NormalizedSpan.__dataclass_fields__}
    values["ticket"] = ticket
    return NormalizedSpan(**values)


def _trial(run_id: str, ticket_id: str, attempt: int, *, passed: bool = True) -> TrialRow:
    return TrialRow(
        run_id=run_id,
        ticket_id=ticket_id,
        task_type="refund",
        attempt=attempt,
        passed=passed,
        termination_reason="agent_stop",
        started_at=utcnow(),
        duration_s=1.25,
        domain="retail",
        trace_id=new_trace_id(),
        failure_label=None if passed else "wrong_entity",
        failure_evidence=None if passed else "refunded order O-2, not O-1",
        verdict={"passed": passed, "check": "refund", "diagnostics": [], "children": []},
        details=TrialDetails(
            changes=(RowChange("orders", {"id": "O-1"}, "update", {"s": "a"}, {"s": "b"}),),
            final_response="Your refund of $45.50 is on its way.",
        ),
    )
