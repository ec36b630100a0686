"""What an extractor returns: an intent with its source and the evidence for each field, or why there is none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

IntentSource = Literal["recorded", "inferred:rules", "inferred:model"]
INTENT_SOURCES: tuple[str, ...] = ("recorded", "inferred:rules", "inferred:model")


@dataclass(frozen=True)
class InferredIntent:
    """A ticket's intent as an extractor found it: the values, where they came from, and the evidence per field.

    ``evidence`` maps each field path (``email``, ``loans[].loan_id``) to what supports its value(s): the
    customer's words ("the customer said 'Dune' (message 1)"), a row those words lead to, or "derived".
    """

    intent: dict[str, Any]
    source: IntentSource
    evidence: dict[str, str] = field(default_factory=dict)
    task_type: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "task_type": self.task_type, "intent": self.intent, "evidence": self.evidence}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InferredIntent:
        """Read back what `to_dict` wrote."""
        source = str(data.get("source") or "inferred:rules")
        if source not in INTENT_SOURCES:
            raise ValueError(f"unknown intent source {source!r}; known: {', '.join(INTENT_SOURCES)}")
        return cls(
            intent=dict(data.get("intent") or {}),
            source=source,  # type: ignore[arg-type]
            evidence={str(k): str(v) for k, v in (data.get("evidence") or {}).items()},
            task_type=str(data.get("task_type") or ""),
        )


class IntentNotInferredError(Exception):
    """No intent could be inferred without guessing: the message says which field lacks evidence or has two
    candidates; ``fix`` what would make the ticket replayable."""

    def __init__(self, reason: str, *, fix: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.fix = fix
