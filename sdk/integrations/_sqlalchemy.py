"""``instrument_sqlalchemy(engine)``: ORM writes as row diffs, loaded rows as before-images, Core DML."""

from __future__ import annotations

import contextvars
import json
from typing import Any

from opentelemetry import trace
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session
from sqlalchemy.orm.state import InstanceState
from sqlalchemy.sql.dml import Delete, Insert, Update

from passhat import semconv
from passhat._content import jsonable
from passhat._runtime import Passhat
from passhat._state import emit, record_read, write_attributes
from passhat._ticket import active_runtime, current_ticket
from passhat.integrations._handle import Instrumentation

# True while an ORM flush runs in this context, so its statements are not counted again as Core DML.
_in_flush: contextvars.ContextVar[bool] = contextvars.ContextVar("passhat_in_flush", default=False)


def _engine_of(bind: Any) -> Any:
    return bind.engine if isinstance(bind, Connection) else bind


def _columns(state: InstanceState[Any]) -> list[tuple[str, str]]:
    """(attribute key, column name) of every column attribute of the instance's mapper."""
    mapper = state.mapper
    pairs: list[tuple[str, str]] = []
    for prop in mapper.column_attrs:
        column = prop.columns[0]
        name = getattr(column, "name", None)
        pairs.append((prop.key, name if isinstance(name, str) else prop.key))
    return pairs


def _primary_key(state: InstanceState[Any]) -> dict[str, Any]:
    mapper = state.mapper
    key: dict[str, Any] = {}
    identity = state.identity
    for index, column in enumerate(mapper.primary_key):
        if identity is not None:
            key[column.name] = identity[index]
        else:
            prop = mapper.get_property_by_column(column)
            key[column.name] = state.dict.get(prop.key)
    return key


def _loaded_row(state: InstanceState[Any]) -> dict[str, Any]:
    loaded = state.dict
    return {column: loaded[attr] for attr, column in _columns(state) if attr in loaded}


def _table_name(state: InstanceState[Any]) -> str:
    table = state.mapper.local_table
    return str(getattr(table, "name", table))


class _SqlAlchemyTracer:
    def __init__(self, engine: Engine, runtime: Passhat | None) -> None:
        self.engine = engine
        self._runtime = runtime

    @property
    def runtime(self) -> Passhat:
        return self._runtime or active_runtime()

    def _ours(self, session: Session, state: InstanceState[Any]) -> bool:
        try:
            bind = session.get_bind(mapper=state.mapper)
        except Exception:  # an unbound session is not ours to trace
            return False
        return _engine_of(bind) is self.engine

    # -- ORM ----------------------------------------------------------------------------------------------
    def before_flush(self, session: Session, flush_context: Any, instances: Any) -> None:
        _in_flush.set(True)

    def end_flush(self, session: Session, *args: Any) -> None:
        _in_flush.set(False)

    def after_flush(self, session: Session, flush_context: Any) -> None:
        if not trace.get_current_span().is_recording():
            return
        runtime = self.runtime
        for obj in list(session.new):
            state = _state_of(obj)
            if self._ours(session, state):
                row = _loaded_row(state)
                emit(
                    runtime,
                    semconv.EVENT_STATE_WRITE,
                    write_attributes(runtime, _table_name(state), _primary_key(state), "insert", None, row),
                )
        for obj in list(session.dirty):
            state = _state_of(obj)
            if self._ours(session, state):
                self._update(runtime, state)
        for obj in list(session.deleted):
            state = _state_of(obj)
            if self._ours(session, state):
                row = _loaded_row(state)
                emit(
                    runtime,
                    semconv.EVENT_STATE_WRITE,
                    write_attributes(runtime, _table_name(state), _primary_key(state), "delete", row, None),
                )

    def _update(self, runtime: Passhat, state: InstanceState[Any]) -> None:
        before: dict[str, Any] = {}
        after: dict[str, Any] = {}
        changed: list[str] = []
        for attr, column in _columns(state):
            history = state.attrs[attr].history
            if not history.has_changes():
                continue
            old = history.deleted[0] if history.deleted else None
            new = history.added[0] if history.added else None
            if history.deleted and jsonable(old) == jsonable(new):
                continue
            changed.append(column)
            # Without a loaded old value (an expired attribute) the before value is unknown: left out.
            if history.deleted:
                before[column] = old
            after[column] = new
        if not changed:
            return
        emit(
            runtime,
            semconv.EVENT_STATE_WRITE,
            write_attributes(
                runtime, _table_name(state), _primary_key(state), "update", before, after, changed=changed
            ),
        )

    def loaded_as_persistent(self, session: Session, instance: Any) -> None:
        ticket = current_ticket()
        if ticket is None or not trace.get_current_span().is_recording():
            return
        state = _state_of(instance)
        if not self._ours(session, state):
            return
        table, key = _table_name(state), _primary_key(state)
        marker = (table, json.dumps(jsonable(key), sort_keys=True))
        if marker in ticket.read_rows:
            return
        ticket.read_rows.add(marker)
        record_read(self.runtime, table, key, _loaded_row(state))

    # -- Core DML -----------------------------------------------------------------------------------------
    def after_execute(
        self,
        conn: Connection,
        clauseelement: Any,
        multiparams: Any,
        params: Any,
        execution_options: Any,
        result: Any,
    ) -> None:
        if _in_flush.get() or not isinstance(clauseelement, Insert | Update | Delete):
            return
        if not trace.get_current_span().is_recording():
            return
        op = (
            "bulk_insert"
            if isinstance(clauseelement, Insert)
            else ("bulk_update" if isinstance(clauseelement, Update) else "bulk_delete")
        )
        table = getattr(clauseelement.table, "name", None) or str(clauseelement.table)
        try:
            rowcount = int(result.rowcount)
        except Exception:  # some drivers cannot count; the write is still recorded
            rowcount = -1
        runtime = self.runtime
        emit(
            runtime,
            semconv.EVENT_STATE_WRITE,
            {
                semconv.STATE_WRITE_TABLE: table,
                semconv.STATE_WRITE_OP: op,
                semconv.STATE_WRITE_CHANGED: [],
                semconv.STATE_WRITE_ROWCOUNT: rowcount,
            },
        )


def _state_of(obj: Any) -> InstanceState[Any]:
    from sqlalchemy import inspect

    state: InstanceState[Any] = inspect(obj)
    return state


def instrument(engine: Any, runtime: Passhat | None = None) -> Instrumentation:
    """Listen to one engine's ORM sessions and Core statements; the handle removes every listener."""
    sync_engine = getattr(engine, "sync_engine", engine)  # an AsyncEngine wraps a sync one
    if not isinstance(sync_engine, Engine):
        raise TypeError(
            f"passhat.instrument_sqlalchemy expects a SQLAlchemy Engine or AsyncEngine, got {type(engine).__name__}"
        )
    tracer = _SqlAlchemyTracer(sync_engine, runtime)
    listeners: list[tuple[Any, str, Any]] = [
        (Session, "before_flush", tracer.before_flush),
        (Session, "after_flush", tracer.after_flush),
        (Session, "after_flush_postexec", tracer.end_flush),
        (Session, "after_soft_rollback", tracer.end_flush),
        (Session, "loaded_as_persistent", tracer.loaded_as_persistent),
        (sync_engine, "after_execute", tracer.after_execute),
    ]
    for target, name, fn in listeners:
        event.listen(target, name, fn)

    def undo() -> None:
        for target, name, fn in listeners:
            if event.contains(target, name, fn):
                event.remove(target, name, fn)

    return Instrumentation("sqlalchemy", undo)
