"""Verdicts in the ticket list: a production ticket's own verdict, a replayed ticket's attempts, and their filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from passhat.checks import NOT_AGENT_FAULT, SIGNATURES
from passhat.collector.store import ReplaysFilter, Store, TicketRow, VerdictFilter

VERDICTS: tuple[str, ...] = ("passed", "failed", "ungraded")
REPLAYS: dict[str, str] = {
    "all_passed": "every attempt passed",
    "some_failed": "some attempt failed",
    "not_replayed": "not replayed",
}
#: The failure signatures a production verdict can carry (a broken grading leaves the ticket ungraded instead).
SIGNATURE_CHOICES: tuple[str, ...] = tuple(label for label in SIGNATURES if label not in NOT_AGENT_FAULT)


@dataclass(frozen=True)
class GradedFilters:
    """The ticket list's verdict filters, each None when not chosen (or not one of the known values)."""

    verdict: VerdictFilter | None
    signature: str | None
    replays: ReplaysFilter | None

    @property
    def any(self) -> bool:
        return self.verdict is not None or self.signature is not None or self.replays is not None


def graded_filters(verdict: str, signature: str, replays: str) -> GradedFilters:
    """The filters a query string asked for; an unknown value is ignored, as the list's other selects do."""
    return GradedFilters(
        verdict=cast(VerdictFilter, verdict) if verdict in VERDICTS else None,
        signature=signature.strip() or None,
        replays=cast(ReplaysFilter, replays) if replays in REPLAYS else None,
    )


def ticket_grades(store: Store, project: str, rows: Sequence[TicketRow]) -> dict[str, Any]:
    """What the list shows beside each row: production tickets' verdicts and every ticket's replay tally."""
    production = [r.ticket_id for r in rows if r.source == "production"]
    return {
        "verdicts": store.production_verdicts(project, production) if production else {},
        "tallies": store.trial_tallies(project, production) if production else {},
        "verdict_choices": VERDICTS,
        "replays_choices": REPLAYS,
    }
