"""The collector's web UI at /ui/: task types over time, tickets and their traces, runs, k attempts, alerts."""

from passhat.collector.ui._router import PREFIX, ui_router
from passhat.collector.ui._session import COOKIE_NAME

__all__ = ["COOKIE_NAME", "PREFIX", "ui_router"]
