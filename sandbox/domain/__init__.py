"""The domain authoring API: what a sandbox domain provides, how domains are found, and the tool toolkit."""

from passhat.sandbox.domain._domain import (
    ENTRY_POINT_GROUP,
    EXPECTED_SIGNATURE,
    FAILURE_MODES,
    CustomerScript,
    Domain,
    DomainError,
    ReferencePlan,
    Scenario,
    TaskType,
    available_domains,
    load_domain,
)
from passhat.sandbox.domain._toolkit import TOOL_ERROR_TYPES, ServerFactory, evaluate_arithmetic, fail, ok, parse_error

__all__ = [
    "ENTRY_POINT_GROUP",
    "EXPECTED_SIGNATURE",
    "FAILURE_MODES",
    "TOOL_ERROR_TYPES",
    "CustomerScript",
    "Domain",
    "DomainError",
    "ReferencePlan",
    "Scenario",
    "ServerFactory",
    "TaskType",
    "available_domains",
    "evaluate_arithmetic",
    "fail",
    "load_domain",
    "ok",
    "parse_error",
]
