"""The ticket sampler: deterministic, stratified, consistent with the SDK's head sampling."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pytest

from passhat.collector.replay._sampling import sample_tickets


def ticket_hash(ticket_id: str) -> int:
    # The contract's sampling hash (the SDK exports it as passhat.ticket_hash).
    return int.from_bytes(hashlib.sha256(ticket_id.encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Ticket:
    ticket_id: str
    task_type: str

    @property
    def ticket_hash(self) -> int:
        return ticket_hash(self.ticket_id)


def traffic() -> list[Ticket]:
    return [Ticket(f"R-{i}", "refund") for i in range(500)] + [Ticket(f"C-{i}", "cancel") for i in range(7)]


def test_each_task_type_gets_its_own_sample() -> None:
    sample = sample_tickets(traffic(), size=20)
    assert set(sample) == {"refund", "cancel"}
    assert len(sample["refund"].tickets) == 20 and sample["refund"].population == 500
    assert sample["cancel"].complete and len(sample["cancel"].tickets) == 7


def test_deterministic_whatever_the_order() -> None:
    tickets = traffic()
    first = sample_tickets(tickets, size=20)
    second = sample_tickets(list(reversed(tickets)), size=20)
    assert first["refund"].tickets == second["refund"].tickets


def test_sample_is_the_lowest_hashes_like_head_sampling() -> None:
    sample = sample_tickets(traffic(), size=20)["refund"].tickets
    cutoff = max(t.ticket_hash for t in sample)
    others = [t for t in traffic() if t.task_type == "refund" and t not in sample]
    assert all(t.ticket_hash > cutoff for t in others)


def test_growing_the_sample_keeps_what_was_chosen() -> None:
    small = set(sample_tickets(traffic(), size=10)["refund"].tickets)
    large = set(sample_tickets(traffic(), size=30)["refund"].tickets)
    assert small <= large


def test_per_task_type_sizes_and_duplicates() -> None:
    tickets = [*traffic(), Ticket("C-1", "cancel")]
    sample = sample_tickets(tickets, size=5, sizes={"refund": 50})
    assert len(sample["refund"].tickets) == 50
    assert sample["cancel"].population == 7


def test_bad_size_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        sample_tickets(traffic(), size=0)
