"""Sustained insert throughput of ClickHouseStore into embedded ClickHouse (chdb), with zero loss checked.

Run:  .venv/bin/python benchmarks/bench_clickhouse_store.py [--rounds 3] [--batches 30]
          [--tickets-per-batch 100]

Load: realistic agent traces, each a ticket root span with 8 tool spans carrying 3 state-write events each
(9 spans and 24 state-write rows per ticket), written with `write_batches` in batches of
`--tickets-per-batch` tickets (the collector's group commit). Variants, run interleaved round by round in
one process so machine noise hits them alike (medians reported):

- `store`: the store as shipped: insert-time anti-join de-dup, fsync on every insert.
- `store-no-fsync`: the same with `?fsync=0`, to show what durability costs.
- `no-dedup-check`: skips the anti-join and inserts directly (relying on ReplacingMergeTree + FINAL alone):
  the measurement behind the de-dup choice.
- `redelivery`: every batch sent twice; the second copy must add nothing.

After each run the store is counted: spans, ticket rows and daily traffic must equal what was sent.
Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable

from passhat import ticket_hash
from passhat.collector.store import (
    NormalizedSpan,
    SpanBatch,
    SpanEvent,
    StateWriteRow,
    TicketRow,
    ToolCallRow,
)
from passhat.collector.store.clickhouse._store import ClickHouseStore

NS = 1_000_000_000
TOOLS_PER_TICKET = 8
WRITES_PER_TOOL = 3
TASK_TYPES = ("refund", "exchange", "cancel_order", "address_change", "return")


def agent_trace(n: int, start_ns: int) -> list[NormalizedSpan]:
    """One ticket: a root `invoke_agent` span and its tool spans with state writes."""
    trace_id = os.urandom(16).hex()
    root_id = os.urandom(8).hex()
    ticket_id = f"T-{uuid.uuid4().hex[:12]}"
    task_type = TASK_TYPES[n % len(TASK_TYPES)]
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        "passhat.ticket.id": ticket_id,
        "passhat.task_type": task_type,
        "passhat.source": "production",
        "passhat.intent": json.dumps({"order_id": f"O-{n}", "items": [1, 2]}),
    }
    spans = [
        NormalizedSpan(
            trace_id=trace_id,
            span_id=root_id,
            parent_span_id=None,
            name="invoke_agent support",
            start_time_ns=start_ns,
            end_time_ns=start_ns + 30 * NS,
            operation="invoke_agent",
            kind=1,
            status="ok",
            service_name="shop-agent",
            scope_name="passhat",
            attributes=attributes,
            resource_attributes={"service.name": "shop-agent", "deployment.environment": "prod"},
            events=[SpanEvent("passhat.customer_message", start_ns + 1, {"passhat.message.content": "refund?"})],
            ticket=TicketRow(
                ticket_id=ticket_id,
                trace_id=trace_id,
                span_id=root_id,
                task_type=task_type,
                source="production",
                start_time_ns=start_ns,
                end_time_ns=start_ns + 30 * NS,
                ticket_hash=ticket_hash(ticket_id),
                status="ok",
                agent_name="support",
                intent={"order_id": f"O-{n}", "items": [1, 2]},
                domain="retail",
                outcome="resolved",
                service_name="shop-agent",
            ),
        )
    ]
    for t in range(TOOLS_PER_TICKET):
        span_id = os.urandom(8).hex()
        start = start_ns + (t + 1) * NS
        writes = [
            StateWriteRow(
                trace_id=trace_id,
                span_id=span_id,
                seq=w,
                time_ns=start + w,
                table="orders",
                key={"id": n * 10 + w},
                op="update",
                before={"status": "delivered"},
                after={"status": "refunded"},
                changed=["status"],
                rowcount=1,
            )
            for w in range(WRITES_PER_TOOL)
        ]
        spans.append(
            NormalizedSpan(
                trace_id=trace_id,
                span_id=span_id,
                parent_span_id=root_id,
                name=f"execute_tool tool_{t}",
                start_time_ns=start,
                end_time_ns=start + NS // 2,
                operation="execute_tool",
                status="ok",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": f"tool_{t}",
                    "gen_ai.tool.call.id": f"toolu_{n}_{t}",
                    "passhat.tool.outcome": "ok",
                },
                events=[
                    SpanEvent("passhat.state_write", w.time_ns, {"passhat.state_write.table": "orders"}) for w in writes
                ],
                tool_call=ToolCallRow(
                    trace_id=trace_id,
                    span_id=span_id,
                    parent_span_id=root_id,
                    tool_name=f"tool_{t}",
                    outcome="ok",
                    start_time_ns=start,
                    end_time_ns=start + NS // 2,
                    call_id=f"toolu_{n}_{t}",
                    tool_type="function",
                ),
                state_writes=writes,
            )
        )
    return spans


def make_batches(count: int, tickets_per_batch: int) -> list[list[NormalizedSpan]]:
    now = time.time_ns() - 3600 * NS
    return [
        [s for i in range(tickets_per_batch) for s in agent_trace(b * tickets_per_batch + i, now + i * NS)]
        for b in range(count)
    ]


def run_variant(store: ClickHouseStore, variant: str, batches: list[list[NormalizedSpan]]) -> dict[str, float]:
    """Write the batches back to back; return spans/s and the zero-loss counts."""
    project = "bench"
    store.ensure_project(project)
    write: Callable[[list[NormalizedSpan]], None]
    if variant == "no-dedup-check":

        def write(spans: list[NormalizedSpan]) -> None:
            store._spans._insert_fresh([(project, s) for s in spans])

    else:

        def write(spans: list[NormalizedSpan]) -> None:
            result = store.write_batches([SpanBatch(project, spans)])[0]
            assert result.accepted == len(spans), result
            if variant == "redelivery":
                again = store.write_batches([SpanBatch(project, spans)])[0]
                assert (again.accepted, again.duplicates) == (0, len(spans)), again

    started = time.perf_counter()
    for spans in batches:
        write(spans)
    elapsed = time.perf_counter() - started
    sent = sum(len(b) for b in batches)
    tickets_sent = sum(1 for b in batches for s in b if s.ticket is not None)
    stored = store.count_spans(project)
    tickets = len(store.list_tickets(project, limit=10**9))
    traffic = sum(t.tickets for t in store.traffic(project, days=2))
    lost = (sent - stored) + (tickets_sent - tickets) + (tickets_sent - traffic)
    return {"spans_per_s": sent / elapsed, "sent": sent, "stored": stored, "lost": lost}


def final_read_cost(store: ClickHouseStore) -> dict[str, float]:
    """What FINAL costs on reads of the loaded span table (median of 5)."""
    db = store.target.database
    out = {}
    for label, sql in (
        ("count_final_ms", f"SELECT count() FROM {db}.spans FINAL WHERE project = 'bench'"),
        ("count_plain_ms", f"SELECT count() FROM {db}.spans WHERE project = 'bench'"),
    ):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            store._conn.query(sql)
            times.append((time.perf_counter() - t0) * 1000)
        out[label] = statistics.median(times)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=30, help="batches per variant per round")
    parser.add_argument("--tickets-per-batch", type=int, default=100)
    parser.add_argument("--data-dir", default=None, help="chdb data dir (default: a temporary directory)")
    args = parser.parse_args(argv)
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="bench-chdb-")
    variants = ["store", "store-no-fsync", "no-dedup-check", "redelivery"]
    rates: dict[str, list[float]] = {v: [] for v in variants}
    lost = 0
    reads: dict[str, float] = {}
    for round_no in range(args.rounds):
        for variant in variants:
            batches = make_batches(args.batches, args.tickets_per_batch)
            fsync = "0" if variant == "store-no-fsync" else "1"
            url = f"chdb://{data_dir}?database=bench_{uuid.uuid4().hex[:10]}&fsync={fsync}"
            store = ClickHouseStore(url)
            store.migrate()
            result = run_variant(store, variant, batches)
            if variant == "store" and round_no == args.rounds - 1:
                reads = final_read_cost(store)
            store._conn.command(f"DROP DATABASE {store.target.database} SYNC")
            store.close()
            rates[variant].append(result["spans_per_s"])
            lost += int(result["lost"])
            print(
                f"round {round_no + 1} {variant:<15} {result['spans_per_s']:>9.0f} spans/s  "
                f"sent {int(result['sent'])} stored {int(result['stored'])} lost {int(result['lost'])}",
                file=sys.stderr,
                flush=True,
            )
    medians = {v: statistics.median(r) for v, r in rates.items()}
    spans_per_batch = args.tickets_per_batch * (1 + TOOLS_PER_TICKET)
    print(f"\nembedded ClickHouse (chdb), {spans_per_batch} spans per write_batches call, medians of {args.rounds}:")
    for variant in variants:
        ratio = medians[variant] / medians["store"]
        print(f"  {variant:<15} {medians[variant]:>9.0f} spans/s   x{ratio:.2f} vs store")
    print(f"  spans lost: {lost}")
    if reads:
        print(
            f"  read of the loaded span table: count() FINAL {reads['count_final_ms']:.1f} ms, "
            f"count() {reads['count_plain_ms']:.1f} ms"
        )
    print(json.dumps({"spans_per_s": medians, "lost": lost, "spans_per_batch": spans_per_batch, **reads}))
    return 0 if lost == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
