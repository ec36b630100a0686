"""The sampling hash is the contract shared with the collector: sha256, first 8 bytes, big-endian."""

from __future__ import annotations

import hashlib

import pytest

import passhat
from passhat.testing import Capture, capture


def test_ticket_hash_is_the_first_eight_bytes_of_sha256_big_endian() -> None:
    digest = hashlib.sha256(b"T-1001").digest()
    assert passhat.ticket_hash("T-1001") == int.from_bytes(digest[:8], "big")
    assert passhat.ticket_hash("é") == int.from_bytes(hashlib.sha256("é".encode()).digest()[:8], "big")


def test_is_sampled_compares_the_hash_with_rate_times_two_to_the_64() -> None:
    ids = [f"T-{index}" for index in range(2000)]
    assert all(passhat.is_sampled(ticket_id, 1.0) for ticket_id in ids)
    assert not any(passhat.is_sampled(ticket_id, 0.0) for ticket_id in ids)
    kept = [ticket_id for ticket_id in ids if passhat.is_sampled(ticket_id, 0.25)]
    assert 0.2 < len(kept) / len(ids) < 0.3
    assert all(passhat.ticket_hash(ticket_id) < 0.25 * 2**64 for ticket_id in kept)


def test_a_lower_rate_keeps_a_subset_of_a_higher_rate() -> None:
    ids = [f"ticket-{index}" for index in range(500)]
    low = {t for t in ids if passhat.is_sampled(t, 0.1)}
    high = {t for t in ids if passhat.is_sampled(t, 0.5)}
    assert low <= high


def test_a_rate_outside_zero_to_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        passhat.is_sampled("T-1", 1.5)


def test_unsampled_production_tickets_leave_no_spans_and_their_tools_still_run() -> None:
    ids = [f"T-{index}" for index in range(40)]
    calls: list[str] = []

    @passhat.tool
    def lookup(ticket_id: str) -> str:
        calls.append(ticket_id)
        return ticket_id

    with capture(sample_rate=0.5) as spans:
        for ticket_id in ids:
            with passhat.ticket(ticket_id, task_type="refund"):
                lookup(ticket_id)
    traced = {span.attributes["passhat.ticket.id"] for span in spans.tickets() if span.attributes}
    assert traced == {t for t in ids if passhat.is_sampled(t, 0.5)}
    assert len(spans.tools()) == len(traced)
    assert calls == ids


def test_sandbox_tickets_are_always_traced(passhat_capture: Capture) -> None:
    passhat_capture.passhat.sample_rate = 0.0
    with passhat.ticket("T-1", task_type="refund", source="sandbox", replay_run_id="run-1", trial_attempt=2):
        pass
    (ticket,) = passhat_capture.tickets()
    assert ticket.attributes is not None
    assert ticket.attributes["passhat.source"] == "sandbox"
    assert ticket.attributes["passhat.replay.run_id"] == "run-1"
    assert ticket.attributes["passhat.trial.attempt"] == 2
