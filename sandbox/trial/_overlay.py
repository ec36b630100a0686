"""Re-creating the state a real ticket saw: row images captured in production, laid over a domain's seed.

The SDK records, inside a ticket, the before-image of every row the agent read (`passhat.state_read`) and of
every row it changed (`passhat.state_write`). Replaying the ticket starts from the domain's seeded database with
those rows put back as they were when the ticket began, so the k trials face the customer's real situation.
"""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Boolean, Date, DateTime, Float, Integer, MetaData, Numeric, Table
from sqlalchemy.types import TypeEngine

from passhat.sandbox.domain import DomainError


class OverlayError(DomainError):
    """Captured rows that cannot be laid over this domain's tables (unknown table or column, bad value)."""


@dataclass(frozen=True)
class RowImage:
    """A row as it was when a ticket began.

    `values` None means the row did not exist yet (the ticket inserted it); `partial` means `values` holds only
    some columns (an update's before-image of the columns it changed), applied to the row already there.
    """

    table: str
    key: Mapping[str, Any]
    values: Mapping[str, Any] | None
    partial: bool = False


def _coerce(value: Any, column_type: TypeEngine[Any], where: str) -> Any:
    """A JSON-decoded value converted to what SQLite stores for the column's type."""
    if value is None:
        return None
    try:
        if isinstance(column_type, Boolean):
            return int(bool(value))
        if isinstance(column_type, Integer):
            return int(value)
        if isinstance(column_type, Float):
            return float(value)
        if isinstance(column_type, Numeric):
            return str(decimal.Decimal(str(value)))
        if isinstance(column_type, DateTime):
            return dt.datetime.fromisoformat(str(value)).isoformat(sep=" ")
        if isinstance(column_type, Date):
            return dt.date.fromisoformat(str(value)[:10]).isoformat()
    except (ValueError, TypeError, decimal.InvalidOperation):
        raise OverlayError(f"{where}: {value!r} is not a valid {column_type}") from None
    if isinstance(value, dict | list):
        import json

        return json.dumps(value)
    return value


def _table(metadata: MetaData, name: str) -> Table:
    table = metadata.tables.get(name)
    if table is None:
        known = ", ".join(sorted(metadata.tables))
        raise OverlayError(f"the captured row belongs to table {name!r}, which this domain does not have ({known})")
    return table


def _row_values(table: Table, values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name not in table.c:
            raise OverlayError(f"table {table.name!r} has no column {name!r} (captured in a row image)")
        out[name] = _coerce(value, table.c[name].type, f"{table.name}.{name}")
    return out


def first_images(images: Sequence[RowImage]) -> list[RowImage]:
    """The earliest image of each row: the state before the ticket touched it."""
    seen: dict[tuple[str, tuple[tuple[str, str], ...]], RowImage] = {}
    for image in images:
        identity = (image.table, tuple(sorted((k, repr(v)) for k, v in image.key.items())))
        seen.setdefault(identity, image)
    return list(seen.values())


def apply_overlay(connection: sqlite3.Connection, metadata: MetaData, images: Sequence[RowImage]) -> int:
    """Write the row images into a SQLite database (one transaction); returns how many rows were laid."""
    laid = 0
    with connection:
        for image in first_images(images):
            table = _table(metadata, image.table)
            key = _row_values(table, image.key)
            if not key:
                raise OverlayError(f"a captured row of {table.name!r} has no primary key")
            where = " AND ".join(f'"{name}" = ?' for name in key)
            if image.values is None:
                connection.execute(f'DELETE FROM "{table.name}" WHERE {where}', list(key.values()))
                laid += 1
                continue
            values = {**_row_values(table, image.values), **key}
            exists = connection.execute(f'SELECT 1 FROM "{table.name}" WHERE {where}', list(key.values())).fetchone()
            if exists:
                columns = [name for name in values if name not in key]
                if columns:
                    assignments = ", ".join(f'"{name}" = ?' for name in columns)
                    connection.execute(
                        f'UPDATE "{table.name}" SET {assignments} WHERE {where}',
                        [values[name] for name in columns] + list(key.values()),
                    )
            elif image.partial:
                raise OverlayError(
                    f"only some columns of {table.name} {dict(image.key)} were captured, and the seed has no such "
                    f"row to complete them"
                )
            else:
                names = ", ".join(f'"{name}"' for name in values)
                marks = ", ".join("?" for _ in values)
                try:
                    connection.execute(f'INSERT INTO "{table.name}" ({names}) VALUES ({marks})', list(values.values()))
                except sqlite3.IntegrityError as exc:
                    raise OverlayError(
                        f"the captured row of {table.name} {dict(image.key)} does not fit: {exc}"
                    ) from None
            laid += 1
    return laid
