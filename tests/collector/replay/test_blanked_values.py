"""Values a team chose to blank in the SDK: restored from the seed by any primary-key name, or left to the seed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from sqlalchemy import Column, Connection, ForeignKey, Integer, MetaData, String, Table

from passhat.collector.replay import NotReplayableError, restore_redacted, row_images
from passhat.collector.store import StateWriteRow, TicketDetail
from passhat.sandbox import Domain

metadata = MetaData()
Table("customers", metadata, Column("id", Integer, primary_key=True), Column("email", String))
Table(
    "subscriptions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("customer_id", Integer, ForeignKey("customers.id")),
    Column("plan", String),
)
SEED = {("customers", 7): {"id": 7, "email": "ada@example.com"}}


def _seed(connection: Connection, seed: int, size: str) -> None:
    return None


billing = Domain(
    name="billing",
    description="customers keyed by id",
    metadata=metadata,
    seed=_seed,
    task_types={},
)


def lookup(table: str, key: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return SEED.get((table, next(iter(key.values()))))


def test_a_blanked_email_is_read_back_through_the_column_that_references_the_customer() -> None:
    intent = {"customer_id": 7, "email": "[REDACTED:email]"}
    assert restore_redacted(intent, billing, lookup) == {"customer_id": 7, "email": "ada@example.com"}


def test_a_blanked_value_no_row_can_give_back_is_not_replayable_with_the_fix() -> None:
    with pytest.raises(NotReplayableError, match="blanked before export") as raised:
        restore_redacted({"email": "[REDACTED:email]"}, billing, lookup)
    assert "pseudonym" in raised.value.fix


def _event(op: str, before: dict[str, Any] | None) -> StateWriteRow:
    return StateWriteRow(
        trace_id="t", span_id="s", seq=0, time_ns=1, table="customers", key={"id": 7}, op=op, before=before
    )


def test_blanked_columns_of_a_before_image_are_left_to_the_seed() -> None:
    read = _event("read", {"id": 7, "email": "[REDACTED:email]", "name": "Ada"})
    detail = TicketDetail(ticket_id="T-1", attempts=[], spans=[], tool_calls=[], state_writes=[], state_reads=[read])
    (image,) = row_images(detail)
    assert image.values == {"id": 7, "name": "Ada"} and image.partial


def test_a_pseudonymous_email_no_captured_row_holds_makes_the_ticket_not_replayable() -> None:
    from passhat.collector.replay import DomainAdapter, prepare
    from passhat.collector.store import TicketRow
    from passhat.sandbox import load_domain

    ticket = TicketRow(
        ticket_id="T-2", trace_id="0" * 32, span_id="0" * 16, task_type="cancel_pending_order",
        source="production", start_time_ns=0, end_time_ns=1, ticket_hash=1, domain="retail",
        intent={"email": "0123456789abcdef@example.com", "order_id": "#W0000001"},
    )  # fmt: skip
    detail = TicketDetail(ticket_id="T-2", attempts=[ticket], spans=[], tool_calls=[], state_writes=[], state_reads=[])
    result = prepare(ticket, detail, {"retail": DomainAdapter(load_domain("retail"))})
    assert "pseudonym that no row captured with the ticket holds" in getattr(result, "reason", "")
    assert "instrument_sqlalchemy" in getattr(result, "fix", "")
