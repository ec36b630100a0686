"""Head sampling by ticket id: the same hash decides in the SDK, the collector's sampler and ClickHouse."""

from __future__ import annotations

import hashlib

_SPACE = 2**64


def ticket_hash(ticket_id: str) -> int:
    """The ticket's sampling hash: the first 8 bytes of sha256(ticket_id) as a big-endian unsigned int."""
    if not isinstance(ticket_id, str):
        raise TypeError(f"ticket_id must be a str, got {type(ticket_id).__name__}")
    return int.from_bytes(hashlib.sha256(ticket_id.encode("utf-8")).digest()[:8], "big")


def is_sampled(ticket_id: str, rate: float) -> bool:
    """Whether a ticket is kept at a sampling rate in [0, 1]: ``ticket_hash(ticket_id) < rate * 2**64``.

    The decision is deterministic, so every process (and the collector's replay sampler) agrees on it, and
    the tickets kept at a lower rate are a subset of those kept at a higher one.
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"sampling rate must be between 0 and 1, got {rate!r}")
    return ticket_hash(ticket_id) < rate * _SPACE
