"""ClickHouseStore passes the store contract on the embedded engine (chdb://), over clickhouse-connect's HTTP
client (a test-only HTTP front over chdb in its own process), and on a real server when CLICKHOUSE_URL is set;
plus what only ClickHouse has: the schema's keys and sampling, TTLs, the de-duplication backstop, durability
across a killed process, and the shipped server config."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest

from passhat.collector import CollectorSettings
from passhat.collector.store import SpanBatch, Store, StoreError, open_store
from passhat.collector.store.clickhouse._rows import TRIAL_COLUMNS, trial_from_row
from passhat.collector.store.clickhouse._schema import LATEST_VERSION, MIGRATIONS_TABLE, Retention
from passhat.collector.store.clickhouse._schema import server_config_xml as shipped_config
from passhat.collector.store.clickhouse._store import ClickHouseStore
from tests.collector.ingest.otlp_payloads import passhat_ticket, request
from tests.collector.server import new_key, running_collector
from tests.collector.store.store_contract import StoreContract, ticket_hash, ticket_span, tool_span
from tests.sandbox.trial.old_details import OLD_DETAILS, OLD_DETAILS_READ

HERE = pathlib.Path(__file__).resolve().parent
BACKENDS = ["chdb", "http", "server"]


@pytest.fixture(scope="session")
def http_front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ClickHouse HTTP endpoint: the test front over chdb, in its own process, on a free loopback port."""
    data = tmp_path_factory.mktemp("front")
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "clickhouse_http_front.py"), str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        pytest.fail(f"the HTTP front did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    yield f"http://127.0.0.1:{int(line.split()[-1])}"
    proc.terminate()
    proc.communicate(timeout=10)


def _url(backend: str, request: pytest.FixtureRequest) -> str:
    if backend == "chdb":
        return f"chdb://{request.getfixturevalue('chdb_dir')}"
    if backend == "http":
        return str(request.getfixturevalue("http_front"))
    server = os.environ.get("CLICKHOUSE_URL")
    if not server:
        pytest.skip("set CLICKHOUSE_URL=http://host:8123 to run against a real ClickHouse server")
    return server


def _with_database(url: str, database: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}database={database}"


def _fresh_database() -> str:
    return f"passhat_test_{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest) -> str:
    return _url(request.param, request)


@pytest.fixture
def ch_store(backend_url: str) -> Iterator[ClickHouseStore]:
    """A migrated store in a DATABASE of its own, dropped afterwards."""
    database = _fresh_database()
    store = open_store(_with_database(backend_url, database))
    assert isinstance(store, ClickHouseStore)
    yield store
    store._conn.command(f"DROP DATABASE IF EXISTS {database} SYNC")
    store.close()


class TestClickHouseStore(StoreContract):
    @pytest.fixture
    def store(self, ch_store: ClickHouseStore) -> Iterator[Store]:
        yield ch_store


# --- URLs and lifecycle ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("chdb://relative/dir", "absolute data path"),
        ("chdb:///", "no data path"),
        ("http://", "no host"),
        ("chdb:///tmp/x?database=bad-name", "database name"),
        ("chdb:///tmp/x?spans_ttl_days=soon", "spans_ttl_days"),
        ("chdb:///tmp/x?spans_ttl_days=-3", "retention"),
    ],
)
def test_a_bad_url_is_one_clear_error(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        ClickHouseStore(url)


def test_an_unreachable_server_is_one_clear_error() -> None:
    with pytest.raises(StoreError, match=r"cannot open ClickHouse at http://127\.0\.0\.1:9"):
        ClickHouseStore("http://127.0.0.1:9")


def test_a_second_embedded_data_path_in_one_process_is_refused(chdb_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    with (
        open_store(f"chdb://{chdb_dir}?database={_fresh_database()}"),
        pytest.raises(StoreError, match="one data path per process"),
    ):
        ClickHouseStore(f"chdb://{tmp_path / 'other'}")


def test_a_newer_schema_is_refused_with_advice(ch_store: ClickHouseStore) -> None:
    ch_store._conn.insert(MIGRATIONS_TABLE, [[LATEST_VERSION + 1, "from the future"]], ("version", "description"))
    with pytest.raises(StoreError, match="upgrade passhat"):
        ch_store.migrate()


def test_data_survives_reopening_the_store(chdb_dir: pathlib.Path) -> None:
    url = f"chdb://{chdb_dir}?database={_fresh_database()}"
    with open_store(url) as store:
        store.ensure_project("shop")
        store.write_batch("shop", [ticket_span("T-1")])
    with open_store(url) as store:
        assert store.count_spans("shop") == 1
        assert store.schema_version() == LATEST_VERSION


# --- schema: keys, sampling, hash --------------------------------------------------------------------------
def test_the_span_table_is_keyed_by_project_day_and_trace_hash_and_sampled_by_it(
    ch_store: ClickHouseStore,
) -> None:
    rows = ch_store._conn.query(
        "SELECT name, sorting_key, sampling_key, engine FROM system.tables WHERE database = %(db)s",
        {"db": ch_store.target.database},
    )
    tables = {r[0]: r[1:] for r in rows}
    assert tables["spans"][:2] == ("project, day, trace_hash, trace_id, span_id", "trace_hash")
    assert tables["tickets"][:2] == ("project, ticket_hash, trace_id, ticket_id, version", "ticket_hash")
    assert tables["traffic_daily"][2] == "SummingMergeTree"
    assert {"projects", "api_keys", "spans", "tickets", "tool_calls", "state_writes", "traffic_daily"} <= set(tables)
    assert {"replay_runs", "trials", "alert_events", "traffic_daily_mv"} <= set(tables)


def test_sampling_keeps_whole_traces_by_the_shared_hash(ch_store: ClickHouseStore) -> None:
    ch_store.ensure_project("shop")
    roots = [ticket_span(f"T-{i}") for i in range(60)]
    ch_store.write_batch("shop", [s for r in roots for s in (r, tool_span(r), tool_span(r, "refund"))])
    db = ch_store.target.database
    sampled = ch_store._conn.query(
        f"SELECT trace_id, count() FROM {db}.spans SAMPLE 1/2 WHERE project = 'shop' GROUP BY trace_id"
    )
    expected = {r.trace_id for r in roots if ticket_hash(r.trace_id) < 2**63}
    assert {r[0] for r in sampled} == expected
    assert all(r[1] == 3 for r in sampled)


def test_clickhouse_computes_the_same_ticket_hash_as_python(ch_store: ClickHouseStore) -> None:
    ids = ["T-1", "ticket-ü-42", "", "x" * 300]
    rows = ch_store._conn.query(
        "SELECT reinterpretAsUInt64(reverse(substring(SHA256(t), 1, 8))) FROM (SELECT arrayJoin(%(ids)s) AS t)",
        {"ids": ids},
    )
    assert [r[0] for r in rows] == [ticket_hash(t) for t in ids]


def test_tables_fsync_each_insert_unless_told_not_to(chdb_dir: pathlib.Path) -> None:
    with open_store(f"chdb://{chdb_dir}?database={_fresh_database()}") as store:
        assert "fsync_after_insert = 1" in _engine(store, "spans")
        assert "fsync_part_directory = 1" in _engine(store, "tickets")
    with open_store(f"chdb://{chdb_dir}?database={_fresh_database()}&fsync=0") as store:
        assert "fsync_after_insert" not in _engine(store, "spans")


# --- retention ---------------------------------------------------------------------------------------------
def _engine(store: ClickHouseStore, table: str) -> str:
    rows = store._conn.query(
        "SELECT engine_full FROM system.tables WHERE database = %(db)s AND name = %(t)s",
        {"db": store.target.database, "t": table},
    )
    return str(rows[0][0])


def test_retention_becomes_table_ttls_and_follows_the_configuration(chdb_dir: pathlib.Path) -> None:
    url = f"chdb://{chdb_dir}?database={_fresh_database()}"
    with open_store(url) as store:
        assert "TTL day + toIntervalDay(90)" in _engine(store, "spans")
        assert "TTL day + toIntervalDay(400)" in _engine(store, "tickets")
        assert "TTL" not in _engine(store, "trials")
    with open_store(f"{url}&spans_ttl_days=7&tickets_ttl_days=0&trials_ttl_days=30") as store:
        assert "TTL day + toIntervalDay(7)" in _engine(store, "spans")
        assert "TTL day + toIntervalDay(7)" in _engine(store, "state_writes")
        assert "TTL" not in _engine(store, "tickets")
        assert "toIntervalDay(30)" in _engine(store, "trials")
    store = ClickHouseStore(url, retention=Retention(spans_days=14))
    store.migrate()
    assert "toIntervalDay(14)" in _engine(store, "tool_calls")
    store.close()


def test_rows_past_their_ttl_are_dropped(ch_store: ClickHouseStore) -> None:
    ch_store.ensure_project("shop")
    old = ticket_span("T-old", start_ns=ticket_span("x").start_time_ns - 200 * 86400 * 10**9)
    ch_store.write_batch("shop", [old, ticket_span("T-new")])
    db = ch_store.target.database
    ch_store._conn.command(f"ALTER TABLE {db}.spans MODIFY TTL day + INTERVAL 30 DAY")
    ch_store._conn.command(f"OPTIMIZE TABLE {db}.spans FINAL")
    assert ch_store.count_spans("shop") == 1


def test_a_trial_stored_with_details_as_a_plain_document_still_loads() -> None:
    stored = {name: None for name in TRIAL_COLUMNS} | {
        "run_id": "r", "ticket_id": "T-1", "task_type": "refund", "attempt": 0, "passed": 1,
        "termination_reason": "customer_stop", "started_at": 0, "duration_s": 0.5, "details": json.dumps(OLD_DETAILS),
    }  # fmt: skip
    assert trial_from_row([stored[name] for name in TRIAL_COLUMNS]).details == OLD_DETAILS_READ


# --- de-duplication ----------------------------------------------------------------------------------------
def test_a_write_repeated_behind_the_lock_still_reads_once(ch_store: ClickHouseStore) -> None:
    """The engines are the backstop: a call cut short and retried (here: its inserts replayed) stores
    duplicate rows that FINAL folds away, and the ticket is counted once in traffic."""
    ch_store.ensure_project("shop")
    root = ticket_span("T-1")
    spans = [root, tool_span(root, "refund", writes=2, reads=1)]
    ch_store.write_batch("shop", spans)
    ch_store._spans._insert_fresh([("shop", s) for s in spans])
    assert ch_store.count_spans("shop") == 2
    detail = ch_store.get_ticket("shop", "T-1")
    assert detail is not None
    assert (len(detail.attempts), len(detail.tool_calls), len(detail.state_writes)) == (1, 1, 2)
    assert [t.tickets for t in ch_store.traffic("shop", days=1)] == [1]


def test_concurrent_writers_store_each_span_once(ch_store: ClickHouseStore) -> None:
    ch_store.ensure_project("shop")
    roots = [ticket_span(f"T-{i}") for i in range(40)]
    spans = [s for r in roots for s in (r, tool_span(r))]
    results: list[tuple[int, int]] = []

    def send(offset: int) -> None:
        for start in range(0, len(spans), 10):
            chunk = spans[(start + offset) % len(spans) :][:10] or spans[:10]
            r = ch_store.write_batches([SpanBatch("shop", chunk)])[0]
            results.append((r.accepted, r.duplicates))

    threads = [threading.Thread(target=send, args=(i * 7,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(a for a, _ in results) == ch_store.count_spans("shop") == len(spans)
    assert [t.tickets for t in ch_store.traffic("shop", days=1)] == [40]


@pytest.mark.slow
def test_a_call_with_more_traces_than_one_lookup_query_holds(chdb_dir: pathlib.Path) -> None:
    """5,000 single-span traces: the de-dup lookups are split to stay under ClickHouse's max_query_size."""
    with open_store(f"chdb://{chdb_dir}?database={_fresh_database()}") as store:
        store.ensure_project("shop")
        spans = [ticket_span(f"T-{i}-{'x' * 40}") for i in range(5000)]
        assert store.write_batch("shop", spans).accepted == 5000
        again = store.write_batch("shop", spans[::-1])
        assert (again.accepted, again.duplicates) == (0, 5000)
        assert store.count_spans("shop") == 5000
        assert sum(t.tickets for t in store.traffic("shop", days=1)) == 5000


# --- durability --------------------------------------------------------------------------------------------
_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from tests.collector.store.store_contract import ticket_span, tool_span
    from passhat.collector.store import open_store
    store = open_store({url!r})
    store.ensure_project("shop")
    i = 0
    while True:
        root = ticket_span(f"T-{{i}}")
        store.write_batch("shop", [root, *(tool_span(root) for _ in range(8))])
        print(i, flush=True)
        i += 1
    """
)


@pytest.mark.slow
def test_every_acknowledged_write_survives_a_killed_process(tmp_path: pathlib.Path) -> None:
    url = f"chdb://{tmp_path / 'data'}?database=passhat"
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER.format(tests=str(HERE), url=url)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    acknowledged = -1
    for line in writer.stdout:
        acknowledged = int(line)
        if acknowledged >= 25:
            break
    writer.kill()  # SIGKILL in the middle of the stream of writes
    _, errors = writer.communicate()
    assert acknowledged >= 25, errors
    reader = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from passhat.collector.store import open_store\n"
            f"s = open_store({url!r})\n"
            "print(s.count_spans('shop'), len(s.list_tickets('shop', limit=10**6)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    spans, tickets = map(int, reader.stdout.split())
    assert tickets >= acknowledged + 1
    assert spans >= 9 * (acknowledged + 1)
    # Each table's insert is one block, so all or nothing; a call killed between its inserts can leave its
    # ticket row without its span rows (the retry completes it), never a span without its ticket.
    assert spans % 9 == 0
    assert spans // 9 <= tickets <= spans // 9 + 1


# --- the shipped server config -----------------------------------------------------------------------------
def test_the_shipped_server_config_caps_the_system_log_tables(tmp_path: pathlib.Path) -> None:
    """Loaded into the real engine (chdb takes a server config), the logs it keeps get a 7-day TTL."""
    config = tmp_path / "passhat.xml"
    config.write_text(shipped_config(), encoding="utf-8")
    code = textwrap.dedent(
        f"""
        import chdb
        c = chdb.connect({str(tmp_path / "data") + "?config-file=" + str(config)!r})
        c.query("SELECT 1", "CSV")
        c.query("SYSTEM FLUSH LOGS", "CSV")
        print(c.query("SELECT name, engine_full FROM system.tables WHERE database = 'system' "
                      "AND name IN ('query_log', 'part_log')", "TSV"))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    engines = dict(line.split("\t", 1) for line in out.strip().splitlines())
    assert set(engines) == {"query_log", "part_log"}
    assert all("TTL event_date + toIntervalDay(7)" in e for e in engines.values())


def test_the_clickhouse_scheme_is_an_alias_of_http(http_front: str) -> None:
    database = _fresh_database()
    with open_store(_with_database(http_front.replace("http://", "clickhouse://"), database)) as store:
        store.ensure_project("shop")
        assert store.write_batch("shop", [ticket_span("T-1")]).accepted == 1
        assert isinstance(store, ClickHouseStore)
        store._conn.command(f"DROP DATABASE {database} SYNC")


# --- the collector on ClickHouse -------------------------------------------------------------------------
def test_the_collector_ingests_otlp_over_http_into_embedded_clickhouse(ch_store: ClickHouseStore) -> None:
    """The real app (uvicorn on loopback) with this store: a 200 means the spans are in ClickHouse, a
    re-sent request adds nothing, and the query API reads tickets, tool calls, writes and traffic back."""
    key = new_key(ch_store, "shop")
    body = request(passhat_ticket("T-ch", task_type="refund", tools=8, writes_per_tool=3)).SerializeToString()
    headers = {"authorization": f"Bearer {key}", "content-type": "application/x-protobuf"}
    with (
        running_collector(ch_store, CollectorSettings(key_cache_s=0.0)) as running,
        httpx.Client(base_url=running.url, headers=headers, timeout=60.0) as client,
    ):
        assert client.post("/v1/traces", content=body).status_code == 200
        assert ch_store.count_spans("shop") == 9
        assert client.post("/v1/traces", content=body).status_code == 200
        assert ch_store.count_spans("shop") == 9
        detail = client.get("/api/tickets/T-ch").json()
        assert len(detail["spans"]) == 9
        assert len(detail["tool_calls"]) == 8
        assert len(detail["state_writes"]) == 24
        traffic = client.get("/api/traffic", params={"days": 1}).json()["traffic"]
        assert [(t["task_type"], t["tickets"]) for t in traffic] == [("refund", 1)]
