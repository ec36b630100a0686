"""From passhat.toml to the loop's parts: the agent under test, the domains, the alert rules and channels."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passhat.collector.alerts import channels_from_config, retry_from_config, rules_from_config
from passhat.collector.config import ObjectImportError, PasshatConfig, add_to_import_path, import_object
from passhat.collector.loop._cycle import AlertSetup
from passhat.collector.loop._deliver import ReportDelivery
from passhat.collector.replay import AgentSpec, ReplaySettings, ScenarioAdapter
from passhat.sandbox import Domain, DomainError, FlawConfig, load_domain
from passhat.sandbox.agents import resolve_agent
from passhat.sandbox.inference import ModelSettings


def replay_settings(config: PasshatConfig) -> ReplaySettings:
    """The configured replay (`[replay]`): what a scheduled run uses, so that it is the period's official run."""
    replay = config.replay
    return ReplaySettings(
        k=replay.k,
        trials=replay.trials_per_ticket,
        tickets_per_task_type=replay.tickets_per_task_type,
        parallel=replay.concurrency,
        stop_early=replay.stop_early,
        min_trials=replay.min_trials,
        executor=replay.executor,
        ray_address=replay.ray_address,
        workers=replay.workers,
        ray_workers=replay.ray_workers,
        ray_concurrency=replay.ray_concurrency,
        ray_env=tuple(replay.ray_env),
        harness_retries=replay.harness_retries,
        infer_intent=replay.infer_intent,
        intent_model=intent_model(config),
    )


def intent_model(config: PasshatConfig) -> ModelSettings | None:
    """The model extractor's endpoint (`[intent]`), when one is configured."""
    if config.intent.provider is None or config.intent.model is None:
        return None
    return ModelSettings(config.intent.provider, config.intent.model, config.intent.base_url)


def _check_callable(name: str, factory: Any, options: Mapping[str, Any]) -> None:
    """A ValueError when ``factory`` cannot be called as each trial calls it, ``factory(context, **options)``:
    before any trial, rather than as the harness failure of every one."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or extension without one: its first call says
        return
    try:
        signature.bind(None, **options)
    except TypeError as exc:
        given = "".join(f", {key}=..." for key in options)
        where = " (agent.options gives its keywords)" if options else ""
        raise ValueError(
            f"agent.factory {name!r} cannot be called as each trial calls it, {name}(context{given}): {exc}; its "
            f"signature is {signature}. A factory takes the trial's TrialContext as its one positional argument"
            f"{where} and returns the agent (docs/agents.md)"
        ) from None


def agent_spec(config: PasshatConfig, override: str | None = None) -> AgentSpec:
    """The agent named by `agent.factory`: reference | anthropic | openai | an http(s):// URL | module:function."""
    factory_name = override or config.agent.factory
    add_to_import_path(config.base_dir)  # your factory may sit beside passhat.toml, like your domain
    # agent.options belong to the configured factory: another agent named on the command line does not get them.
    options = config.agent.options if factory_name == config.agent.factory else {}
    model_agent = factory_name in ("anthropic", "openai")
    if model_agent and set(options) - {"timeout"}:
        raise ValueError(
            f"agent.options ({', '.join(sorted(set(options) - {'timeout'}))}) do not apply to the {factory_name} "
            "agent: it takes timeout only (the seconds one request to its model server may take, 120 by default); "
            "flaws and mixture are settings of the reference simulation, and its model is agent.model"
        )
    service = "://" in factory_name
    if service and set(options) - {"timeout"}:
        raise ValueError(
            f"agent.options ({', '.join(sorted(set(options) - {'timeout'}))}) do not apply to an agent service: it "
            "takes timeout only (the seconds one turn may take, 120 by default)"
        )
    flaws = FlawConfig.off()
    if factory_name == "reference":
        mixture = options.get("mixture")
        if mixture is not None:
            flaws = FlawConfig.from_mixture([(float(w), float(p)) for w, p in mixture])
        elif options.get("flaws", "default") == "default":
            flaws = FlawConfig.default()
    # agent.model and agent.base_url too: they are the configured model agent's (`ignored_model_settings`).
    configured = factory_name == config.agent.factory
    model = config.agent.model if configured else None
    timeout = _turn_timeout(options["timeout"], service) if (service or model_agent) and "timeout" in options else None
    factory = resolve_agent(
        factory_name, flaws=flaws, model=model, base_url=config.agent.base_url if configured else None, timeout=timeout
    )  # fmt: skip
    if ":" in factory_name and "://" not in factory_name:
        _check_callable(factory_name, getattr(factory, "factory", factory), options)
        if options:
            factory = functools.partial(factory, **options)  # your factory's keyword arguments, from agent.options
    label = "ReferenceAgent (offline simulation)" if factory_name == "reference" else factory_name
    if factory_name in ("anthropic", "openai") and model:
        label = f"{factory_name} ({model})"
    return AgentSpec(factory, label, config.agent.version or "", simulated=factory_name == "reference")


def ignored_model_settings(config: PasshatConfig, override: str | None) -> str | None:
    """A note when the agent named on the command line is not the configured one and the config sets the
    configured model agent's agent.model or agent.base_url: the other agent does not use them."""
    if override is None or override == config.agent.factory:
        return None
    given = [f"agent.{key}" for key in ("model", "base_url") if getattr(config.agent, key) is not None]
    if not given:
        return None
    return (
        f"{' and '.join(given)} of passhat.toml belong to its {config.agent.factory} agent: the {override} agent "
        "given with --agent does not use them"
    )


def _turn_timeout(value: object, service: bool) -> float:
    """``agent.options.timeout`` of an agent service (a turn) or a model agent (a request to its server): seconds,
    a positive number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        what = "one turn of the agent service" if service else "one request to the model server"
        raise ValueError(f"agent.options.timeout is the seconds {what} may take, a number above 0; got {value!r}")
    return float(value)


@dataclass(frozen=True)
class ReplayTargets:
    """What the config's ``domains`` name: sandbox domains, and adapters for tickets of your own domains."""

    domains: Mapping[str, Domain]
    adapters: Mapping[str, ScenarioAdapter]


def _is_adapter(found: object) -> bool:
    return all(hasattr(found, name) for name in ("domain", "task_types", "scenario", "images"))


def replay_targets(config: PasshatConfig) -> ReplayTargets:
    """Load every ``domains`` entry: a shipped domain's name, or ``module:attribute`` naming a ``Domain``, a
    ``ScenarioAdapter`` or a function returning one (imported from the config's folder or PYTHONPATH)."""
    domains: dict[str, Domain] = {}
    adapters: dict[str, ScenarioAdapter] = {}
    for entry in config.domains:
        if ":" not in entry:
            domains[entry] = load_domain(entry)
            continue
        try:
            found = import_object(entry, config.base_dir)
        except ObjectImportError as exc:
            raise DomainError(f"domains: {exc}") from None
        if callable(found) and not isinstance(found, Domain) and not _is_adapter(found):
            found = found()
        if isinstance(found, Domain):
            domains[found.name] = found
        elif _is_adapter(found):
            adapters[str(found.domain)] = found
        else:
            raise DomainError(
                f"domains: {entry!r} is a {type(found).__name__}, not a passhat.sandbox.Domain or a ScenarioAdapter "
                "(an object with domain, task_types(), scenario() and images())"
            )
    for name in adapters:
        if name not in domains:
            try:
                domains[name] = load_domain(name)
            except DomainError:
                raise DomainError(
                    f"domains: the adapter for {name!r} needs the sandbox Domain called {name!r} too: add its "
                    "module:attribute (or its installed name) to domains"
                ) from None
    return ReplayTargets(domains, adapters)


def domains_of(config: PasshatConfig) -> Mapping[str, Domain]:
    """The configured sandbox domains, loaded (shipped ones by name, your own by module:attribute)."""
    return replay_targets(config).domains


def alert_setup(config: PasshatConfig) -> AlertSetup:
    """The alert rules, channels and retry policy of the config."""
    rules = rules_from_config(config.alerts)
    baseline = max((rule.baseline_periods for rule in rules), default=4)
    return AlertSetup(
        rules=rules,
        channels=channels_from_config(config.alerts, base_dir=config.base_dir),
        retry=retry_from_config(config.alerts),
        baseline_periods=baseline,
        ui_url=config.report.ui_url,
    )


def report_delivery(config: PasshatConfig, only: list[str] | None = None) -> ReportDelivery:
    """Where the config sends each period's report: the `[report] send_to` channels (or ``only`` these)."""
    names = config.report.send_to if only is None else only
    channels = [c for c in channels_from_config(config.alerts, base_dir=config.base_dir) if c.name in names]
    return ReportDelivery(
        channels=sorted(channels, key=lambda c: names.index(c.name)),
        retry=retry_from_config(config.alerts),
        ui_url=config.report.ui_url,
        webhook_max_bytes=config.report.webhook_max_bytes,
    )
