"""A sampled ticket a replay run could not rebuild: what the run keeps of it (`ReplayRun.params`) and reports.

It lives with the store's rows because a replay run stores it and both the replay and the report read it back;
the two are of the same rank and may not import each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NotReplayable:
    """A sampled ticket the sandbox could not rebuild (or whose trials say nothing about the agent), why, and
    what would fix it (``fix``, empty when there is nothing to say beyond the reason)."""

    ticket_id: str
    task_type: str
    reason: str
    fix: str = ""

    def to_dict(self) -> dict[str, str]:
        found = {"ticket_id": self.ticket_id, "task_type": self.task_type, "reason": self.reason}
        return found | ({"fix": self.fix} if self.fix else {})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NotReplayable:
        """Read back what `to_dict` wrote (a replay run's ``params["not_replayable"]``)."""
        return cls(
            str(data.get("ticket_id")), str(data.get("task_type")), str(data.get("reason")), str(data.get("fix") or "")
        )
