"""The passhat command line."""

from __future__ import annotations

import typer

from passhat.collector._cli_demo import demo
from passhat.collector._cli_serve import register as _register_serve
from passhat.collector._cli_stats import calc, fit

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="passhat: does your LLM agent handle each kind of ticket every time (pass^k)?",
)
app.command()(demo)
app.command()(fit)
app.command()(calc)
_register_serve(app)  # serve, keys
