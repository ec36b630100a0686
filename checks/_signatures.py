"""Failure signatures: one dominant label per failed trial, with the evidence that earned it.

Labels are tried in the order of ``SIGNATURES``; the first that fits wins:

1. ``infra_error`` - the harness, a tool server or a check itself broke. Never the agent's failure.
2. ``simulator_error`` - the simulated customer failed. Never the agent's failure.
3. ``wrong_entity`` - the right kind of write landed on a row the task did not target: a table the task
   writes to holds an unexpected write (another order, another customer), or a new row missed only on an
   identifier column (``id`` or ``*_id``: a refund filed against another order).
4. ``policy_violation`` - the targeted rows were written with values the task does not allow (a wrong amount,
   a wrong status, a column nobody asked to change), a row the task must leave alone changed, a write landed
   in a table the task never writes, a confidential value was revealed, or a required disclosure is missing
   after the right writes. (On a task with nothing to write, a missing answer is explained by the tool-usage
   labels below, else ``unresolved``.)
5. ``tool_usage.precondition`` - a call was rejected because a required step was skipped
   (``precondition_failed``) and the agent never got that call through.
6. ``tool_usage.empty_lookup`` - a lookup (a call that is not a write) came back empty or ``not_found`` and
   that tool never returned a result afterwards.
7. ``tool_usage.error_not_retried`` - a call errored and was never retried differently.
8. ``no_write`` - on a task that needs a write, the agent looked things up successfully, then never attempted
   a write and nothing changed.
9. ``unresolved`` - everything else: the conversation ended (or ran out of steps or time) without resolution.

State evidence comes before tool-usage evidence: a wrong write is what the customer experiences, whatever
errors came before it. Tool-usage labels explain trials whose state is short of the goal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from passhat import ToolOutcome
from passhat.checks._diff import StateDiff
from passhat.checks._primitives import NO_WRITE
from passhat.checks._verdict import Diagnostic, Verdict

SIGNATURES: tuple[str, ...] = (
    "infra_error",
    "simulator_error",
    "wrong_entity",
    "policy_violation",
    "tool_usage.precondition",
    "tool_usage.empty_lookup",
    "tool_usage.error_not_retried",
    "no_write",
    "unresolved",
)
"""Every failure label, in precedence order (the first that fits a trial is its signature)."""

NOT_AGENT_FAULT: frozenset[str] = frozenset({"infra_error", "simulator_error"})
"""Labels that are never counted as the agent's failure."""

TERMINATION_REASONS: frozenset[str] = frozenset(
    {
        "customer_stop",
        "agent_stop",
        "step_limit",
        "timeout",
        "tool_error_limit",
        "simulator_error",
        "infra_error",
    }
)

_WRITE_CHECKS = frozenset({"updated", "inserted", "deleted"})
_RESPONSE_CHECKS = frozenset({"response_contains", "response_omits"})
_GUARD_CHECKS = frozenset({"no_other_writes", "unchanged"})


def _on_claimed_row(diagnostic: Diagnostic) -> bool:
    """A collateral write: ``no_other_writes`` found another column changed on a row a sibling check claims."""
    return diagnostic.check == "no_other_writes" and diagnostic.expected != NO_WRITE


def _is_identifier(column: str) -> bool:
    return column == "id" or column.endswith("_id")


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call the agent made during a trial, with how it came out."""

    name: str
    arguments: dict[str, Any]
    outcome: ToolOutcome
    error_type: str | None = None
    error_message: str | None = None
    is_write: bool = False

    def describe(self) -> str:
        arguments = ", ".join(f"{name}={value!r}" for name, value in self.arguments.items())
        call = f"{self.name}({arguments})"
        if self.outcome == "ok":
            return f"{call} succeeded"
        if self.outcome == "empty":
            return f"{call} came back empty"
        detail = f": {self.error_message}" if self.error_message else ""
        return f"{call} failed with {self.error_type or 'an error'}{detail}"


@dataclass(frozen=True)
class TrialRecord:
    """What a failure signature is read from: the verdict, the diff, the tool calls, how the trial ended."""

    passed: bool
    verdict: Verdict
    diff: StateDiff
    tool_calls: list[ToolCallRecord]
    termination_reason: str
    transcript: list[tuple[str, str]]
    final_response: str = ""
    simulator_error: str | None = None
    infra_error: str | None = None
    expected_write_tables: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class FailureSignature:
    """A failed trial's dominant label and the evidence for it, in words."""

    label: str
    evidence: str

    @property
    def is_agent_failure(self) -> bool:
        """False for simulator and infrastructure failures, which are never the agent's."""
        return self.label not in NOT_AGENT_FAULT


def _unrecovered(calls: list[ToolCallRecord], wanted: Callable[[ToolCallRecord], bool]) -> list[ToolCallRecord]:
    """Failed calls matching ``wanted`` with no later successful call of the same tool."""
    found: list[ToolCallRecord] = []
    for index, call in enumerate(calls):
        if wanted(call) and not any(later.name == call.name and later.outcome == "ok" for later in calls[index + 1 :]):
            found.append(call)
    return found


def _not_retried_differently(calls: list[ToolCallRecord]) -> list[ToolCallRecord]:
    found: list[ToolCallRecord] = []
    for index, call in enumerate(calls):
        if call.outcome != "error":
            continue
        later = [other for other in calls[index + 1 :] if other.name == call.name]
        if not any(other.outcome == "ok" for other in later) and all(
            json.dumps(other.arguments, sort_keys=True, default=str)
            == json.dumps(call.arguments, sort_keys=True, default=str)
            for other in later
        ):
            found.append(call)
    return found


def _expected_tables(record: TrialRecord, failures: list[Diagnostic]) -> set[str]:
    tables = set(record.expected_write_tables)
    for verdict in record.verdict.walk():
        spec_args = (verdict.spec or {}).get("args", {})
        if verdict.check in _WRITE_CHECKS and isinstance(spec_args.get("table"), str):
            tables.add(spec_args["table"])
    tables.update(d.table for d in failures if d.check in _WRITE_CHECKS and d.table is not None)
    return tables


def classify_failure(record: TrialRecord) -> FailureSignature | None:
    """The dominant failure signature of a trial (None when it passed); see the module doc for precedence."""
    if record.passed:
        return None
    if record.infra_error or record.termination_reason == "infra_error" or record.verdict.errors():
        detail = record.infra_error or "; ".join(record.verdict.errors()) or "the trial ended with infra_error"
        return FailureSignature("infra_error", detail)
    if record.simulator_error or record.termination_reason == "simulator_error":
        return FailureSignature("simulator_error", record.simulator_error or "the simulated customer failed")

    failures = record.verdict.failures()
    expected = _expected_tables(record, failures)
    collateral = [d for d in failures if d.check == "no_other_writes"]
    # A write to a row nothing claims, in a table the task writes to, is the right kind of write to the wrong
    # row; another column of a targeted row (a collateral write) is a value the task does not allow.
    wrong_rows = [d for d in failures if d.check in _GUARD_CHECKS and d.table in expected and not _on_claimed_row(d)]
    # A new row that missed on an identifier column (an order id, a customer id) went to the wrong entity.
    wrong_rows += [d for d in failures if d.check == "inserted" and d.field is not None and _is_identifier(d.field)]
    if wrong_rows:
        missed = [d for d in failures if d.check in _WRITE_CHECKS]
        return FailureSignature("wrong_entity", _join([*wrong_rows, *missed]))

    wrong_values = [d for d in failures if d.check in _WRITE_CHECKS and d.field is not None]
    forbidden = [d for d in failures if d.check == "unchanged"] + collateral
    said_wrong = [d for d in failures if d.check in _RESPONSE_CHECKS]
    state_short = [d for d in failures if d.check in _WRITE_CHECKS and d.field is None]
    leaks = [d for d in said_wrong if d.check == "response_omits"]
    if wrong_values or forbidden or leaks:
        return FailureSignature("policy_violation", _join([*leaks, *wrong_values, *forbidden, *said_wrong]))
    # A required disclosure is missing. After the right writes, that is a broken response rule; on a task with
    # nothing to write (an inquiry, a refusal), the missing answer is explained by how the agent used its tools,
    # or else it closed without resolution.
    wrote_right = any(v.check in _WRITE_CHECKS and v.passed for v in record.verdict.walk())
    if said_wrong and not state_short and wrote_right:
        return FailureSignature("policy_violation", _join(said_wrong))

    calls = record.tool_calls
    precondition = _unrecovered(calls, lambda c: c.outcome == "error" and c.error_type == "precondition_failed")
    if precondition:
        return FailureSignature(
            "tool_usage.precondition",
            f"{precondition[0].describe()}, and was never called successfully again",
        )
    empty = _unrecovered(calls, lambda c: not c.is_write and (c.outcome == "empty" or c.error_type == "not_found"))
    if empty:
        return FailureSignature(
            "tool_usage.empty_lookup", f"{empty[0].describe()}, and the agent never got a result from it"
        )
    stuck = _not_retried_differently(calls)
    if stuck:
        return FailureSignature(
            "tool_usage.error_not_retried",
            f"{stuck[0].describe()}, and was never retried with other arguments",
        )

    attempted_writes = [c for c in calls if c.is_write]
    lookups = [c for c in calls if not c.is_write and c.outcome == "ok"]
    needs_write = bool(expected) or any(v.check in _WRITE_CHECKS for v in record.verdict.walk())
    if needs_write and record.diff.is_empty and not attempted_writes and lookups:
        names = ", ".join(dict.fromkeys(c.name for c in lookups))
        ending = f"the trial ended by {record.termination_reason}"
        return FailureSignature(
            "no_write", f"looked up with {names} but never called a write tool; nothing changed; {ending}"
        )

    reasons = [d.message for d in failures] or [record.verdict.explanation]
    evidence = f"ended by {record.termination_reason} without resolution: " + "; ".join(reasons[:3])
    last_words = [text for role, text in record.transcript if role in ("agent", "assistant")]
    if last_words:
        said = last_words[-1] if len(last_words[-1]) <= 160 else last_words[-1][:157] + "..."
        evidence += f"; the agent's last message: {said!r}"
    return FailureSignature("unresolved", evidence)


def _join(diagnostics: list[Diagnostic]) -> str:
    """The diagnostics' sentences, each once, in order."""
    return "; ".join(dict.fromkeys(diagnostic.message for diagnostic in diagnostics))
