"""The passhat command line."""

from __future__ import annotations

import typer

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help="passhat: pass^k reliability for LLM agents."
)

from passhat.collector._cli_serve import register as _register_serve  # noqa: E402

_register_serve(app)
