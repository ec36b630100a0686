"""Agents and customers of a trial: the protocols, the ReferenceAgent, customers, model and framework adapters."""

from passhat.sandbox.agents._conversation import (
    Agent,
    AgentError,
    AgentFactory,
    Customer,
    CustomerFactory,
    McpEndpoint,
    Message,
    Toolbox,
    ToolResult,
    ToolTransportError,
    TrialContext,
    Usage,
    usage_of,
)
from passhat.sandbox.agents._customer import ScriptedCustomer
from passhat.sandbox.agents._framework import ask_approval
from passhat.sandbox.agents._langgraph import langgraph_agent
from passhat.sandbox.agents._model_server import (
    ModelEndpoint,
    ModelFactory,
    ModelServerError,
    ModelServerUnusableError,
    ModelServerWatch,
    check_model_servers,
)
from passhat.sandbox.agents._openai import OpenAIAgent, OpenAICustomer
from passhat.sandbox.agents._openai_agents import openai_agents_agent
from passhat.sandbox.agents._procedures import identify, lookup, mangle, perform_write
from passhat.sandbox.agents._pydantic_ai import pydantic_ai_agent
from passhat.sandbox.agents._reference import DEFAULT_RATES, FlawConfig, ReferenceAgent, ReferenceRun
from passhat.sandbox.agents._resolve import resolve_agent, resolve_customer
from passhat.sandbox.agents._service import ServiceAgent

__all__ = [
    "DEFAULT_RATES",
    "Agent",
    "AgentError",
    "AgentFactory",
    "Customer",
    "CustomerFactory",
    "FlawConfig",
    "McpEndpoint",
    "Message",
    "ModelEndpoint",
    "ModelFactory",
    "ModelServerError",
    "ModelServerUnusableError",
    "ModelServerWatch",
    "OpenAIAgent",
    "OpenAICustomer",
    "ReferenceAgent",
    "ReferenceRun",
    "ScriptedCustomer",
    "ServiceAgent",
    "ToolResult",
    "ToolTransportError",
    "Toolbox",
    "TrialContext",
    "Usage",
    "ask_approval",
    "check_model_servers",
    "identify",
    "langgraph_agent",
    "lookup",
    "mangle",
    "openai_agents_agent",
    "perform_write",
    "pydantic_ai_agent",
    "resolve_agent",
    "resolve_customer",
    "usage_of",
]
