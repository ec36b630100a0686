"""`passhat config check [FILE]`: validate passhat.toml and print every problem on its own line."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.markup import escape

from passhat.collector.cli._console import console, emit_json, error_console
from passhat.collector.config import DEFAULT_CONFIG, ConfigError, PasshatConfig, load_config

config_app = typer.Typer(no_args_is_help=True, help="Check the passhat.toml configuration.")


def default_config_path() -> str:
    """``$PASSHAT_CONFIG``, or passhat.toml in the current folder."""
    return os.environ.get("PASSHAT_CONFIG") or DEFAULT_CONFIG


def domain_problems(config: PasshatConfig) -> list[str]:
    """One problem per configured domain that cannot be loaded (unknown name, broken domain package)."""
    from passhat.sandbox import DomainError, load_domain

    problems: list[str] = []
    for index, name in enumerate(config.domains):
        try:
            load_domain(name)
        except DomainError as exc:
            problems.append(f"domains[{index}]: {exc}")
    return problems


def _checked(path: str) -> PasshatConfig:
    """The config, valid in shape and in the domains it names; `ConfigError` lists every problem."""
    config = load_config(path)
    problems = domain_problems(config)
    if problems:
        raise ConfigError(path, problems)
    return config


def load_or_exit(path: str) -> PasshatConfig:
    """Load the config, or print each problem on one line and exit with status 2."""
    try:
        return _checked(path)
    except ConfigError as exc:
        for problem in exc.problems:
            line = escape(f"{exc.source}: {problem}")
            error_console.print(f"[bold red]passhat: error:[/] {line}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _summary(config: PasshatConfig) -> list[str]:
    s = config.schedule
    when = f"{s.every}, {s.weekday + ' ' if s.every == 'weekly' else ''}{s.time} {s.timezone}"
    channels = ", ".join(f"{name} ({ch.type})" for name, ch in sorted(config.alerts.channels.items())) or "none"
    rules = ", ".join(f"{r.name} ({r.kind})" for r in config.alerts.rules) or "none"
    return [
        f"project: {config.project}; domains: {', '.join(config.domains)}; agent: {config.agent.factory}",
        f"replay: k = {config.replay.k}, {config.replay.trials_per_ticket} trials per ticket, "
        f"{config.replay.tickets_per_task_type} tickets per task type",
        f"schedule: {when if s.enabled else 'disabled'}; reports to {config.report_dir()}",
        f"store: {config.store_url()}",
        f"alert rules: {rules}",
        f"channels: {channels}",
    ]


@config_app.command("check")
def check(
    file: Annotated[
        str | None, typer.Argument(help="The config file (default: $PASSHAT_CONFIG or ./passhat.toml).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: the file, whether it is valid, problems.")
    ] = False,
) -> None:
    """Validate a passhat.toml: one line per problem naming its key, exit status 2 when there is any."""
    path = file or default_config_path()
    if as_json:
        try:
            _checked(path)
        except ConfigError as exc:
            emit_json({"file": path, "valid": False, "problems": exc.problems})
            raise typer.Exit(2) from None
        emit_json({"file": path, "valid": True, "problems": []})
        return
    config = load_or_exit(path)
    console.print(f"[green]{path} is valid[/]", highlight=False)
    for line in _summary(config):
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
