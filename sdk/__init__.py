"""passhat: measure whether your LLM agent handles each kind of ticket every time (pass^k), not just once.

The SDK is what an agent imports. It stays light: OpenTelemetry and nothing heavy; each integration
(SQLAlchemy, MCP, Anthropic) is imported only when its ``instrument_*`` function is called.
"""

from passhat._config import SETTINGS as CONFIG_SETTINGS
from passhat._config import ConfigurationError
from passhat._export import ExportStats
from passhat._outcome import ToolKind, ToolOutcome, outcome_of
from passhat._pseudonym import PseudonymKey
from passhat._redact import Redactor
from passhat._runtime import Passhat, configure, current, flush, shutdown
from passhat._sampling import is_sampled, ticket_hash
from passhat._state import record_write
from passhat._ticket import Ticket, current_ticket
from passhat._tool import ToolCall, collect_tool_calls, tool
from passhat._top import ticket
from passhat._trial_routing import route_unclaimed_spans_to_trials
from passhat._version import __version__
from passhat.integrations import (
    Instrumentation,
    MissingExtraError,
    instrument_anthropic,
    instrument_mcp,
    instrument_sqlalchemy,
)

__all__ = [
    "CONFIG_SETTINGS",
    "ConfigurationError",
    "ExportStats",
    "Instrumentation",
    "MissingExtraError",
    "Passhat",
    "PseudonymKey",
    "Redactor",
    "Ticket",
    "ToolCall",
    "ToolKind",
    "ToolOutcome",
    "__version__",
    "collect_tool_calls",
    "configure",
    "current",
    "current_ticket",
    "flush",
    "instrument_anthropic",
    "instrument_mcp",
    "instrument_sqlalchemy",
    "is_sampled",
    "outcome_of",
    "record_write",
    "route_unclaimed_spans_to_trials",
    "shutdown",
    "ticket",
    "ticket_hash",
    "tool",
]
