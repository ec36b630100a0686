"""A deterministic retail data generator: the same (seed, size) always gives the same database."""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any

from sqlalchemy import Connection, insert

from passhat.sandbox.domain import DomainError
from passhat.sandbox.domains.retail import models as m

SIZES: dict[str, tuple[int, int, int]] = {
    # customers, min orders per customer, max orders per customer
    "small": (150, 3, 6),
    "default": (500, 1, 3),
}

_FIRST = (
    "Ava",
    "Liam",
    "Noah",
    "Emma",
    "Olivia",
    "Mia",
    "Lucas",
    "Yusuf",
    "Sofia",
    "Mei",
    "Omar",
    "Ines",
    "Ravi",
    "Chloe",
    "Mateo",
    "Aisha",
    "Ethan",
    "Nora",
    "Hugo",
    "Lena",
    "Daniel",
    "Priya",
    "Ivan",
    "Zara",
    "Leo",
    "Amara",
    "Felix",
    "Hana",
    "Kai",
    "Maya",
)
_LAST = (
    "Garcia",
    "Smith",
    "Chen",
    "Patel",
    "Kim",
    "Novak",
    "Silva",
    "Muller",
    "Rossi",
    "Haddad",
    "Okafor",
    "Larsen",
    "Ito",
    "Moreau",
    "Kowalski",
    "Brown",
    "Lopez",
    "Nguyen",
    "Sato",
    "Schmidt",
    "Costa",
    "Ahmed",
    "Jensen",
    "Dubois",
    "Walker",
    "Reyes",
    "Fischer",
    "Tanaka",
    "Ali",
    "Berg",
)
_STREETS = (
    "Oak",
    "Maple",
    "Cedar",
    "Pine",
    "Elm",
    "Lake",
    "Hill",
    "River",
    "Park",
    "Sunset",
    "Willow",
    "Spruce",
)
_CITIES = (
    ("Austin", "TX", "787"),
    ("Denver", "CO", "802"),
    ("Seattle", "WA", "981"),
    ("Boston", "MA", "021"),
    ("Chicago", "IL", "606"),
    ("Phoenix", "AZ", "850"),
    ("Portland", "OR", "972"),
    ("Atlanta", "GA", "303"),
)
_CATALOG: tuple[tuple[str, str, dict[str, tuple[str, ...]], float], ...] = (
    ("T-Shirt", "apparel", {"color": ("black", "white", "blue"), "size": ("S", "M", "L")}, 24.0),
    ("Jeans", "apparel", {"fit": ("slim", "regular"), "size": ("30", "32", "34")}, 59.0),
    ("Running Shoes", "footwear", {"color": ("grey", "red"), "size": ("8", "9", "10", "11")}, 110.0),
    ("Backpack", "bags", {"color": ("black", "green", "navy"), "capacity": ("20L", "30L")}, 79.0),
    ("Water Bottle", "kitchen", {"material": ("steel", "glass"), "capacity": ("500ml", "1L")}, 19.0),
    ("Headphones", "electronics", {"color": ("black", "silver"), "type": ("wired", "wireless")}, 149.0),
    ("Desk Lamp", "home", {"color": ("white", "black"), "bulb": ("LED", "halogen")}, 45.0),
    ("Rain Jacket", "apparel", {"color": ("yellow", "navy"), "size": ("S", "M", "L", "XL")}, 129.0),
    ("Coffee Mug", "kitchen", {"color": ("white", "blue", "red"), "capacity": ("300ml", "450ml")}, 14.0),
    ("Smart Watch", "electronics", {"color": ("black", "rose"), "band": ("silicone", "leather")}, 249.0),
    (
        "Mechanical Keyboard",
        "electronics",
        {"switch": ("linear", "tactile", "clicky"), "layout": ("US", "UK")},
        99.0,
    ),
    ("Yoga Mat", "sports", {"color": ("purple", "teal"), "thickness": ("4mm", "6mm")}, 35.0),
)
_CARRIERS = ("UPS", "FedEx", "USPS", "DHL")
_STATUS_WEIGHTS = (("pending", 28), ("processed", 6), ("shipped", 12), ("delivered", 48), ("cancelled", 6))
_TODAY = dt.date.fromisoformat(m.TODAY)


def _variants(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    products: list[dict[str, Any]] = []
    variants: list[dict[str, Any]] = []
    for p_index, (name, product_type, options, base_price) in enumerate(_CATALOG):
        product_id = f"P{1000 + p_index}"
        products.append({"product_id": product_id, "name": name, "product_type": product_type})
        keys = list(options)
        combos: list[dict[str, str]] = [{}]
        for key in keys:
            combos = [{**combo, key: value} for combo in combos for value in options[key]]
        for v_index, combo in enumerate(combos):
            available = rng.random() > 0.15
            variants.append(
                {
                    "variant_id": f"V{1000 + p_index}{v_index:02d}",
                    "product_id": product_id,
                    "options": json.dumps(combo, sort_keys=True),
                    "price": round(base_price + rng.choice((-3.0, -1.5, 0.0, 1.5, 4.0, 6.5)), 2),
                    "available": available,
                    "stock": rng.randint(3, 40) if available else 0,
                }
            )
    return products, variants


def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Fill an empty retail database with customers, payment methods, a catalog and orders."""
    if size not in SIZES:
        raise DomainError(f"unknown retail seed size {size!r}; choose one of {', '.join(SIZES)}")
    n_customers, min_orders, max_orders = SIZES[size]
    rng = random.Random(f"retail/{seed}")
    products, variants = _variants(rng)
    by_product: dict[str, list[dict[str, Any]]] = {}
    for variant in variants:
        by_product.setdefault(variant["product_id"], []).append(variant)

    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in m.metadata.tables}
    rows["products"], rows["variants"] = products, variants
    used_emails: set[str] = set()
    order_counter = 0
    for c_index in range(n_customers):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        customer_id = f"{first.lower()}_{last.lower()}_{1000 + c_index}"
        email = f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@example.com"
        while email in used_emails:
            email = f"{first.lower()}.{last.lower()}{rng.randint(100, 9999)}@example.com"
        used_emails.add(email)
        rows["customers"].append(
            {
                "customer_id": customer_id,
                "first_name": first,
                "last_name": last,
                "email": email,
                "phone": f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            }
        )
        city, state, zip_prefix = rng.choice(_CITIES)
        customer_addresses = []
        for a_index in range(rng.choice((1, 2, 2))):
            address = {
                "address_id": f"A{c_index:04d}{a_index}",
                "customer_id": customer_id,
                "address1": f"{rng.randint(10, 999)} {rng.choice(_STREETS)} Street",
                "address2": rng.choice(("", "", f"Apt {rng.randint(1, 40)}")),
                "city": city,
                "state": state,
                "country": "USA",
                "zip": f"{zip_prefix}{rng.randint(10, 99)}",
                "is_default": a_index == 0,
            }
            customer_addresses.append(address)
        rows["addresses"].extend(customer_addresses)
        methods: list[dict[str, Any]] = [
            {
                "payment_method_id": f"credit_card_{c_index:04d}",
                "customer_id": customer_id,
                "kind": "credit_card",
                "brand": rng.choice(("visa", "mastercard", "amex")),
                "last_four": f"{rng.randint(0, 9999):04d}",
                "balance": None,
            }
        ]
        if rng.random() < 0.7:
            methods.append(
                {
                    "payment_method_id": f"paypal_{c_index:04d}",
                    "customer_id": customer_id,
                    "kind": "paypal",
                    "brand": None,
                    "last_four": None,
                    "balance": None,
                }
            )
        if rng.random() < 0.6:
            methods.append(
                {
                    "payment_method_id": f"gift_card_{c_index:04d}",
                    "customer_id": customer_id,
                    "kind": "gift_card",
                    "brand": None,
                    "last_four": None,
                    "balance": float(rng.choice((5, 10, 20, 25, 40, 60, 150, 300))),
                }
            )
        rows["payment_methods"].extend(methods)
        for _ in range(rng.randint(min_orders, max_orders)):
            order_counter += 1
            order_id = f"#W{1000000 + order_counter * 7919 % 9000000}"
            status = rng.choices([s for s, _ in _STATUS_WEIGHTS], [w for _, w in _STATUS_WEIGHTS])[0]
            address = rng.choice(customer_addresses)
            method = rng.choice(methods)
            created = _TODAY - dt.timedelta(days=rng.randint(1, 20) if status == "pending" else rng.randint(5, 90))
            rows["orders"].append(
                {
                    "order_id": order_id,
                    "customer_id": customer_id,
                    "status": status,
                    "payment_method_id": method["payment_method_id"],
                    "created_at": created.isoformat(),
                    "ship_address1": address["address1"],
                    "ship_address2": address["address2"],
                    "ship_city": address["city"],
                    "ship_state": address["state"],
                    "ship_country": address["country"],
                    "ship_zip": address["zip"],
                    "items_modified": False,
                    # Chosen without the generator so the rest of the seed stays as it was.
                    "cancel_reason": m.CANCEL_REASONS[order_counter % 2] if status == "cancelled" else None,
                }
            )
            total = 0.0
            chosen_products = rng.sample(products, rng.randint(1, 4))
            for i_index, product in enumerate(chosen_products):
                variant = rng.choice(by_product[product["product_id"]])
                total += variant["price"]
                rows["order_items"].append(
                    {
                        "item_id": f"I{order_counter:05d}{i_index}",
                        "order_id": order_id,
                        "product_id": product["product_id"],
                        "variant_id": variant["variant_id"],
                        "price": variant["price"],
                    }
                )
            rows["payment_transactions"].append(
                {
                    "order_id": order_id,
                    "payment_method_id": method["payment_method_id"],
                    "kind": "charge",
                    "amount": round(total, 2),
                    "created_at": created.isoformat(),
                }
            )
            if status in ("shipped", "delivered"):
                shipped = created + dt.timedelta(days=2)
                if status == "delivered":
                    # Most deliveries fall inside the return window; some are older, for the refusals.
                    age = rng.randint(2, 25) if rng.random() < 0.75 else rng.randint(40, 80)
                    delivered: str | None = (_TODAY - dt.timedelta(days=age)).isoformat()
                    shipped = min(shipped, _TODAY - dt.timedelta(days=age + 1))
                else:
                    delivered = None
                rows["fulfilments"].append(
                    {
                        "fulfilment_id": f"F{order_counter:05d}",
                        "order_id": order_id,
                        "carrier": rng.choice(_CARRIERS),
                        "tracking_number": f"{rng.randint(10**11, 10**12 - 1)}",
                        "shipped_at": shipped.isoformat(),
                        "delivered_at": delivered,
                    }
                )
    for table in m.metadata.sorted_tables:
        if rows[table.name]:
            connection.execute(insert(table), rows[table.name])
