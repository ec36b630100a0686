"""What a task type's intent holds: each field's name, type, and where its value lives.

A ticket's intent is the set of parameters its check needs (an order id, the items, the expected refund).
An app may record it (``passhat.ticket(..., intent={...})``); when it does not, the collector infers it from
what the customer said and the rows the ticket read. For that, each task type declares its intent's fields:

- ``in_column("orders.order_id")``: a value held in a table's column; the customer names it, or it sits in a row
  the customer's words lead to (the member row of the email they gave, the order that row owns);
- ``in_enum("refund_method", ("card", "gift_card"))``: one of the domain's enumerations, said in its words;
- ``free_text()``: free text or a number the customer states (weeks, a new address line);
- ``derived()``: computed by the task type from the other fields and the starting state (the expected due
  date, a refund amount); it needs no evidence of its own.

A field's name is its path in the intent: ``email``, ``loans[].loan_id`` (a key of each item of a list),
``titles[]`` (each item of a list of values).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

FieldSource = Literal["column", "enum", "text", "derived"]
FieldType = Literal["str", "int", "float", "bool", "date", "any"]

_PYTHON_TYPES: Mapping[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "date": (str,),
    "any": (object,),
}


@dataclass(frozen=True)
class IntentField:
    """One field of a task type's intent: its type and where a value for it lives (see the module doc).

    ``name`` is set by the task type from the key it is declared under. ``words`` gives, per enumeration value,
    the words a customer uses for it (default: the value's own words, ``gift_card`` -> "gift card").
    """

    source: FieldSource
    type: FieldType = "str"
    column: str = ""
    enumeration: str = ""
    values: tuple[str, ...] = ()
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    name: str = ""

    @property
    def table(self) -> str:
        """The table of a column field ("" for the others)."""
        return self.column.partition(".")[0]

    @property
    def column_name(self) -> str:
        """The column of a column field ("" for the others)."""
        return self.column.partition(".")[2]

    @property
    def needs_evidence(self) -> bool:
        """Whether a value must be found in what the customer said or the rows the ticket read."""
        return self.source != "derived"

    def words_for(self, value: str) -> tuple[str, ...]:
        """The words that name enumeration value ``value`` in what a customer says."""
        return self.words.get(value) or (value.replace("_", " "),)

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` has this field's type (None never does)."""
        if value is None:
            return False
        if self.type == "int" and isinstance(value, bool):
            return False
        return isinstance(value, _PYTHON_TYPES[self.type])


def in_column(where: str, *, type: FieldType = "str") -> IntentField:
    """A value held in ``where`` (``"table.column"``)."""
    if where.count(".") != 1 or not all(where.split(".")):
        raise ValueError(f"a column field names 'table.column', got {where!r}")
    return IntentField("column", type, column=where)


def in_enum(
    enumeration: str, values: tuple[str, ...], *, words: Mapping[str, tuple[str, ...]] | None = None
) -> IntentField:
    """One of the domain's enumeration ``enumeration``'s ``values``, said in its words (``words`` per value)."""
    if not values:
        raise ValueError(f"enumeration {enumeration!r} needs at least one value")
    return IntentField("enum", "str", enumeration=enumeration, values=tuple(values), words=dict(words or {}))


def free_text(*, type: FieldType = "str") -> IntentField:
    """Free text (or a number) the customer states."""
    return IntentField("text", type)


def derived(*, type: FieldType = "any") -> IntentField:
    """A value the task type computes from the other fields and the starting state."""
    return IntentField("derived", type)


def named_fields(fields: Mapping[str, IntentField]) -> tuple[IntentField, ...]:
    """The declared fields with their names set from the keys they were declared under."""
    return tuple(IntentField(**{**_as_kwargs(spec), "name": name}) for name, spec in fields.items())


def _as_kwargs(spec: IntentField) -> dict[str, Any]:
    return {
        "source": spec.source,
        "type": spec.type,
        "column": spec.column,
        "enumeration": spec.enumeration,
        "values": spec.values,
        "words": spec.words,
    }


def leaves(intent: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every (field path, value) of an intent: ``loans[].loan_id`` once per loan, ``titles[]`` per title."""
    for key, value in intent.items():
        yield from _leaves(key, value)


def _leaves(path: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _leaves(f"{path}.{key}", inner)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(f"{path}[]", item)
    else:
        yield path, value
