"""Named flaw profiles of the ReferenceAgent: simulated agents of known quality, so a table has a ranking.

Each profile is the offline ReferenceAgent with its failure injection set differently. They are SIMULATIONS,
labelled as such wherever they appear ("ReferenceAgent/careful (simulation)"): what they show is how the table,
the rank statistics and the gate behave on agents whose order is known in advance (careful > default >
sloppy), not how any model performs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from passhat.collector.replay import AgentSpec
from passhat.sandbox import DEFAULT_RATES, FlawConfig


def _scaled(factor: float, **overrides: float) -> dict[str, float]:
    return {**{mode: rate * factor for mode, rate in DEFAULT_RATES.items()}, **overrides}


@dataclass(frozen=True)
class FlawProfile:
    """A named setting of the ReferenceAgent's failure injection."""

    name: str
    description: str
    flaws: FlawConfig

    @property
    def label(self) -> str:
        return f"ReferenceAgent/{self.name} (simulation)"


PROFILES: Mapping[str, FlawProfile] = {
    profile.name: profile
    for profile in (
        FlawProfile("off", "no failure injected: follows the policy exactly (scores 100%)", FlawConfig.off()),
        FlawProfile("careful", "a quarter of the default failure rates", FlawConfig(rates=_scaled(0.25))),
        FlawProfile("default", "the shipped failure rates (`--flaws default` of replay)", FlawConfig.default()),
        FlawProfile("sloppy", "three times the default failure rates", FlawConfig(rates=_scaled(3.0))),
        FlawProfile(
            "wrong_entity",
            "half the default rates, but writes to a sibling row (wrong entity) eight times as often",
            FlawConfig(rates=_scaled(0.5, wrong_entity=DEFAULT_RATES["wrong_entity"] * 8)),
        ),
    )
}
"""The profiles `--flaws` names, in the order of their expected quality (off best, sloppy worst)."""


def profile(name: str) -> FlawProfile:
    """The profile called ``name``, or a ValueError listing them."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"no flaw profile {name!r}; profiles: {', '.join(PROFILES)}") from None


def suite_agent(
    agent: str = "reference",
    *,
    flaws: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    version: str = "",
    base_dir: Path | None = None,
    timeout: float | None = None,
) -> AgentSpec:
    """The agent of a suite run by name, as replay takes it (reference, anthropic, openai, an http(s):// URL, or
    module:function; a module beside ``base_dir`` imports too). ``flaws`` names the reference agent's profile
    (default: default) and applies to it only; ``timeout`` is the seconds a model agent's request, or an agent
    service's turn, may take (120 by default). Raises ValueError (or `DomainError`) with what to change."""
    from passhat.collector.config import add_to_import_path
    from passhat.sandbox import ReferenceAgent, resolve_agent

    if agent == "reference":
        chosen = profile(flaws or "default")
        return AgentSpec(ReferenceAgent.factory(chosen.flaws), chosen.label, version, simulated=True)
    if flaws is not None:
        raise ValueError(f"--flaws names a profile of the reference agent's simulated failures, not of {agent}")
    add_to_import_path(base_dir or Path.cwd())
    factory = resolve_agent(agent, model=model, base_url=base_url, timeout=timeout)
    label = f"{agent} ({model})" if model and agent in ("anthropic", "openai") else agent
    return AgentSpec(factory, label, version)
