"""The `passhat` console script: a thin shim that names the missing extra instead of a traceback."""

from __future__ import annotations

import sys


def main() -> None:
    """Run the passhat command line, or explain which extra to install."""
    try:
        from passhat.collector.cli._app import app

        app()
    except ModuleNotFoundError as exc:  # the command line, or a part of passhat a command reached, needs an extra
        if not exc.name or exc.name.startswith("passhat"):
            raise
        message = str(exc) if "pip install" in str(exc) else f"{exc.name} is not installed"
        sys.stderr.write(
            f"passhat: error: {message}\n"
            "The command line's extra has every command's: pip install 'passhat[collector]'\n"
        )
        raise SystemExit(2) from None
