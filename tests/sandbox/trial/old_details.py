"""A trial's details as replay stored them before `TrialDetails` (a plain document), and what it reads as.

Shared by the sandbox's round-trip tests and the stores' tests of rows an older version wrote."""

from __future__ import annotations

from typing import Any

from passhat.checks import RowChange, ToolCallRecord
from passhat.sandbox import TrialDetails, Usage

# Tool calls without their arguments or messages, and a key this version no longer reads.
OLD_DETAILS: dict[str, Any] = {
    "changes": [{"table": "orders", "key": {"id": "O-1"}, "op": "update", "before": {"s": "a"}, "after": {"s": "b"}}],
    "final_response": "Done.",
    "tool_calls": [{"name": "refund", "outcome": "error", "error_type": "precondition_failed", "is_write": True}],
    "transcript": [["customer", "Refund O-1"], ["agent", "Done."]],
    "usage": {"input_tokens": 0, "output_tokens": 0},
    "agent": "reference (offline simulation)",
    "agent_version": "",
    "simulated": True,
    "injected": None,
    "retired": 1,
}

OLD_DETAILS_READ = TrialDetails(
    changes=(RowChange("orders", {"id": "O-1"}, "update", {"s": "a"}, {"s": "b"}),),
    final_response="Done.",
    tool_calls=(ToolCallRecord("refund", {}, "error", error_type="precondition_failed", is_write=True),),
    transcript=(("customer", "Refund O-1"), ("agent", "Done.")),
    usage=Usage(),
    agent="reference (offline simulation)",
    simulated=True,
)
