"""Counts in messages: "1 ticket", "2 tickets", never "1 tickets" or "ticket(s)"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and the noun, singular for one: ``counted(1, "task type")`` is "1 task type"."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"
