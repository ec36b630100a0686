"""Retail's systems, each its own module with its tables and tools."""

from passhat.sandbox.domains.retail.systems import accounts, catalog, orders, support
from passhat.sandbox.domains.retail.systems.common import CANCEL_REASONS, days_since

__all__ = ["CANCEL_REASONS", "accounts", "catalog", "days_since", "orders", "support"]
