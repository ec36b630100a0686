"""The retail backend's tables (SQLAlchemy Core): customers, their orders, and what happens to them."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

metadata = MetaData()

customers = Table(
    "customers",
    metadata,
    Column("customer_id", String, primary_key=True),
    Column("first_name", String, nullable=False),
    Column("last_name", String, nullable=False),
    Column("email", String, nullable=False, unique=True),
    Column("phone", String, nullable=False),
)

addresses = Table(
    "addresses",
    metadata,
    Column("address_id", String, primary_key=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("address1", String, nullable=False),
    Column("address2", String, nullable=False, default=""),
    Column("city", String, nullable=False),
    Column("state", String, nullable=False),
    Column("country", String, nullable=False),
    Column("zip", String, nullable=False),
    Column("is_default", Boolean, nullable=False, default=False),
)

payment_methods = Table(
    "payment_methods",
    metadata,
    Column("payment_method_id", String, primary_key=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("kind", String, nullable=False),  # credit_card | paypal | gift_card
    Column("brand", String, nullable=True),
    Column("last_four", String, nullable=True),
    Column("balance", Float, nullable=True),  # gift cards only
)

products = Table(
    "products",
    metadata,
    Column("product_id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("product_type", String, nullable=False),
)

variants = Table(
    "variants",
    metadata,
    Column("variant_id", String, primary_key=True),
    Column("product_id", String, ForeignKey("products.product_id"), nullable=False, index=True),
    Column("options", Text, nullable=False),  # JSON object, e.g. {"color": "red", "size": "M"}
    Column("price", Float, nullable=False),
    Column("available", Boolean, nullable=False),
    Column("stock", Integer, nullable=False),
)

orders = Table(
    "orders",
    metadata,
    Column("order_id", String, primary_key=True),
    Column("customer_id", String, ForeignKey("customers.customer_id"), nullable=False, index=True),
    Column("status", String, nullable=False),  # pending | processed | shipped | delivered | cancelled | ...
    Column("payment_method_id", String, ForeignKey("payment_methods.payment_method_id"), nullable=False),
    Column("created_at", String, nullable=False),
    Column("ship_address1", String, nullable=False),
    Column("ship_address2", String, nullable=False),
    Column("ship_city", String, nullable=False),
    Column("ship_state", String, nullable=False),
    Column("ship_country", String, nullable=False),
    Column("ship_zip", String, nullable=False),
    Column("items_modified", Boolean, nullable=False, default=False),
    Column("cancel_reason", String, nullable=True),  # what the customer confirmed, when cancelled
)

order_items = Table(
    "order_items",
    metadata,
    Column("item_id", String, primary_key=True),
    Column("order_id", String, ForeignKey("orders.order_id"), nullable=False, index=True),
    Column("product_id", String, ForeignKey("products.product_id"), nullable=False),
    Column("variant_id", String, ForeignKey("variants.variant_id"), nullable=False),
    Column("price", Float, nullable=False),
)

fulfilments = Table(
    "fulfilments",
    metadata,
    Column("fulfilment_id", String, primary_key=True),
    Column("order_id", String, ForeignKey("orders.order_id"), nullable=False, index=True),
    Column("carrier", String, nullable=False),
    Column("tracking_number", String, nullable=False),
    Column("shipped_at", String, nullable=False),
    Column("delivered_at", String, nullable=True),
)

returns = Table(
    "returns",
    metadata,
    Column("return_id", Integer, primary_key=True, autoincrement=True),
    Column("order_id", String, ForeignKey("orders.order_id"), nullable=False, index=True),
    Column("item_ids", Text, nullable=False),  # JSON list, sorted
    Column("payment_method_id", String, nullable=False),
    Column("refund_amount", Float, nullable=False),
    Column("status", String, nullable=False),
    Column("created_at", String, nullable=False),
)

exchanges = Table(
    "exchanges",
    metadata,
    Column("exchange_id", Integer, primary_key=True, autoincrement=True),
    Column("order_id", String, ForeignKey("orders.order_id"), nullable=False, index=True),
    Column("item_ids", Text, nullable=False),  # JSON list, sorted
    Column("new_variant_ids", Text, nullable=False),  # JSON list, in the order of item_ids
    Column("payment_method_id", String, nullable=False),
    Column("price_difference", Float, nullable=False),
    Column("status", String, nullable=False),
    Column("created_at", String, nullable=False),
)

payment_transactions = Table(
    "payment_transactions",
    metadata,
    Column("transaction_id", Integer, primary_key=True, autoincrement=True),
    Column("order_id", String, ForeignKey("orders.order_id"), nullable=False, index=True),
    Column("payment_method_id", String, nullable=False),
    Column("kind", String, nullable=False),  # charge | refund
    Column("amount", Float, nullable=False),
    Column("created_at", String, nullable=False),
)

notes = Table(
    "notes",
    metadata,
    Column("note_id", Integer, primary_key=True, autoincrement=True),
    Column("customer_id", String, nullable=True),
    Column("kind", String, nullable=False),  # transfer | remark
    Column("body", Text, nullable=False),
    Column("created_at", String, nullable=False),
)

TODAY = "2026-05-15"
"""The sandbox's fixed 'today': return windows and timestamps are computed from it, so trials reproduce."""

RETURN_WINDOW_DAYS = 30

CANCEL_REASONS = ("no longer needed", "ordered by mistake")
"""The reasons a pending order may be cancelled for (the backend stores the one the customer confirmed)."""
