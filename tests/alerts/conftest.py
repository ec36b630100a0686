"""Fixtures for the alerts tests: real local receivers (HTTP on 127.0.0.1, SMTP via aiosmtpd) and a SQLite store."""

from .receivers import auth_mailbox, mailbox, receiver, store

__all__ = ["auth_mailbox", "mailbox", "receiver", "store"]
