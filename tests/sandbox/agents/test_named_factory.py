"""An agent factory named `module:attribute` travels to worker processes by its name, whatever it holds."""

from __future__ import annotations

import pathlib
import pickle
import sys
import uuid
from collections.abc import Iterator

import pytest

from passhat.sandbox import DomainError
from passhat.sandbox.agents._resolve import NamedFactory, resolve_agent

MODULE = """
class Adapter:
    def __init__(self, deps):
        self.deps = deps  # a lambda: an instance holding it cannot be pickled by value

    def __call__(self, context):
        return ("agent for", context, self.deps(context))


replay_agent = Adapter(lambda context: context * 2)


def make(context, tone="plain"):
    return ("made", context, tone)
"""


@pytest.fixture
def module(tmp_path: pathlib.Path) -> Iterator[str]:
    name = f"adapter_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        yield name
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_a_configured_object_holding_a_lambda_is_sent_by_its_name(module: str) -> None:
    factory = resolve_agent(f"{module}:replay_agent")
    assert isinstance(factory, NamedFactory)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(factory.factory)  # by value it cannot travel
    again = pickle.loads(pickle.dumps(factory))
    assert again("ctx") == factory("ctx") == ("agent for", "ctx", "ctxctx")
    assert len(pickle.dumps(factory)) < 200  # its name, not its state


def test_a_misspelt_or_uncallable_factory_is_one_clear_error(module: str) -> None:
    with pytest.raises(DomainError, match="has no 'replay_agnet'"):
        resolve_agent(f"{module}:replay_agnet")
    with pytest.raises(DomainError, match="is a str, not a factory"):
        resolve_agent(f"{module}:__name__")


def test_agent_options_reach_the_named_factory_in_a_worker(module: str) -> None:
    import functools

    factory = functools.partial(resolve_agent(f"{module}:make"), tone="warm")  # as agent.options are given
    again = pickle.loads(pickle.dumps(factory))
    assert type(again.func) is NamedFactory
    assert again("ctx") == ("made", "ctx", "warm")


FRAMEWORK_AGENTS = """
from agents import Agent as SdkAgent
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

support = Agent(TestModel())
builder = StateGraph(MessagesState)
builder.add_node("model", lambda state: state)
builder.add_edge(START, "model")
builder.add_edge("model", END)
graph = builder.compile()
triage = SdkAgent(name="triage")
"""


@pytest.mark.parametrize(
    ("attribute", "framework", "adapter"),
    [
        ("support", "pydantic-ai's Agent", "pydantic_ai_agent(support)"),
        ("graph", "LangGraph's CompiledStateGraph", "langgraph_agent(graph)"),
        ("triage", "the OpenAI Agents SDK's Agent", "openai_agents_agent(triage)"),
    ],
)
def test_a_framework_agent_named_itself_is_told_which_adapter_wraps_it(
    tmp_path: pathlib.Path, attribute: str, framework: str, adapter: str
) -> None:
    """A team naming its framework agent itself (`--agent app:support`) rather than a factory is told which
    adapter wraps it and how (it was told only "is a Agent, not a factory")."""
    name = f"frameworks_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(FRAMEWORK_AGENTS)
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(DomainError) as raised:
            resolve_agent(f"{name}:{attribute}")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
    said = str(raised.value)
    assert f"is {framework} itself, not a factory" in said
    assert f"agent = {adapter}" in said and f"({name}:agent)" in said
