"""The ``instrument_*`` integrations: each imports its library only when called and returns an undo handle."""

from passhat.integrations._entry import instrument_anthropic, instrument_mcp, instrument_sqlalchemy
from passhat.integrations._handle import Instrumentation, MissingExtraError, require

__all__ = [
    "Instrumentation",
    "MissingExtraError",
    "instrument_anthropic",
    "instrument_mcp",
    "instrument_sqlalchemy",
    "require",
]
