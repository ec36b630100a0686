"""Turning application values into attribute strings: JSON, redacted, length-capped."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import json
import uuid
from typing import Any

from passhat._redact import Redactor


def _fallback(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)  # pydantic models, without importing pydantic
    if callable(dump):
        try:
            return dump(mode="json")
        except TypeError:
            return dump()
    return repr(value)


def jsonable(value: Any) -> Any:
    """A JSON-compatible copy of a value (datetimes, decimals, dataclasses, pydantic models become JSON)."""
    return json.loads(json.dumps(value, default=_fallback, ensure_ascii=False))


def to_json(value: Any, redactor: Redactor, limit: int | None = None) -> str:
    """The redacted JSON text of a value, cut to ``limit`` characters with a marker when longer."""
    data = jsonable(value)
    if redactor.active:
        data = redactor.value(data)
    return cap(json.dumps(data, ensure_ascii=False, separators=(",", ":")), limit)


def cap(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}…[truncated {len(text) - limit} chars]"
