"""Chat: one chat account per person, its handle and display name."""

from __future__ import annotations

from typing import Any

from passhat.sandbox.domain import System, tool
from passhat.sandbox.domains.consulting import models as m
from passhat.sandbox.domains.consulting.systems.base import account_tools, create_named, rename_named

ChatTools = account_tools("chat_account", m.chat_accounts, "chat_id", ("active", "deactivated"), "chat account")


class Chat(ChatTools):
    """Chat accounts, their handle taken from the directory username."""

    NAME = "chat"

    @tool("write")
    async def create_chat_account(self, employee_id: str) -> dict[str, Any]:
        """Create a new hire's chat account (handle = directory username); needs their directory account."""
        return create_named(self, m.chat_accounts, "chat_id", "chat", "create_chat_account", employee_id, handle=True)

    @tool("write")
    async def rename_chat_account(self, employee_id: str, display_name: str) -> dict[str, Any]:
        """Change a chat account's display name to the name HRIS now records."""
        return rename_named(self, m.chat_accounts, "chat_id", "rename_chat_account", employee_id, display_name)


system = System("chat", "Chat: accounts, handles and display names.", ("chat_accounts",), Chat)
