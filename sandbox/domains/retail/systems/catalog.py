"""The catalog system: products and their variants (options, price, availability)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from passhat.sandbox.domain import System, ToolError, tool
from passhat.sandbox.domains.retail import models as m
from passhat.sandbox.domains.retail.systems.common import RetailSystem


class Catalog(RetailSystem):
    """Read-only product data."""

    @tool("lookup")
    async def get_product(self, product_id: str) -> dict[str, Any]:
        """A product and all its variants (options, price, availability)."""
        product = self.row(m.products, product_id=product_id)
        if product is None:
            raise ToolError("not_found", f"product {product_id} not found")
        rows = self.rows(m.variants, product_id=product_id)
        variants = [{**v, "options": json.loads(v["options"])} for v in rows]
        return {**product, "variants": variants}

    @tool("lookup")
    async def list_product_types(self) -> dict[str, Any]:
        """Every product name with its product_id."""
        rows = self.db.execute(select(m.products.c.name, m.products.c.product_id))
        return {name: product_id for name, product_id in rows}


system = System("catalog", "Products and their variants.", ("products", "variants"), Catalog)
