"""Agents and customers of a trial: the conversation protocols, the ReferenceAgent, the scripted and model customers."""

from passhat.sandbox.agents._conversation import (
    Agent,
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
from passhat.sandbox.agents._procedures import identify, identify_customer, lookup, mangle, perform_write
from passhat.sandbox.agents._reference import DEFAULT_RATES, FlawConfig, ReferenceAgent, ReferenceRun
from passhat.sandbox.agents._resolve import resolve_agent, resolve_customer

__all__ = [
    "DEFAULT_RATES",
    "Agent",
    "AgentFactory",
    "Customer",
    "CustomerFactory",
    "FlawConfig",
    "McpEndpoint",
    "Message",
    "ReferenceAgent",
    "ReferenceRun",
    "ScriptedCustomer",
    "ToolResult",
    "ToolTransportError",
    "Toolbox",
    "TrialContext",
    "Usage",
    "identify",
    "identify_customer",
    "lookup",
    "mangle",
    "perform_write",
    "resolve_agent",
    "resolve_customer",
    "usage_of",
]
