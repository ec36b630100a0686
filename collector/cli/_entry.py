"""The `passhat` console script: a thin shim that names the missing extra instead of a traceback."""

from __future__ import annotations

import sys


def main() -> None:
    """Run the passhat command line, or explain which extra to install."""
    try:
        from passhat.collector.cli._app import app
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("passhat"):
            sys.stderr.write(
                f"passhat: the command line needs the collector extra ({exc.name} is not installed).\n"
                "Run: pip install 'passhat[collector]'\n"
            )
            raise SystemExit(2) from None
        raise
    app()
