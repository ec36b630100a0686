"""passhat.sandbox: domains, simulated customers, agents and the trial runner.

One real ticket becomes k repeated trials: an isolated backend with real tables, tools served over MCP, a
written policy, and a simulated customer who knows what they want but not what the agent needs.
"""

from passhat.sandbox.agents._resolve import resolve_agent, resolve_customer
from passhat.sandbox.agents._conversation import (
    Agent,
    AgentFactory,
    Customer,
    CustomerFactory,
    Message,
    Toolbox,
    ToolResult,
    ToolTransportError,
    TrialContext,
    Usage,
)
from passhat.sandbox.agents._customer import ScriptedCustomer
from passhat.sandbox.domain._domain import (
    ENTRY_POINT_GROUP,
    EXPECTED_SIGNATURE,
    FAILURE_MODES,
    CustomerScript,
    Domain,
    DomainError,
    Scenario,
    TaskType,
    available_domains,
    load_domain,
)
from passhat.sandbox.trial._overlay import OverlayError, RowImage, apply_overlay
from passhat.sandbox.agents._reference import (
    DEFAULT_RATES,
    FlawConfig,
    ReferenceAgent,
    ReferencePlan,
    ReferenceRun,
    identify_customer,
    mangle,
    perform_write,
)
from passhat.sandbox.trial._runner import RunConfig, TrialResult, run_trial, run_trials
from passhat.sandbox.trial._database import Sandbox, TrialDatabase, build_database
from passhat.sandbox.trial._serve import TRANSPORTS, connect, serve
from passhat.sandbox.domain._toolkit import TOOL_ERROR_TYPES, ServerFactory, evaluate_arithmetic, fail, ok

__all__ = [
    "DEFAULT_RATES",
    "ENTRY_POINT_GROUP",
    "EXPECTED_SIGNATURE",
    "FAILURE_MODES",
    "TOOL_ERROR_TYPES",
    "TRANSPORTS",
    "Agent",
    "AgentFactory",
    "Customer",
    "CustomerFactory",
    "CustomerScript",
    "Domain",
    "DomainError",
    "FlawConfig",
    "Message",
    "OverlayError",
    "ReferenceAgent",
    "ReferencePlan",
    "ReferenceRun",
    "RowImage",
    "RunConfig",
    "Sandbox",
    "Scenario",
    "ScriptedCustomer",
    "ServerFactory",
    "TaskType",
    "ToolResult",
    "ToolTransportError",
    "Toolbox",
    "TrialContext",
    "TrialDatabase",
    "TrialResult",
    "Usage",
    "apply_overlay",
    "available_domains",
    "build_database",
    "connect",
    "evaluate_arithmetic",
    "fail",
    "identify_customer",
    "load_domain",
    "mangle",
    "ok",
    "perform_write",
    "resolve_agent",
    "resolve_customer",
    "run_trial",
    "run_trials",
    "serve",
]
