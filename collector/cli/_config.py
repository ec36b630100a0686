"""`passhat config check [FILE]`: validate passhat.toml and print every problem on its own line."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.markup import escape

from passhat.collector.cli._console import console, emit_json, error_console, fail
from passhat.collector.cli._options import JsonOption
from passhat.collector.config import DEFAULT_CONFIG, ConfigError, PasshatConfig, load_config

config_app = typer.Typer(no_args_is_help=True, help="Check the passhat.toml configuration.")


def default_config_path() -> str:
    """``$PASSHAT_CONFIG``, or passhat.toml in the current folder."""
    return os.environ.get("PASSHAT_CONFIG") or DEFAULT_CONFIG


def domain_problems(config: PasshatConfig) -> list[str]:
    """One problem per configured domain that cannot be loaded (unknown name, broken domain package, a
    ``module:attribute`` that does not import or names something else), loaded as replay loads them."""
    from passhat.collector.loop import replay_targets
    from passhat.sandbox import DomainError

    try:
        replay_targets(config)
    except DomainError as whole:
        problems: list[str] = []
        for index, entry in enumerate(config.domains):
            try:
                replay_targets(config.model_copy(update={"domains": [entry]}))
            except DomainError as exc:
                problems.append(f"domains[{index}]: {exc}")
        return problems or [str(whole)]  # an adapter whose Domain is missing fails only with the others
    return []


def agent_problems(config: PasshatConfig) -> list[str]:
    """The problem with `agent.factory`, if it cannot be resolved as a replay resolves it (a `module:attribute`
    that does not import, is misspelt or is not callable; options another agent does not take). Only `config
    check` imports the agent: other commands (reports, runs) do not need its packages."""
    from passhat.collector.loop import agent_spec
    from passhat.sandbox import DomainError

    try:
        agent_spec(config)
    except (DomainError, ValueError, ImportError) as exc:
        key = "agent.options" if str(exc).startswith("agent.options") else "agent.factory"
        return [f"{key}: {exc}"]
    return []


def _checked(path: str) -> PasshatConfig:
    """The config, valid in shape and in the domains it names; `ConfigError` lists every problem."""
    from passhat.collector.store import store_url_problem

    config = load_config(path)
    problems = domain_problems(config)
    # A store URL passhat cannot open, by its scheme: nothing is connected to (a server may be down while the
    # config is checked) and nothing is created; opening it says the same.
    url_problem = None if not config.store.url else store_url_problem(config.store.url)
    if url_problem is not None:
        problems = [f"store.url: {url_problem}", *problems]
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
    from passhat.collector.store import shown_url

    s = config.schedule
    when = f"{s.every}, {s.weekday + ' ' if s.every == 'weekly' else ''}{s.time} {s.timezone}"
    channels = ", ".join(f"{name} ({ch.type})" for name, ch in sorted(config.alerts.channels.items())) or "none"
    rules = ", ".join(f"{r.name} ({r.kind})" for r in config.alerts.rules) or "none"
    return [
        f"project: {config.project}; domains: {', '.join(config.domains)}; agent: {config.agent.factory}",
        f"replay: k = {config.replay.k}, {config.replay.trials_per_ticket} trials per ticket, "
        f"{config.replay.tickets_per_task_type} tickets per task type",
        f"schedule: {when if s.enabled else 'disabled'}; reports to {config.report_dir()}",
        f"store: {shown_url(config.store_url())}",
        f"alert rules: {rules}",
        f"channels: {channels}",
    ]


#: The drop a drop rule's power is quoted for: pass^k falling from 0.4 to 0.2 (the audit's benchmark drop).
POWER_BEFORE, POWER_AFTER = 0.4, 0.2
#: Below this power a rule is flagged: it would miss most real drops of that size.
NEGLIGIBLE_POWER = 0.2


def _task_types(config: PasshatConfig) -> int:
    """How many task types a rule over every task type tests each period: those of the configured domains."""
    from passhat.collector.loop import domains_of
    from passhat.sandbox import DomainError

    try:
        return max(1, sum(len(domain.task_types) for domain in domains_of(config).values()))
    except DomainError:
        return 15  # a domain that does not load is reported elsewhere; assume a typical family


def error_rates(config: PasshatConfig) -> list[str]:
    """Each drop rule's false-alert budget a year and its power at min_tickets, flagging rules near blind."""
    from passhat.collector.reliability import drop_power

    task_types = _task_types(config) if any(r.task_type == "*" for r in config.alerts.rules) else 1
    periods = 52 if config.schedule.every == "weekly" else 365
    lines: list[str] = []
    budget = 0.0
    for rule in config.alerts.rules:
        if rule.kind != "drop":
            lines.append(f"rule {rule.name}: threshold rule, no error rate (it compares a noisy figure to a line)")
            continue
        alpha = 1.0 - rule.confidence
        family = task_types if rule.task_type == "*" else 1
        corrected = rule.correction != "none" or family == 1
        rate = alpha if corrected else 1.0 - (1.0 - alpha) ** family
        budget += rate * periods
        level = alpha / family if rule.correction == "holm" else alpha
        power = drop_power(
            rule.min_tickets, rule.min_tickets * rule.baseline_periods, POWER_BEFORE, POWER_AFTER, alpha=level
        )
        scope = f"{family} task types, {rule.correction}" if family > 1 else "one scope"
        flag = " (NEGLIGIBLE POWER: raise min_tickets)" if power < NEGLIGIBLE_POWER else ""
        lines.append(
            f"rule {rule.name}: at most {rate:.3g} false alerts a period ({scope}); power {100 * power:.0f}% to see "
            f"pass^k fall {POWER_BEFORE:g} -> {POWER_AFTER:g} at {rule.min_tickets} tickets vs "
            f"{rule.baseline_periods} baseline periods{flag}"
        )
    if any(rule.kind == "drop" for rule in config.alerts.rules):
        lines.append(f"false-alert budget: at most {budget:.2g} false drop alerts a year ({periods} periods)")
    return lines


@config_app.command("check")
def check(
    file: Annotated[
        str | None, typer.Argument(help="The config file (default: $PASSHAT_CONFIG or ./passhat.toml).")
    ] = None,
    config_file: Annotated[
        str | None, typer.Option("--config", help="The config file, as the other commands take it (the same as FILE).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Validate a passhat.toml: one line per problem naming its key, exit status 2 when there is any."""
    if file is not None and config_file is not None and file != config_file:
        fail(f"two config files given ({file} and --config {config_file}): give one")
    path = file or config_file or default_config_path()
    if as_json:
        try:
            loaded = _checked(path)
        except ConfigError as exc:
            emit_json({"file": path, "valid": False, "problems": exc.problems})
            raise typer.Exit(2) from None
        problems = agent_problems(loaded)
        if problems:
            emit_json({"file": path, "valid": False, "problems": problems})
            raise typer.Exit(2)
        emit_json({"file": path, "valid": True, "problems": [], "error_rates": error_rates(loaded)})
        return
    config = load_or_exit(path)
    for problem in agent_problems(config):
        line = escape(f"{path}: {problem}")
        error_console.print(f"[bold red]passhat: error:[/] {line}", highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    console.print(f"[green]{path} is valid[/]", highlight=False)
    for line in [*_summary(config), *error_rates(config)]:
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
