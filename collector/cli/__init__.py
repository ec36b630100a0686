"""The passhat command line: one module per command group; nothing imports the CLI (it is the leaf)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from passhat.collector.cli._entry import main

if TYPE_CHECKING:
    from passhat.collector.cli._app import app

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    # The Typer app is imported on first use, so the console script can name a missing extra first.
    if name == "app":
        from passhat.collector.cli._app import app

        return app
    raise AttributeError(f"module 'passhat.collector.cli' has no attribute {name!r}")
