"""The offline extractor: the one intent whose every field the customer's words (or the rows they lead to) name.

The task type knows every intent its starting state allows (its ``candidates``, the same function that draws
scenarios). A candidate is *evidenced* when each field that needs evidence is named by the customer: a
column's value said outright or held in a row their words lead to (``RowLinks``), an enumeration by its words,
free text or a number as said. Derived fields follow from the rest. Exactly one evidenced candidate is the
intent; none, or two that differ, and the ticket is not replayable with the field that decided it. The
production agent's writes are never read: a write to the wrong row names no value the customer said.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from passhat.checks import Snapshot
from passhat.sandbox.domain import Domain, IntentField, TaskType, leaves
from passhat.sandbox.inference._result import InferredIntent, IntentNotInferredError
from passhat.sandbox.inference._rows import LinkedRow, RowLinks
from passhat.sandbox.inference._said import CustomerWords, said_form

FIX_WORDS = (
    "pass intent={...} to passhat.ticket(...), or capture what intent inference reads: the customer's messages "
    "(t.customer_says(...) with capture_content=True) and the rows the agent reads (passhat.instrument_sqlalchemy)"
)


def field_for(task: TaskType, path: str) -> IntentField | None:
    """The declared field covering ``path``: the path itself or its nearest declared ancestor
    (``new_options`` covers ``new_options.Jeans.size``)."""
    declared = task.intent_fields
    probe = path
    while probe:
        found = declared.get(probe)
        if found is not None:
            return found
        if probe.endswith("[]"):
            probe = probe[:-2]
            continue
        cut = probe.rfind(".")
        if cut < 0:
            return None
        probe = probe[:cut]
    return None


def date_forms(value: str) -> tuple[str, ...]:
    """How a customer may say an ISO date: as written, or "June 17, 2026", "17 June 2026", "June 17"."""
    try:
        day = dt.date.fromisoformat(value[:10])
    except ValueError:
        return (value,)
    month = day.strftime("%B")
    return (
        value,
        f"{month} {day.day}, {day.year}",
        f"{month} {day.day} {day.year}",
        f"{day.day} {month} {day.year}",
        f"{month[:3]} {day.day}, {day.year}",
        f"{month} {day.day}",
    )


@dataclass
class _Reading:
    """One candidate read against the customer's words: evidence per field path, and what lacks it."""

    candidate: dict[str, Any]
    evidence: dict[str, str]
    missing: list[str]


class RuleExtractor:
    """Infers a ticket's intent offline from the customer's words and the ticket's starting state."""

    source = "inferred:rules"

    def __init__(self, domain: Domain, snapshot: Snapshot) -> None:
        self.domain = domain
        self.links = RowLinks(snapshot, domain.metadata)
        self._candidates: dict[str, list[dict[str, Any]]] = {}

    def candidates(self, task: TaskType, connection: Connection) -> list[dict[str, Any]]:
        """The task type's distinct candidates in this starting state (computed once per task type)."""
        if task.name not in self._candidates:
            self._candidates[task.name] = _distinct(task.candidates(connection))
        return self._candidates[task.name]

    def infer(self, task: TaskType, words: CustomerWords, connection: Connection) -> InferredIntent:
        """The one candidate of ``task`` the customer's words name, or `IntentNotInferredError` saying why not."""
        if not task.intent_fields:
            raise IntentNotInferredError(
                f"task type {task.name!r} declares no intent fields, so its intent cannot be inferred",
                fix=f"declare intent_fields on task type {task.name!r}, or record intent={{...}} on its tickets",
            )
        if words.empty:
            raise IntentNotInferredError("no customer message was captured, so nothing names the intent", fix=FIX_WORDS)
        readings = [self.read(task, candidate, words) for candidate in self.candidates(task, connection)]
        if not readings:
            raise IntentNotInferredError(
                f"task type {task.name!r} has no case in the ticket's starting state", fix=FIX_WORDS
            )
        full = [reading for reading in readings if not reading.missing]
        if len(full) == 1:
            return InferredIntent(full[0].candidate, "inferred:rules", full[0].evidence, task.name)
        if full:
            path, values = _difference([reading.candidate for reading in full])
            shown = ", ".join(repr(v) for v in values[:3])
            raise IntentNotInferredError(
                f"{len(full)} candidates for {path} ({shown}): the customer's words fit each",
                fix="pass intent={...} to passhat.ticket(...) for such tickets, or have the agent ask the customer "
                f"which {path.replace('[]', '').replace('_', ' ')} they mean",
            )
        best = min(len(reading.missing) for reading in readings)
        lacking = sorted({path for reading in readings if len(reading.missing) == best for path in reading.missing})
        raise IntentNotInferredError(
            f"no evidence for {', '.join(lacking[:4])}: the customer never named it, nor a row holding it",
            fix=FIX_WORDS,
        )

    def read(self, task: TaskType, candidate: Mapping[str, Any], words: CustomerWords) -> _Reading:
        """Which of ``candidate``'s fields the customer's words name, directly or through the rows they lead to."""
        evidence: dict[str, str] = {}
        missing: list[str] = []
        pending: list[tuple[str, Any]] = []
        named: dict[str, dict[str, Any]] = {}  # table -> column -> a value the customer said
        for path, value in leaves(candidate):
            spec = field_for(task, path)
            if value is None or (spec is not None and not spec.needs_evidence):
                evidence.setdefault(path, "derived by the task type from the other fields and the starting state")
                continue
            found = self._said(spec, value, words)
            if found is not None:
                evidence.setdefault(path, f"the customer said {value!r} (message {found + 1})")
                if spec is not None and spec.source == "column":
                    named.setdefault(spec.table, {}).setdefault(spec.column_name, value)
            elif spec is not None and spec.source == "column":
                pending.append((path, value))
            else:
                missing.append(path)
        if pending:
            linked = self.links.linked(self._identified(named))
            for path, value in pending:
                row = linked.get(said_form(value))
                if row is None:
                    missing.append(path)
                else:
                    evidence.setdefault(path, f"held by the row the customer's words identify ({row.how})")
        return _Reading(dict(candidate), evidence, sorted(set(missing)))

    def _identified(self, named: Mapping[str, Mapping[str, Any]]) -> list[LinkedRow]:
        """The rows the customer's words pick out: per table, the one row holding every value they said for its
        columns (a value many rows hold, such as a date, identifies nothing on its own)."""
        rows: list[LinkedRow] = []
        for table, values in named.items():
            matches: list[Mapping[str, Any]] | None = None
            for column, value in values.items():
                held = self.links.rows_with(table, column, value)
                ids = {id(row) for row in held}
                matches = list(held) if matches is None else [row for row in matches if id(row) in ids]
            if matches is not None and len(matches) == 1:
                said = ", ".join(f"{column}={value}" for column, value in values.items())
                rows.append(LinkedRow(table, matches[0], f"{table} {said}"))
        return rows

    @staticmethod
    def _said(spec: IntentField | None, value: Any, words: CustomerWords) -> int | None:
        if spec is not None and spec.source == "enum":
            return words.says_any(spec.words_for(str(value)))
        if spec is not None and spec.type == "date" and isinstance(value, str):
            return words.says_any(date_forms(value))
        return words.message_of(value)


def _distinct(candidates: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for candidate in candidates:
        seen.setdefault(json.dumps(candidate, sort_keys=True, default=str), dict(candidate))
    return list(seen.values())


def _difference(candidates: Sequence[Mapping[str, Any]]) -> tuple[str, list[Any]]:
    """The first field path whose values differ between candidates, and those values."""
    by_path: dict[str, list[str]] = {}
    for index, candidate in enumerate(candidates):
        for path, value in leaves(candidate):
            values = by_path.setdefault(path, [""] * len(candidates))
            values[index] = (values[index] + "|" if values[index] else "") + json.dumps(value, default=str)
    for path, values in by_path.items():
        if len(set(values)) > 1:
            return path, list(dict.fromkeys(json.loads(v.split("|")[0]) for v in values))
    return "the intent", []
