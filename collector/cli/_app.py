"""The passhat command line: one command per job, each in the module named after it."""

from __future__ import annotations

import typer

from passhat.collector.cli import _bench, _replay
from passhat.collector.cli._alerts import alerts_app
from passhat.collector.cli._config import config_app
from passhat.collector.cli._demo import demo
from passhat.collector.cli._errors import OneLineErrors
from passhat.collector.cli._grade import grade
from passhat.collector.cli._report import report
from passhat.collector.cli._runs import runs_app
from passhat.collector.cli._sandbox import sandbox_app
from passhat.collector.cli._serve import register as _register_serve
from passhat.collector.cli._stats import calc, fit
from passhat.collector.cli._suite import suite_app

app = typer.Typer(
    cls=OneLineErrors,
    rich_markup_mode=None,  # help texts write [default: ...] and [report]: plain text, not Rich markup
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="passhat: does your LLM agent handle each kind of ticket every time (pass^k)?",
)
app.command()(demo)
app.command()(fit)
app.command()(calc)
_bench.register(app)  # bench: a shipped domain's generated scenarios
_replay.register(app)  # replay: production tickets from the store (and the deprecated replay --domain)
app.command()(report)
app.command()(grade)
_register_serve(app)  # serve, keys
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(config_app, name="config")
app.add_typer(alerts_app, name="alerts")
app.add_typer(runs_app, name="runs")
app.add_typer(suite_app, name="suite")
