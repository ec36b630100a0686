"""Chat: one chat account per person, its handle and display name."""

from __future__ import annotations

from typing import Any

from passhat.sandbox.domain import System, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import PersonAccounts, create_named, rename_named


class Chat(PersonAccounts):
    """Chat accounts, their handle taken from the directory username."""

    NAME = "chat"

    TABLE = m.chat_accounts
    KEY = "chat_id"
    STATUSES = ("active", "deactivated")
    WHAT = "chat account"

    @tool("lookup")
    async def get_chat_account(self, employee_id: str) -> dict[str, Any]:
        """An employee's chat account: handle, display name and status."""
        return self._get_record(employee_id)

    @tool("write")
    async def set_chat_account_status(self, employee_id: str, status: str) -> dict[str, Any]:
        """Set the chat account's status (active, deactivated); offboarding turns it off, a leave
        suspends it where it can be suspended, a return or rehire makes it active."""
        return self._set_record_status("set_chat_account_status", employee_id, status)

    @tool("write")
    async def create_chat_account(self, employee_id: str) -> dict[str, Any]:
        """Create a new hire's chat account (handle = directory username); needs their directory account."""
        return create_named(self, m.chat_accounts, "chat_id", "chat", "create_chat_account", employee_id, handle=True)

    @tool("write")
    async def rename_chat_account(self, employee_id: str, display_name: str) -> dict[str, Any]:
        """Change a chat account's display name to the name HRIS now records."""
        return rename_named(self, m.chat_accounts, "chat_id", "rename_chat_account", employee_id, display_name)


system = System("chat", "Chat: accounts, handles and display names.", ("chat_accounts",), Chat)
