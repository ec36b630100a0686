"""From passhat.toml to the loop's parts: the agent under test, the domains, the alert rules and channels."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from passhat.collector.alerts import channels_from_config, retry_from_config, rules_from_config
from passhat.collector.config import PasshatConfig
from passhat.collector.loop._cycle import AlertSetup
from passhat.collector.replay import AgentSpec
from passhat.sandbox import Domain, FlawConfig, load_domain
from passhat.sandbox.agents import resolve_agent


def agent_spec(config: PasshatConfig, override: str | None = None) -> AgentSpec:
    """The agent factory named by `agent.factory` (reference | anthropic | module:function)."""
    factory_name = override or config.agent.factory
    # agent.options belong to the configured factory: another agent named on the command line does not get them.
    options = config.agent.options if factory_name == config.agent.factory else {}
    if factory_name == "anthropic" and options:
        raise ValueError(
            f"agent.options ({', '.join(sorted(options))}) do not apply to the anthropic agent: flaws and mixture "
            "are settings of the reference simulation; set agent.model for Claude, or remove agent.options"
        )
    flaws = FlawConfig.off()
    if factory_name == "reference":
        mixture = options.get("mixture")
        if mixture is not None:
            flaws = FlawConfig.from_mixture([(float(w), float(p)) for w, p in mixture])
        elif options.get("flaws", "default") == "default":
            flaws = FlawConfig.default()
    factory = resolve_agent(factory_name, flaws=flaws, model=config.agent.model)
    if ":" in factory_name and options:
        factory = functools.partial(factory, **options)  # your factory's keyword arguments, from agent.options
    label = "ReferenceAgent (offline simulation)" if factory_name == "reference" else factory_name
    if factory_name == "anthropic" and config.agent.model:
        label = f"anthropic ({config.agent.model})"
    return AgentSpec(factory, label, config.agent.version or "", simulated=factory_name == "reference")


def domains_of(config: PasshatConfig) -> Mapping[str, Domain]:
    """The configured sandbox domains, loaded."""
    return {name: load_domain(name) for name in config.domains}


def alert_setup(config: PasshatConfig) -> AlertSetup:
    """The alert rules, channels and retry policy of the config."""
    rules = rules_from_config(config.alerts)
    baseline = max((rule.baseline_periods for rule in rules), default=4)
    return AlertSetup(
        rules=rules,
        channels=channels_from_config(config.alerts, base_dir=config.base_dir),
        retry=retry_from_config(config.alerts),
        baseline_periods=baseline,
    )
