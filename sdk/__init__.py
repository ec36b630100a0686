"""passhat: measure whether your LLM agent handles each kind of ticket every time (pass^k), not just once.

The SDK is what an agent imports. It stays light: OpenTelemetry and nothing heavy.
"""

from passhat._version import __version__

__all__ = ["__version__"]
