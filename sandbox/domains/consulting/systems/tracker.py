"""Issue tracker: one tracker account per person."""

from __future__ import annotations

from typing import Any

from passhat.sandbox.domain import System, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import account_tools, create_named, rename_named

TrackerTools = account_tools("tracker_account", m.tracker_accounts, "tracker_id", ("active", "deactivated"), "issue-tracker account")


class Tracker(TrackerTools):
    """Issue-tracker accounts and their display names."""

    NAME = "tracker"

    @tool("write")
    async def create_tracker_account(self, employee_id: str) -> dict[str, Any]:
        """Create a new hire's issue-tracker account; needs their directory account."""
        return create_named(self, m.tracker_accounts, "tracker_id", "trk", "create_tracker_account", employee_id)

    @tool("write")
    async def rename_tracker_account(self, employee_id: str, display_name: str) -> dict[str, Any]:
        """Change an issue-tracker account's display name to the name HRIS now records."""
        return rename_named(self, m.tracker_accounts, "tracker_id", "rename_tracker_account", employee_id, display_name)


system = System("tracker", "Issue tracker: accounts and display names.", ("tracker_accounts",), Tracker)
