"""The bank's systems, one module each: customers (identity), accounts, cards and disputes."""

from passhat.sandbox.domains.banking.systems import accounts, cards, customers, disputes

__all__ = ["accounts", "cards", "customers", "disputes"]
