"""Fixtures for the alerts tests: real local receivers (HTTP on 127.0.0.1, SMTP via aiosmtpd) and a SQLite store."""

from .receivers import auth_mailbox, certificate, mailbox, receiver, store, tls_mailbox

__all__ = ["auth_mailbox", "certificate", "mailbox", "receiver", "store", "tls_mailbox"]
