"""The banking backend's tables (SQLAlchemy Core): customers, their accounts and cards, and disputes."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

metadata = MetaData()

customers = Table(
    "customers",
    metadata,
    Column("customer_id", String, primary_key=True),
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    Column("date_of_birth", String, nullable=False),
    Column("email", String, nullable=False, unique=True),
    Column("phone", String, nullable=False),
    Column("address", String, nullable=False),
)

accounts = Table(
    "accounts",
    metadata,
    Column("account_id", String, primary_key=True),
    Column("kind", String, nullable=False),  # checking | savings | credit_card
    Column("nickname", String, nullable=False),
    Column("balance", Float, nullable=False),  # money held; for a credit card, the amount owed
    Column("opened_on", String, nullable=False),
    Column("status", String, nullable=False),  # open | closed
)

account_holders = Table(
    "account_holders",
    metadata,
    Column("holder_id", Integer, primary_key=True, autoincrement=True),
    Column("account_id", String, ForeignKey("accounts.account_id"), nullable=False, index=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("role", String, nullable=False),  # primary | joint
)

cards = Table(
    "cards",
    metadata,
    Column("card_id", String, primary_key=True),
    Column("account_id", String, ForeignKey("accounts.account_id"), nullable=False, index=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("kind", String, nullable=False),  # debit | credit
    Column("network", String, nullable=False),
    Column("last_four", String, nullable=False, unique=True),
    Column("expires", String, nullable=False),
    Column("status", String, nullable=False),  # active | locked | blocked
    Column("status_reason", String, nullable=True),
)

merchants = Table(
    "merchants",
    metadata,
    Column("merchant_id", String, primary_key=True),
    Column("name", String, nullable=False, unique=True),
    Column("category", String, nullable=False),  # retail | dining | travel | subscription | atm
    Column("recurring", Boolean, nullable=False),
)

transactions = Table(
    "transactions",
    metadata,
    Column("transaction_id", String, primary_key=True),
    Column("account_id", String, ForeignKey("accounts.account_id"), nullable=False, index=True),
    Column("card_id", String, ForeignKey("cards.card_id"), nullable=True),
    Column("merchant_id", String, ForeignKey("merchants.merchant_id"), nullable=True),
    Column("kind", String, nullable=False),  # purchase | atm_withdrawal | fee | deposit | transfer_in | transfer_out
    Column("fee_type", String, nullable=True),  # monthly_maintenance | overdraft | foreign_transaction | atm
    Column("description", String, nullable=False),
    Column("amount", Float, nullable=False),  # always positive; the kind says which way it moved
    Column("posted_on", String, nullable=False),
    Column("statement_date", String, nullable=False),  # the statement it appears (or will appear) on
    Column("status", String, nullable=False),  # posted | waived
)

disputes = Table(
    "disputes",
    metadata,
    Column("dispute_id", Integer, primary_key=True, autoincrement=True),
    Column("transaction_id", String, ForeignKey("transactions.transaction_id"), nullable=False, index=True),
    Column("account_id", String, ForeignKey("accounts.account_id"), nullable=False),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False),
    Column("reason", String, nullable=False),
    Column("amount", Float, nullable=False),
    Column("status", String, nullable=False),  # open | under_review | resolved_in_favor | denied
    Column("opened_on", String, nullable=False),
    Column("decision_due", String, nullable=False),
    Column("cancelled_on", String, nullable=True),  # cancelled subscriptions: when the customer cancelled
    Column("notes", Text, nullable=False, default=""),
)

provisional_credits = Table(
    "provisional_credits",
    metadata,
    Column("credit_id", Integer, primary_key=True, autoincrement=True),
    Column("dispute_id", Integer, ForeignKey("disputes.dispute_id"), nullable=False, index=True),
    Column("account_id", String, ForeignKey("accounts.account_id"), nullable=False),
    Column("amount", Float, nullable=False),
    Column("status", String, nullable=False),  # issued | reversed | final
    Column("issued_on", String, nullable=False),
)

chargebacks = Table(
    "chargebacks",
    metadata,
    Column("chargeback_id", Integer, primary_key=True, autoincrement=True),
    Column("dispute_id", Integer, ForeignKey("disputes.dispute_id"), nullable=False, index=True),
    Column("merchant_id", String, ForeignKey("merchants.merchant_id"), nullable=False),
    Column("network", String, nullable=False),
    Column("amount", Float, nullable=False),
    Column("status", String, nullable=False),  # filed | won | lost
    Column("filed_on", String, nullable=False),
)

fee_waivers = Table(
    "fee_waivers",
    metadata,
    Column("waiver_id", Integer, primary_key=True, autoincrement=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("account_id", String, ForeignKey("accounts.account_id"), nullable=False),
    Column("transaction_id", String, ForeignKey("transactions.transaction_id"), nullable=False),
    Column("amount", Float, nullable=False),
    Column("waived_on", String, nullable=False),
)

card_replacements = Table(
    "card_replacements",
    metadata,
    Column("replacement_id", Integer, primary_key=True, autoincrement=True),
    Column("card_id", String, ForeignKey("cards.card_id"), nullable=False, index=True),
    Column("reason", String, nullable=False),  # damaged | fraud
    Column("ship_to", String, nullable=False),
    Column("status", String, nullable=False),  # ordered | shipped
    Column("ordered_on", String, nullable=False),
)

travel_notices = Table(
    "travel_notices",
    metadata,
    Column("notice_id", Integer, primary_key=True, autoincrement=True),
    Column("card_id", String, ForeignKey("cards.card_id"), nullable=False, index=True),
    Column("destination", String, nullable=False),
    Column("start_date", String, nullable=False),
    Column("end_date", String, nullable=False),
    Column("created_on", String, nullable=False),
)

fraud_flags = Table(
    "fraud_flags",
    metadata,
    Column("flag_id", Integer, primary_key=True, autoincrement=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("card_id", String, ForeignKey("cards.card_id"), nullable=False),
    Column("reason", String, nullable=False),
    Column("status", String, nullable=False),  # open | closed
    Column("raised_on", String, nullable=False),
)

TODAY = "2026-06-01"
"""The sandbox's fixed 'today': dispute windows, waiver periods and timestamps are computed from it."""

DISPUTE_WINDOW_DAYS = 60
"""A charge can be disputed within this many days of the statement it appeared on."""

WAIVER_PERIOD_DAYS = 365
"""One fee waiver per customer in this many days."""

PROVISIONAL_CREDIT_LIMIT = 500.0
"""The largest dispute that gets a provisional credit while it is investigated."""

DECISION_DAYS = 45
"""A new dispute's decision is due this many days after it is opened."""

TRAVEL_NOTICE_MAX_DAYS = 90
"""The longest trip a travel notice may cover."""
