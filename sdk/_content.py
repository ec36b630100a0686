"""Turning application values into attribute strings: JSON, redacted, length-capped."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import json
import math
import uuid
from typing import Any

from passhat._redact import Redactor


def type_of(value: Any) -> str:
    """How a value that cannot be recorded is recorded: its type, ``<module.QualName>``."""
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__}>"


def _fallback(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:  # text passed as bytes (a raw message body) stays text, so the redaction patterns see it
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(raw).decode("ascii")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    # A framework's context object (pydantic-ai's RunContext holds tasks, clients, the model), a module, a task,
    # a client: recorded by its type. Converting one must never reach the agent as an exception.
    try:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.asdict(value)
        dump = getattr(value, "model_dump", None)  # pydantic models, without importing pydantic
        if callable(dump) and not isinstance(value, type):
            try:
                return dump(mode="json")
            except TypeError:
                return dump()
    except Exception:
        return type_of(value)
    return type_of(value)


def jsonable(value: Any, depth: int = 4) -> Any:
    """A JSON-compatible copy of a value (datetimes, decimals, dataclasses, pydantic models become JSON).

    Never raises: what cannot be converted (a task, a module, a client, a cycle) is recorded by its type; a dict or
    list that fails as a whole is converted entry by entry (``depth`` levels down), so its plain values remain.
    """
    try:
        return json.loads(json.dumps(value, default=_fallback, ensure_ascii=False))
    except Exception:  # a cycle, a key that is not a str, a converter that raised: record what can be recorded
        if depth > 0 and isinstance(value, dict):
            return {str(key): jsonable(item, depth - 1) for key, item in value.items()}
        if depth > 0 and isinstance(value, list | tuple):
            return [jsonable(item, depth - 1) for item in value]
        return type_of(value)


def to_json(value: Any, redactor: Redactor, limit: int | None = None) -> str:
    """The redacted JSON text of a value, cut to ``limit`` characters with a marker when longer."""
    data = jsonable(value)
    if redactor.active:
        data = redactor.value(data)
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or an infinity, which JSON has no token for: the collector would read no JSON at all
        text = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"))
    return cap(text, limit)


def _finite(value: Any) -> Any:
    """``value`` with each float JSON cannot write (NaN, infinities) written as its name, a string."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def cap(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}…[truncated {len(text) - limit} chars]"
