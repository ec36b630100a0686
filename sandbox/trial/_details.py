"""What a trial's stored record holds beyond its row, and its JSON form.

A stored trial row has columns for what is queried (task type, passed, termination reason, signature, verdict,
errors); everything else the runner learned goes into one JSON document: the backend changes, the final response,
the tool calls, the transcript, the tokens used and who ran it. `TrialDetails` is that document, typed, declared
once: the sandbox builds it from a graded trial, the store keeps it, the report reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import orjson

from passhat.checks import RowChange, ToolCallRecord, TrialRecord
from passhat.sandbox.agents import Usage


@dataclass(frozen=True)
class TrialDetails:
    """A trial's record beyond its row: backend changes, final response, tool calls (each with its turn), transcript
    and the customer's consents, usage, agent.

    `to_json()` and `from_json()` round-trip exactly; `from_json` also reads documents written by older versions
    (missing keys take their defaults, keys it does not know are ignored).

    Pickled (a replay worker sending its trial's row to the driver), it travels as its JSON text (`json_text`)
    and is read back from it only when one of its fields is first read: the driver, which only stores the row,
    writes that text as it came and never builds the objects (unpickling them was a third of its CPU a trial).
    """

    changes: tuple[RowChange, ...] = ()
    final_response: str = ""
    tool_calls: tuple[ToolCallRecord, ...] = ()
    transcript: tuple[tuple[str, str], ...] = ()
    consents: tuple[tuple[int, str], ...] = ()
    """The customer's consents: (transcript index of the turn that agreed, the action agreed to)."""
    usage: Usage = field(default_factory=Usage)
    agent: str = ""
    agent_version: str = ""
    simulated: bool = False
    injected: str | None = None
    #: Attempts of this trial lost to the infrastructure (a distributed replay's worker that died mid-trial)
    #: before this one finished: why each was lost. They are never the agent's failures.
    infra_retries: tuple[str, ...] = ()

    @classmethod
    def of_record(cls, record: TrialRecord, *, usage: Usage, injected: str | None, agent: str) -> TrialDetails:
        """The details of a graded trial: its backend changes in their JSON form, so the stored copy is equal."""
        return cls(
            changes=tuple(RowChange.from_dict(change.to_dict()) for change in record.diff.changes),
            final_response=record.final_response,
            tool_calls=tuple(record.tool_calls),
            transcript=tuple((role, text) for role, text in record.transcript),
            consents=tuple(sorted(record.consents.items())),
            usage=usage,
            agent=agent,
            injected=injected,
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON document the store keeps: built once per object and shared (read it, do not change it).

        A worker process builds it before sending the trial back, so the driver's store writer only encodes it."""
        document: dict[str, Any] | None = self.__dict__.get("_json")
        if document is None and "_text" in self.__dict__ and "changes" not in self.__dict__:
            document = self._parsed()  # unpickled, not read back: its text's document (this version's)
        if document is None:
            document = self._document()
            object.__setattr__(self, "_json", document)  # a cache, not a field: equality and replace() ignore it
        return document

    def json_text(self) -> str:
        """`to_json()` as the store writes it (compact JSON; what orjson refuses, such as integers past 64 bits,
        by the standard library), made once per object."""
        text: str | None = self.__dict__.get("_text")
        if text is None:
            document = self.to_json()
            try:
                text = orjson.dumps(document).decode()
            except TypeError:
                text = json.dumps(document, separators=(",", ":"), ensure_ascii=False, default=str)
                object.__setattr__(self, "_exact", True)  # read back by the standard library too
            object.__setattr__(self, "_text", text)
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        text = self.json_text()
        return (_from_text, (text, True) if "_exact" in self.__dict__ else (text,))

    def __getattr__(self, name: str) -> Any:
        """Reached only for a field of details made from their text (unpickled, or kept by a store: `from_text`)
        and not read yet: read them back now."""
        if "_source" not in self.__dict__ or name not in _FIELDS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._read_back()
        return self.__dict__[name]

    def _parsed(self) -> dict[str, Any]:
        text = self.__dict__["_source"]
        document: dict[str, Any] = (json.loads(text) if "_exact" in self.__dict__ else orjson.loads(text)) or {}
        return document

    @classmethod
    def from_text(cls, text: str | bytes | None, *, exact: bool = False) -> TrialDetails:
        """Details a store kept as JSON text (any version), read back only when one of their fields is first
        read: a page that lists trials by their columns never builds their details. A stored document the checks
        cannot read raises ValueError then (as `from_json` does). ``exact``: read by the standard library (which
        keeps integers past 64 bits) rather than orjson."""
        if not text:
            return cls()
        details = object.__new__(cls)
        object.__setattr__(details, "_source", text.decode() if isinstance(text, bytes) else text)
        if exact:
            object.__setattr__(details, "_exact", True)
        return details

    def _read_back(self) -> dict[str, Any]:
        """Set every field from the JSON text these details were made from; their document."""
        parsed = self._parsed()
        read = TrialDetails.from_json(parsed)
        for each in _FIELDS:
            object.__setattr__(self, each, read.__dict__[each])
        # Unpickled: the text is this version's document. Kept by a store: any version's, so written anew.
        document = parsed if "_text" in self.__dict__ else read.to_json()
        object.__setattr__(self, "_json", document)
        return document

    def _document(self) -> dict[str, Any]:
        return {
            "changes": [change.to_dict() for change in self.changes],
            "final_response": self.final_response,
            "tool_calls": [_call_to_json(call) for call in self.tool_calls],
            "transcript": [[role, text] for role, text in self.transcript],
            "consents": [[index, action] for index, action in self.consents],
            "usage": {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens},
            "agent": self.agent,
            "agent_version": self.agent_version,
            "simulated": self.simulated,
            "injected": self.injected,
            "infra_retries": list(self.infra_retries),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialDetails:
        """Read a stored document (any version: older rows lack keys, and tool calls without their arguments).

        A backend change the checks cannot read raises ValueError naming it: a stored row is never silently
        thinned here.
        """
        usage = data.get("usage") or {}
        injected = data.get("injected")
        return cls(
            changes=tuple(RowChange.from_dict(change) for change in data.get("changes") or ()),
            final_response=str(data.get("final_response") or ""),
            tool_calls=tuple(_call_from_json(call) for call in data.get("tool_calls") or ()),
            transcript=tuple((str(role), str(text)) for role, text in data.get("transcript") or ()),
            consents=tuple((int(index), str(action)) for index, action in data.get("consents") or ()),
            usage=Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)),
            agent=str(data.get("agent") or ""),
            agent_version=str(data.get("agent_version") or ""),
            simulated=bool(data.get("simulated", False)),
            injected=None if injected is None else str(injected),
            infra_retries=tuple(str(reason) for reason in data.get("infra_retries") or ()),
        )


_FIELDS = frozenset(each.name for each in fields(TrialDetails))
# A field with a default is also a class attribute, which would answer for details not read back yet: the fields
# are the instances' own (`__init__` sets every one), so the class keeps none and `__getattr__` is reached.
for _name in _FIELDS:
    if _name in TrialDetails.__dict__:
        delattr(TrialDetails, _name)


def _from_text(text: str, exact: bool = False) -> TrialDetails:
    """Details unpickled from their JSON text (`TrialDetails.__reduce__`): read back on first use (``exact``:
    by the standard library, which keeps the integers past 64 bits that orjson would not write)."""
    details = object.__new__(TrialDetails)
    object.__setattr__(details, "_source", text)
    object.__setattr__(details, "_text", text)  # this version's text: written as it came
    if exact:
        object.__setattr__(details, "_exact", True)
    return details


def _call_to_json(call: ToolCallRecord) -> dict[str, Any]:
    return {
        "name": call.name,
        "arguments": call.arguments,
        "outcome": call.outcome,
        "error_type": call.error_type,
        "error_message": call.error_message,
        "is_write": call.is_write,
        "turn": call.turn,
    }


def _call_from_json(call: Mapping[str, Any]) -> ToolCallRecord:
    outcome = call.get("outcome")
    if outcome not in ("ok", "error", "empty"):
        raise ValueError(f"a stored tool call's outcome must be ok, error or empty, got {dict(call)!r}")
    return ToolCallRecord(
        name=str(call["name"]),
        arguments=dict(call.get("arguments") or {}),
        outcome=outcome,
        error_type=call.get("error_type"),
        error_message=call.get("error_message"),
        is_write=bool(call.get("is_write", False)),
        turn=None if call.get("turn") is None else int(call["turn"]),
    )
