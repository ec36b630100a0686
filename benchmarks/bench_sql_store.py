"""The SQL store's write path alone (no HTTP, no decoding): microseconds per span, filling a fresh SQLite file.

Run:  .venv/bin/python benchmarks/bench_sql_store.py [--spans 300000] [--state-writes 3] [--requests-per-group 2]

Load: the ingest benchmark's requests (56 tickets of 9 spans; `--state-writes` per ticket), decoded and
normalised before the clock starts, then written with `write_batches`, `--requests-per-group` requests per
call (one group commit). For each group it times the whole call and the part inside the write transaction
(lock, de-duplication, inserts, commit); the rest is building the rows. Medians are over the second half of
the groups, when the file is large enough that the indexes no longer fit in a few pages. Afterwards the spans
in the file are counted: all must be there. Prints a summary and, with `--json`, one JSON object.
`--drop-index NAME` measures the file without one of its indexes (what an index costs the write path).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator

import sqlalchemy as sa
from bench_ingest import _Body, _template

from passhat.collector.ingest._otlp import decode_protobuf
from passhat.collector.store import SpanBatch
from passhat.collector.store.sql._store import SqlStore


class _TimedStore(SqlStore):
    """SqlStore that adds up the time spent inside its write transactions."""

    locked_s = 0.0

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sa.Connection]:
        started = time.perf_counter()
        with super()._writing() as conn:
            yield conn
        self.locked_s += time.perf_counter() - started  # the commit included


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=300_000, help="spans to write into the fresh file")
    parser.add_argument("--state-writes", type=int, default=3, help="state-write events per ticket")
    parser.add_argument("--requests-per-group", type=int, default=2, help="504-span requests per group commit")
    parser.add_argument(
        "--drop-index",
        action="append",
        default=[],
        metavar="NAME",
        help="drop this index after creating the schema, to measure what it costs (repeatable)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    body = _Body(_template(56, args.state_writes), 9)
    with tempfile.TemporaryDirectory(prefix="passhat-bench-sql-") as workdir:
        path = pathlib.Path(workdir) / "passhat.db"
        store = _TimedStore(f"sqlite:///{path}")
        store.migrate()
        with store._writing() as conn:
            for index in args.drop_index:
                conn.execute(sa.text(f"DROP INDEX {index}"))
        store.ensure_project("bench")
        written, samples = 0, []
        while written < args.spans:
            batches = [
                SpanBatch("bench", decode_protobuf(body.fresh(), max_attribute_bytes=65_536).spans)
                for _ in range(args.requests_per_group)
            ]
            spans = sum(len(batch.spans) for batch in batches)
            store.locked_s = 0.0
            started = time.perf_counter()
            store.write_batches(batches)
            total = time.perf_counter() - started
            written += spans
            samples.append((total / spans * 1e6, store.locked_s / spans * 1e6))
        stored = store.count_spans("bench")
        store.close()
        size = sum(f.stat().st_size for f in pathlib.Path(workdir).iterdir())
    steady = samples[len(samples) // 2 :]
    result = {
        "spans": written,
        "stored": stored,
        "lost": written - stored,
        "state_writes_per_ticket": args.state_writes,
        "spans_per_group": written // len(samples),
        "us_per_span": statistics.median(total for total, _ in steady),
        "locked_us_per_span": statistics.median(locked for _, locked in steady),
        "rows_us_per_span": statistics.median(total - locked for total, locked in steady),
        "bytes_per_span": size / max(written, 1),
        "dropped_indexes": args.drop_index,
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{written} spans ({args.state_writes} state writes a ticket, {result['spans_per_group']} a group): "
            f"{result['us_per_span']:.1f} us a span, {result['locked_us_per_span']:.1f} inside the write "
            f"transaction, {result['rows_us_per_span']:.1f} building rows; {result['bytes_per_span']:.0f} bytes a "
            f"span on disk; lost {result['lost']}"
        )
    return 0 if stored == written else 1


if __name__ == "__main__":
    sys.exit(main())
