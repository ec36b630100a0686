"""Fixtures for the alerts tests: real local receivers (HTTP on 127.0.0.1, SMTP via aiosmtpd) and a SQLite store."""
