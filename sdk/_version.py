"""The installed passhat version."""

__version__ = "0.1.0"
