"""Choosing the agent and the customer of a run by name: `reference`, `anthropic`, `openai`, an agent
service's `http(s)://` URL, or a `module:function`."""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from passhat.sandbox.agents._conversation import Agent, AgentFactory, CustomerFactory, TrialContext
from passhat.sandbox.agents._customer import ScriptedCustomer
from passhat.sandbox.agents._model_server import MODEL_TIMEOUT
from passhat.sandbox.agents._reference import FlawConfig, ReferenceAgent
from passhat.sandbox.agents._service import ServiceAgent, is_service_url
from passhat.sandbox.domain import DomainError

AGENTS = ("reference", "anthropic", "openai", "http(s)://host:port/path", "module:function")
CUSTOMERS = ("scripted", "anthropic", "openai")


def resolve_agent(
    spec: str,
    *,
    flaws: FlawConfig | None = None,
    model: str | None = None,
    base_url: str | None = None,
    timeout: float | None = None,
) -> AgentFactory:
    """The AgentFactory for `spec`: the offline ReferenceAgent (a simulation), Claude, an OpenAI-compatible
    model (`base_url`: any Chat Completions server), an agent service at an `http(s)://` URL, or your own factory.

    A `module:function` names a function taking a `TrialContext` and returning an object with
    `async respond(conversation, tools) -> Message`. ``timeout``: the seconds one turn of an agent service, or
    one request to a model agent's server, may take (120 by default).
    """
    if spec == "reference":
        return ReferenceAgent.factory(flaws)
    if spec == "anthropic":
        from passhat.sandbox.agents._anthropic import DEFAULT_MODEL, AnthropicAgent

        return AnthropicAgent.factory(
            model=model or DEFAULT_MODEL, base_url=base_url, timeout=MODEL_TIMEOUT if timeout is None else timeout
        )
    if spec == "openai":
        from passhat.sandbox.agents._openai import DEFAULT_MODEL as OPENAI_MODEL
        from passhat.sandbox.agents._openai import OpenAIAgent

        return OpenAIAgent.factory(
            model=model or OPENAI_MODEL, base_url=base_url, timeout=MODEL_TIMEOUT if timeout is None else timeout
        )
    if is_service_url(spec):
        return ServiceAgent.factory(spec) if timeout is None else ServiceAgent.factory(spec, timeout=timeout)
    module_name, sep, attribute = spec.partition(":")
    if sep and module_name and attribute[:1].isdigit():  # host:port, never module:function
        raise DomainError(
            f"unknown agent {spec!r}: an agent service's URL starts with http:// or https:// (http://{spec})"
        )
    if not sep or not module_name or not attribute:
        raise DomainError(
            f"unknown agent {spec!r}: use reference, anthropic, openai, an http(s):// URL, or module:function"
        )
    return NamedFactory(spec, _imported(spec))


def _imported(spec: str) -> AgentFactory:
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DomainError(f"cannot import {module_name!r} for agent {spec!r}: {exc}") from None
    factory = getattr(module, attribute, None)
    if factory is None:
        names = [name for name in dir(module) if not name.startswith("_") and callable(getattr(module, name, None))]
        close = difflib.get_close_matches(attribute, names, n=1, cutoff=0.6)
        hint = f"did you mean {module_name}:{close[0]}?" if close else "check the name's spelling"
        raise DomainError(f"{module_name!r} has no {attribute!r} (agent {spec!r}): {hint}")
    if not callable(factory):
        kind = type(factory).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        adapter = _ADAPTERS.get(type(factory).__module__.partition(".")[0])
        if adapter is not None:  # the team's framework agent itself, not yet wrapped for a trial
            framework, wrap = adapter
            raise DomainError(
                f"{spec!r} is {framework}'s {kind} itself, not a factory: wrap it for passhat in your module "
                f"(from passhat.sandbox.agents import {wrap}; agent = {wrap}({attribute})) and name that "
                f"({module_name}:agent); docs/agents.md"
            )
        raise DomainError(
            f"{spec!r} is {article} {kind}, not a factory: name a function or class taking a TrialContext"
        )
    return factory  # type: ignore[no-any-return]


_ADAPTERS = {
    "pydantic_ai": ("pydantic-ai", "pydantic_ai_agent"),
    "langgraph": ("LangGraph", "langgraph_agent"),
    "agents": ("the OpenAI Agents SDK", "openai_agents_agent"),
}
"""The frameworks whose agents the adapters wrap, by the top-level module of the agent's type: (framework, the
adapter in `passhat.sandbox.agents`)."""


class NamedFactory:
    """An agent factory a config names as ``module:attribute``. Worker processes import it by that name instead
    of receiving it pickled: a configured object (an adapter around a framework agent, say) may hold what cannot
    be pickled, such as a lambda or a client, and importing its module builds it there as it was built here."""

    def __init__(self, spec: str, factory: AgentFactory) -> None:
        self.spec = spec
        self.factory = factory
        self.__qualname__ = spec

    def __call__(self, context: TrialContext, **options: Any) -> Agent:
        # agent.options arrive as keyword arguments (functools.partial over this factory)
        return self.factory(context, **options)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return named_factory, (self.spec,)

    def __repr__(self) -> str:
        return f"NamedFactory({self.spec!r})"


def named_factory(spec: str) -> NamedFactory:
    """The factory ``module:attribute`` names, imported (how a `NamedFactory` is unpickled in a worker)."""
    return NamedFactory(spec, _imported(spec))


def resolve_customer(
    spec: str, *, model: str | None = None, base_url: str | None = None, timeout: float | None = None
) -> CustomerFactory:
    """The CustomerFactory for `spec`: the offline ScriptedCustomer, or Claude or an OpenAI-compatible model
    playing the customer (``timeout``: the seconds one request to its server may take, 120 by default)."""
    if spec == "scripted":
        return ScriptedCustomer.for_trial
    if spec == "anthropic":
        from passhat.sandbox.agents._anthropic import DEFAULT_MODEL, LLMCustomer

        return LLMCustomer.factory(
            model=model or DEFAULT_MODEL, base_url=base_url, timeout=MODEL_TIMEOUT if timeout is None else timeout
        )
    if spec == "openai":
        from passhat.sandbox.agents._openai import DEFAULT_MODEL as OPENAI_MODEL
        from passhat.sandbox.agents._openai import OpenAICustomer

        return OpenAICustomer.factory(
            model=model or OPENAI_MODEL, base_url=base_url, timeout=MODEL_TIMEOUT if timeout is None else timeout
        )
    raise DomainError(f"unknown customer {spec!r}: use scripted, anthropic or openai")
