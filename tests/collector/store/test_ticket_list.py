"""The ticket list's query in both stores: every filter, the three sorts, the total and the page."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Iterator

import pytest

from passhat.collector.store import ProductionVerdict, Store, TicketFilter, open_store
from passhat.collector.store.sql._store import SqlStore
from tests.collector.store.store_contract import NS, now_ns, ticket_span
from tests.collector.store.test_postgres_store import _fresh_schema, postgres_url  # noqa: F401 (a fixture)


@pytest.fixture(params=["sqlite", "postgres", "chdb"])
def store(request: pytest.FixtureRequest, sql_store: Store) -> Iterator[Store]:
    if request.param == "sqlite":
        yield sql_store
        return
    if request.param == "postgres":
        with _fresh_schema(request.getfixturevalue("postgres_url")) as url:
            opened = SqlStore(url)
            opened.migrate()
            yield opened
            opened.close()
        return
    opened = open_store(f"chdb://{request.getfixturevalue('chdb_dir')}?database=list_{uuid.uuid4().hex[:10]}")
    yield opened
    opened.close()


def _verdict(ticket_id: str, start: int, *, passed: bool, signature: str | None = None) -> ProductionVerdict:
    return ProductionVerdict(
        ticket_id=ticket_id, trace_id="a" * 32, task_type="refund", start_time_ns=start, passed=passed,
        graded_at=dt.datetime(2026, 11, 30, tzinfo=dt.UTC), domain="retail", signature=signature,
        evidence=None, verdict=None, graded_by="run-1",
    )  # fmt: skip


@pytest.fixture
def seeded(store: Store) -> tuple[Store, int]:
    """Five production tickets (two task types, two domains, intents naming orders) and one sandbox trial."""
    store.ensure_project("shop")
    base = now_ns() - 3600 * NS
    spans = [
        ticket_span("T-1", start_ns=base + 1 * NS, intent={"order_id": "W-100", "reason": "Broken"}),
        ticket_span("T-2", start_ns=base + 2 * NS, task_type="exchange", intent={"order_id": "W-200"}),
        ticket_span("T-3", start_ns=base + 3 * NS, intent={"order_id": "W-300"}),
        ticket_span("B-4", start_ns=base + 4 * NS, intent={"account": "ACC-9"}),
        ticket_span("T-5", start_ns=base + 5 * NS, task_type="exchange", intent={"order_id": "50%_off"}),
        ticket_span("T-1#0", start_ns=base + 6 * NS, source="sandbox", run_id="run-1", attempt=0),
    ]
    banking = spans[3].ticket
    assert banking is not None
    spans[3].ticket = dataclasses.replace(banking, domain="banking")
    store.write_batch("shop", spans)
    store.write_batch("bank", [ticket_span("T-9", start_ns=base)])
    store.put_production_verdicts(
        "shop",
        [
            _verdict("T-1", base + NS, passed=False, signature="wrong_entity"),
            _verdict("T-3", base + 3 * NS, passed=True),
            _verdict("T-5", base + 5 * NS, passed=False, signature="unresolved"),
        ],
    )
    return store, base


def _ids(store: Store, limit: int = 50, offset: int = 0, **filters: object) -> tuple[list[str], int]:
    page = store.ticket_page("shop", TicketFilter(**filters), limit=limit, offset=offset)  # type: ignore[arg-type]
    return [r.ticket_id for r in page.rows], page.total


def test_filters_narrow_the_list_and_the_total_counts_every_match(seeded: tuple[Store, int]) -> None:
    store, base = seeded
    assert _ids(store) == (["T-1#0", "T-5", "B-4", "T-3", "T-2", "T-1"], 6)
    assert _ids(store, task_type="exchange") == (["T-5", "T-2"], 2)
    assert _ids(store, domain="banking") == (["B-4"], 1)
    assert _ids(store, source="sandbox") == (["T-1#0"], 1)
    assert _ids(store, since_ns=base + 2 * NS, until_ns=base + 4 * NS) == (["T-3", "T-2"], 2)
    assert _ids(store, verdict="failed") == (["T-5", "T-1"], 2)
    assert _ids(store, verdict="ungraded") == (["B-4", "T-2"], 2)  # production tickets only
    assert _ids(store, verdict="failed", task_type="exchange") == (["T-5"], 1)
    assert _ids(store, signature="wrong_entity") == (["T-1"], 1)
    assert _ids(store, verdict="failed", source="sandbox") == ([], 0)
    assert _ids(store, limit=2, offset=2) == (["B-4", "T-3"], 6)  # the total is of every page
    assert store.ticket_page("bank", TicketFilter(domain="banking")).total == 0


def test_search_finds_ids_and_intent_values_ignoring_case_and_literally(seeded: tuple[Store, int]) -> None:
    store, _ = seeded
    assert _ids(store, search="w-200") == (["T-2"], 1)  # an intent value, any case
    assert _ids(store, search="b-4") == (["B-4"], 1)  # a ticket id
    assert _ids(store, search="t-1") == (["T-1#0", "T-1"], 2)
    assert _ids(store, search="0%_") == (["T-5"], 1)  # % and _ are not wildcards
    assert _ids(store, search="broken") == (["T-1"], 1)
    assert _ids(store, search="nowhere") == ([], 0)


def test_sorts_by_task_type_and_least_reliable_first(seeded: tuple[Store, int]) -> None:
    store, _ = seeded
    assert _ids(store, sort="task_type")[0] == ["T-5", "T-2", "T-1#0", "B-4", "T-3", "T-1"]
    # Failed verdicts, then tickets without one (ungraded production and sandbox trials), then passed.
    assert _ids(store, sort="verdict")[0] == ["T-5", "T-1", "T-1#0", "B-4", "T-2", "T-3"]
    assert _ids(store, sort="verdict", limit=2, offset=2) == (["T-1#0", "B-4"], 6)
    # Pages that start inside a group and run into the next one, and past the end.
    assert _ids(store, sort="verdict", limit=10, offset=3) == (["B-4", "T-2", "T-3"], 6)
    assert _ids(store, sort="verdict", limit=1, offset=5) == (["T-3"], 6)
    assert _ids(store, sort="verdict", limit=4, offset=6) == ([], 6)
    # Sorted and filtered by verdicts at once; a replays filter with them.
    assert _ids(store, sort="verdict", signature="unresolved") == (["T-5"], 1)
    assert _ids(store, sort="verdict", verdict="ungraded") == (["B-4", "T-2"], 2)
    assert _ids(store, sort="verdict", replays="not_replayed", task_type="exchange") == (["T-5", "T-2"], 2)


def test_a_search_counts_and_sorts_its_matches_in_one_statement(seeded: tuple[Store, int]) -> None:
    """A search's total and page come from one read of the matches: every sort, pages inside and past the end,
    and the verdict filters with it give what the unsearched list gives for the same tickets."""
    store, _ = seeded
    matches = ["T-1#0", "T-5", "T-3", "T-2", "T-1"]  # every id holding "t-"; B-4 holds none
    assert _ids(store, search="t-") == (matches, 5)
    assert _ids(store, search="t-", limit=2, offset=1) == (matches[1:3], 5)
    assert _ids(store, search="t-", limit=2, offset=10) == ([], 5)  # past the end: the total still comes
    assert _ids(store, search="nowhere", offset=50) == ([], 0)
    assert _ids(store, search="t-", sort="task_type") == (["T-5", "T-2", "T-1#0", "T-3", "T-1"], 5)
    assert _ids(store, search="t-", sort="verdict") == (["T-5", "T-1", "T-1#0", "T-2", "T-3"], 5)
    assert _ids(store, search="T-", sort="verdict", limit=2, offset=2) == (["T-1#0", "T-2"], 5)
    assert _ids(store, search="w-", verdict="failed") == (["T-1"], 1)
    assert _ids(store, search="w-", verdict="ungraded", sort="verdict") == (["T-2"], 1)
    assert _ids(store, search="t-", signature="unresolved", sort="verdict") == (["T-5"], 1)
    # Unsearched, the same sorts agree with the searched ones on the tickets both hold.
    for sort in ("time", "task_type", "verdict"):
        listed, total = _ids(store, sort=sort)
        assert total == 6 and [i for i in listed if i != "B-4"] == _ids(store, search="t-", sort=sort)[0]


def test_verdict_filters_count_every_graded_group(seeded: tuple[Store, int]) -> None:
    """The verdict filters' totals and their sort by verdict (one group each, or two with a signature)."""
    store, base = seeded
    assert _ids(store, verdict="passed", sort="verdict") == (["T-3"], 1)
    assert _ids(store, verdict="failed", sort="verdict", limit=1, offset=1) == (["T-1"], 2)
    assert _ids(store, verdict="ungraded", task_type="refund") == (["B-4"], 1)  # narrowed by an index
    assert _ids(store, verdict="ungraded", limit=1) == (["B-4"], 2)  # counted in table order
    store.put_production_verdicts("shop", [_verdict("T-2", base + 2 * NS, passed=True, signature="unresolved")])
    assert _ids(store, signature="unresolved", sort="verdict") == (["T-5", "T-2"], 2)
    assert _ids(store, signature="unresolved", sort="verdict", limit=1, offset=1) == (["T-2"], 2)
    assert _ids(store, verdict="ungraded") == (["B-4"], 1)


def test_a_ticket_whose_row_was_replaced_is_listed_once_as_it_is_now(store: Store) -> None:
    """A trace's outer agent span arriving after an inner one replaces its ticket row (in ClickHouse, a cancel row
    beside the old one): the list shows the ticket once, as it is now, and counts it once, whatever the filter."""
    store.ensure_project("shop")
    outer = ticket_span("T-5", task_type="outer")
    inner = ticket_span("T-5", task_type="inner", trace_id=outer.trace_id, start_ns=outer.start_time_ns + 1000)
    store.write_batch("shop", [inner])
    store.write_batch("shop", [outer])
    store.write_batch("shop", [ticket_span("T-6", task_type="inner", start_ns=outer.start_time_ns + 5000)])
    for filters, expected in (
        ({}, ["T-6", "T-5"]),
        ({"task_type": "outer"}, ["T-5"]),
        ({"task_type": "inner"}, ["T-6"]),
        ({"sort": "task_type"}, ["T-6", "T-5"]),
        ({"search": "t-5"}, ["T-5"]),
    ):
        page = store.ticket_page("shop", TicketFilter(**filters), limit=50, offset=0)  # type: ignore[arg-type]
        assert [r.ticket_id for r in page.rows] == expected, filters
        assert page.total == len(expected), filters
        now = [(r.task_type, r.start_time_ns) for r in page.rows if r.ticket_id == "T-5"]
        assert now == ([("outer", outer.start_time_ns)] if "T-5" in expected else []), filters
