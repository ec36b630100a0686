"""Issue tracker: one tracker account per person."""

from __future__ import annotations

from typing import Any

from passhat.sandbox.domain import System, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import PersonAccounts, create_named, rename_named


class Tracker(PersonAccounts):
    """Issue-tracker accounts and their display names."""

    NAME = "tracker"

    TABLE = m.tracker_accounts
    KEY = "tracker_id"
    STATUSES = ("active", "deactivated")
    WHAT = "issue-tracker account"

    @tool("lookup")
    async def get_tracker_account(self, employee_id: str) -> dict[str, Any]:
        """An employee's issue-tracker account: display name and status."""
        return self._get_record(employee_id)

    @tool("write")
    async def set_tracker_account_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Set the issue-tracker account's status (active, deactivated); offboarding turns it off, a leave
        suspends it where it can be suspended, a return or rehire makes it active."""
        return self._set_record_status("set_tracker_account_status", employee_id, status)

    @tool("write")
    async def create_tracker_account(self, employee_id: str) -> dict[str, Any]:
        """Create a new hire's issue-tracker account; needs their directory account."""
        return create_named(self, m.tracker_accounts, "tracker_id", "trk", "create_tracker_account", employee_id)

    @tool("write")
    async def rename_tracker_account(self, employee_id: str, display_name: str) -> dict[str, Any]:
        """Change an issue-tracker account's display name to the name HRIS now records."""
        return rename_named(self, m.tracker_accounts, "tracker_id", "rename_tracker_account", employee_id, display_name)


system = System("tracker", "Issue tracker: accounts and display names.", ("tracker_accounts",), Tracker)
