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
    try:
        app()
    except ModuleNotFoundError as exc:  # a command reached a part of passhat whose extra is not installed
        if not exc.name or exc.name.startswith("passhat"):
            raise
        message = str(exc) if "pip install" in str(exc) else f"{exc.name} is not installed"
        sys.stderr.write(
            f"passhat: error: {message}\n"
            "The command line's extra has every command's: pip install 'passhat[collector]'\n"
        )
        raise SystemExit(2) from None
