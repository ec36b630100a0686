"""State writes and before-images as span events: a ticket's effect on the backend travels with its trace."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

from passhat import semconv
from passhat._content import jsonable, to_json

if TYPE_CHECKING:
    from passhat._runtime import Passhat


def _require_table(table: Any) -> str:
    if not isinstance(table, str) or not table:
        raise TypeError(f"passhat.record_write: table must be a non-empty str, got {table!r}")
    return table


def _require_mapping(name: str, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"passhat.record_write: {name} must be a dict of column -> value, got {type(value).__name__}")
    return dict(value)


def _infer_op(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    if before is None and after is not None:
        return "insert"
    if before is not None and after is None:
        return "delete"
    if before is not None and after is not None:
        return "update"
    raise ValueError("passhat.record_write: give before=, after= or both (or op= for a bulk statement)")


def write_attributes(
    runtime: Passhat,
    table: str,
    key: Mapping[str, Any] | None,
    op: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    *,
    changed: Sequence[str] | None = None,
    rowcount: int | None = None,
) -> dict[str, Any]:
    """The attributes of one ``passhat.state_write`` event (only changed columns for an update)."""
    attributes: dict[str, Any] = {semconv.STATE_WRITE_TABLE: table, semconv.STATE_WRITE_OP: op}
    redactor = runtime.redactor
    if key is not None:
        attributes[semconv.STATE_WRITE_KEY] = to_json(dict(key), redactor)
    if op == "update" and before is not None and after is not None:
        if changed is None:
            plain_before, plain_after = jsonable(dict(before)), jsonable(dict(after))
            changed = [col for col in after if col not in before or plain_before[col] != plain_after[col]]
        before = {col: before[col] for col in changed if col in before}
        after = {col: after[col] for col in changed if col in after}
    elif changed is None:
        changed = list((after if after is not None else before) or ())
    if before is not None:
        attributes[semconv.STATE_WRITE_BEFORE] = to_json(dict(before), redactor)
    if after is not None:
        attributes[semconv.STATE_WRITE_AFTER] = to_json(dict(after), redactor)
    attributes[semconv.STATE_WRITE_CHANGED] = [redactor.dict_key(column) for column in changed]
    if rowcount is not None:
        attributes[semconv.STATE_WRITE_ROWCOUNT] = rowcount
    return attributes


def emit(runtime: Passhat, name: str, attributes: dict[str, Any]) -> None:
    """Add an event to the current span, if one is recording."""
    span = trace.get_current_span()
    if span.is_recording():
        span.add_event(name, attributes, timestamp=runtime.now())


def record_write(
    table: str,
    key: Mapping[str, Any] | Any,
    *,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    op: str | None = None,
    rowcount: int | None = None,
    runtime: Passhat | None = None,
) -> None:
    """Record one change to the backend as a ``passhat.state_write`` event on the current span.

    ``key`` is the row's primary key as a dict of column -> value (a scalar means ``{"id": key}``).
    ``op`` is inferred: ``insert`` (only ``after``), ``delete`` (only ``before``), ``update`` (both; only the
    columns whose value changed are kept). Bulk statements pass ``op="bulk_update"`` etc. and ``rowcount``.
    """
    from passhat._ticket import active_runtime

    runtime = runtime or active_runtime()
    table = _require_table(table)
    key_map: dict[str, Any] | None
    if key is None:
        key_map = None
    elif isinstance(key, Mapping):
        key_map = dict(key)
    else:
        key_map = {"id": key}
    before_map, after_map = _require_mapping("before", before), _require_mapping("after", after)
    if op is None:
        op = _infer_op(before_map, after_map)
    elif op not in semconv.WRITE_OPS:
        raise ValueError(f"passhat.record_write: op must be one of {', '.join(semconv.WRITE_OPS)}, got {op!r}")
    if not trace.get_current_span().is_recording():
        return
    emit(
        runtime,
        semconv.EVENT_STATE_WRITE,
        write_attributes(runtime, table, key_map, op, before_map, after_map, rowcount=rowcount),
    )


def record_read(runtime: Passhat, table: str, key: Mapping[str, Any], row: Mapping[str, Any]) -> None:
    """Record the before-image of a row the agent loaded as a ``passhat.state_read`` event."""
    emit(
        runtime,
        semconv.EVENT_STATE_READ,
        {
            semconv.STATE_READ_TABLE: table,
            semconv.STATE_READ_KEY: to_json(dict(key), runtime.redactor),
            semconv.STATE_READ_ROW: to_json(dict(row), runtime.redactor),
        },
    )
