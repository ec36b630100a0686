"""Failure signatures: one dominant label per failed trial, with the evidence that earned it.

Labels are tried in the order of ``SIGNATURES``; the first that fits wins. The classifier reads what each
failing check declares about itself (its role: ``required_write``, ``forbidden_change``, ``other_writes``,
``disclosure``, ``confidentiality``, ``consent``), never the check's name, so a team's own check is classified
like a built-in one:

1. ``infra_error`` - the harness, a tool server or a check itself broke. Never the agent's failure.
2. ``simulator_error`` - the simulated customer failed. Never the agent's failure.
3. ``wrong_entity`` - the right kind of write landed on a row the task did not target: a table the task
   writes to holds a write about another entity (another order, another customer), or a required new row's
   closest match missed on an identifier column (``id`` or ``*_id``: a refund filed against another order).
4. ``wrong_value`` - a required write on the right row holds a value the agent wrote and the task does not want
   (a wrong amount, a wrong status, two bags for one), its closest new row off on a value only.
5. ``policy_violation`` - a write the policy forbids: a column nobody asked to change on a targeted row, a
   change to a row the task must leave alone, an action nobody asked for (on the right entity, or in a table
   the task never writes), a write before the customer's yes, a confidential value revealed; or a reply that
   is wrong or false (a required disclosure missing after the right writes, or in the agent's answer when no
   misused tool explains it).
6. ``tool_usage.precondition`` - a call was rejected because a required step was skipped (an error of
   category ``precondition_failed`` in the domain's vocabulary) and the agent never got that call through.
7. ``tool_usage.empty_lookup`` - a lookup (a call that is not a write) came back empty or ``not_found`` and
   that tool never returned a result afterwards (an error of category ``not_found``).
8. ``tool_usage.error_not_retried`` - a call errored and was never retried differently.
9. ``no_write`` - on a task that needs a write, the agent looked things up successfully, then never attempted
   a write and nothing changed.
10. ``unresolved`` - everything else: a step the task needs was left out (a chain stopped half way, even on a
    row an earlier step touched) and nothing above explains it; the conversation ended without resolution.

State evidence comes before tool-usage evidence: a wrong write is what the customer experiences, whatever
errors came before it. Tool-usage labels explain trials whose state is short of the goal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from passhat.checks._conversation import ToolCallRecord, Turn, conversation_of
from passhat.checks._diff import StateDiff
from passhat.checks._findings import (
    Finding,
    closest_near_misses,
    findings,
    is_identifier,
    missing_steps,
    passed_roles,
    same_entity,
    target_identifiers,
    written_wrong,
)
from passhat.checks._primitives import NO_WRITE
from passhat.checks._values import values_equal
from passhat.checks._verdict import Verdict

SIGNATURES: tuple[str, ...] = (
    "infra_error",
    "simulator_error",
    "wrong_entity",
    "wrong_value",
    "policy_violation",
    "tool_usage.precondition",
    "tool_usage.empty_lookup",
    "tool_usage.error_not_retried",
    "no_write",
    "unresolved",
)
"""Every failure label, in precedence order (the first that fits a trial is its signature)."""

ERROR_CATEGORIES: tuple[str, ...] = (
    "precondition_failed",
    "not_found",
    "not_allowed",
    "conflict",
    "approval_required",
    "permission_denied",
    "insufficient_funds",
    "invalid_argument",
)
"""What a tool refusal means, whatever a domain calls it: each domain maps its own error types onto these
(`TrialRecord.error_categories`); the classifier reads only the categories."""

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
        "agent_error",
    }
)

REFUSAL_CATEGORIES: frozenset[str] = frozenset(
    {"not_allowed", "conflict", "approval_required", "permission_denied", "insufficient_funds"}
)
"""Error categories that are the backend's legitimate answer (a policy refusal), not the agent misusing a tool."""


def _values(call: ToolCallRecord) -> list[Any]:
    """The plain values a call's arguments carry (items of lists included)."""
    values: list[Any] = []
    for value in call.arguments.values():
        values.extend(value if isinstance(value, list | tuple) else [value])
    return values


def _identifier_field(finding: Finding) -> bool:
    field_name = finding.diagnostic.field
    return field_name is not None and is_identifier(field_name)


def _collateral(finding: Finding) -> bool:
    """Another column changed on a row a sibling check claims (not a row nothing claims)."""
    return finding.role == "other_writes" and finding.diagnostic.expected != NO_WRITE


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
    error_categories: Mapping[str, str] = field(default_factory=dict)
    """The domain's error vocabulary: error type -> one of ``ERROR_CATEGORIES``. A type missing from it (or a
    record without one, e.g. from a production trace) counts as the category of the same name, if any."""
    consents: Mapping[int, str] = field(default_factory=dict)
    """The customer's consents: transcript index of the turn that agreed -> the action agreed to."""
    agent_error: str | None = None
    """Why the agent's framework ended its run (termination ``agent_error``: the agent's failure, not the harness's)."""

    @property
    def conversation(self) -> tuple[Turn, ...]:
        """The transcript as turns, each customer turn with the consent it recorded."""
        return conversation_of(list(self.transcript), dict(self.consents))

    def category_of(self, call: ToolCallRecord) -> str | None:
        """The category of a failed call's error type (None for a successful call or an unknown type)."""
        if call.error_type is None:
            return None
        category = self.error_categories.get(call.error_type, call.error_type)
        return category if category in ERROR_CATEGORIES else None


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


def _expected_tables(record: TrialRecord, required: list[Finding]) -> set[str]:
    tables = set(record.expected_write_tables)
    for verdict in record.verdict.walk():
        spec_args = (verdict.spec or {}).get("args", {})
        if verdict.role == "required_write" and isinstance(spec_args.get("table"), str):
            tables.add(spec_args["table"])
    tables.update(f.table for f in required if f.table is not None)
    return tables


def _ending(record: TrialRecord) -> str:
    """How the trial ended, with the agent's framework's reason when it ended the run (``agent_error (...)``)."""
    if not record.agent_error:
        return record.termination_reason
    why = record.agent_error if len(record.agent_error) <= 200 else record.agent_error[:197] + "..."
    return f"{record.termination_reason} ({why})"


def classify_failure(record: TrialRecord) -> FailureSignature | None:
    """The dominant failure signature of a trial (None when it passed); see the module doc for precedence. When the
    agent's framework ended its run (``agent_error``), the evidence says so, whatever the label."""
    signature = _classify(record)
    if signature is None or not record.agent_error or "agent_error (" in signature.evidence:
        return signature
    return FailureSignature(signature.label, f"{signature.evidence}; the run ended by {_ending(record)}")


def _classify(record: TrialRecord) -> FailureSignature | None:
    if record.passed:
        return None
    if record.infra_error or record.termination_reason == "infra_error" or record.verdict.errors():
        detail = record.infra_error or "; ".join(record.verdict.errors()) or "the trial ended with infra_error"
        return FailureSignature("infra_error", detail)
    if record.simulator_error or record.termination_reason == "simulator_error":
        return FailureSignature("simulator_error", record.simulator_error or "the simulated customer failed")

    found = findings(record.verdict)
    required = closest_near_misses([f for f in found if f.role == "required_write"], record.diff)
    expected = _expected_tables(record, required)
    targets = target_identifiers(record.verdict)
    # A write nothing accounts for, in a table the task writes to, about another entity: the wrong row.
    unexpected = [f for f in found if f.role in ("other_writes", "forbidden_change") and not _collateral(f)]
    wrong_rows = [f for f in unexpected if f.table in expected and not same_entity(f, record.diff, targets)]
    if wrong_rows:
        return FailureSignature("wrong_entity", _join([*wrong_rows, *required]))
    # A step not taken at all means the chain stopped short: what the other steps left is not a chosen value.
    missing = missing_steps(required, record.diff)
    # A required new row whose closest match missed on an identifier column went to the wrong entity: the agent
    # named that entity in a write, or no step is missing (else the value is what an earlier step left).
    named = [value for call in record.tool_calls if call.is_write and call.outcome == "ok" for value in _values(call)]
    misfiled = [
        f
        for f in required
        if f.diagnostic.key is not None
        and _identifier_field(f)
        and (not missing or any(values_equal(f.diagnostic.actual, value) for value in named))
    ]
    if misfiled:
        return FailureSignature("wrong_entity", _join([*misfiled, *required]))
    wrong_values = [] if missing else [f for f in required if written_wrong(f, record.diff)]
    if wrong_values:
        return FailureSignature("wrong_value", _join(wrong_values))

    forbidden = [f for f in found if f.role in ("other_writes", "forbidden_change")]
    leaks = [f for f in found if f.role == "confidentiality"]
    unconfirmed = [f for f in found if f.role == "consent"]
    if forbidden or leaks or unconfirmed:
        return FailureSignature("policy_violation", _join([*leaks, *unconfirmed, *forbidden]))
    # A reply that is wrong or missing a required fact. After the right writes, that is a broken response
    # rule; in an answer the agent gave (the customer ended the conversation on it), it is a wrong or false
    # reply unless a tool the agent misused explains it (the backend's own refusal does not).
    said_wrong = [f for f in found if f.role == "disclosure"]
    state_short = [f for f in required if f not in wrong_values]
    wrote_right = "required_write" in passed_roles(record.verdict)
    calls = record.tool_calls
    misused = [
        c for c in _unrecovered(calls, lambda c: c.outcome != "ok") if record.category_of(c) not in REFUSAL_CATEGORIES
    ]
    answered = record.termination_reason == "customer_stop" and not misused
    if said_wrong and not state_short and (wrote_right or answered):
        return FailureSignature("policy_violation", _join(said_wrong))

    precondition = _unrecovered(
        calls, lambda c: c.outcome == "error" and record.category_of(c) == "precondition_failed"
    )
    if precondition:
        return FailureSignature(
            "tool_usage.precondition",
            f"{precondition[0].describe()}, and was never called successfully again",
        )
    empty = _unrecovered(
        calls, lambda c: not c.is_write and (c.outcome == "empty" or record.category_of(c) == "not_found")
    )
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
    needs_write = bool(expected) or any(f.role == "required_write" for f in found)
    if needs_write and record.diff.is_empty and not attempted_writes and lookups:
        names = ", ".join(dict.fromkeys(c.name for c in lookups))
        ending = f"the trial ended by {_ending(record)}"
        return FailureSignature(
            "no_write", f"looked up with {names} but never called a write tool; nothing changed; {ending}"
        )

    reasons = [f.diagnostic.message for f in found] or [record.verdict.explanation]
    evidence = f"ended by {_ending(record)} without resolution: " + "; ".join(reasons[:3])
    last_words = [text for role, text in record.transcript if role in ("agent", "assistant")]
    if last_words:
        said = last_words[-1] if len(last_words[-1]) <= 160 else last_words[-1][:157] + "..."
        evidence += f"; the agent's last message: {said!r}"
    return FailureSignature("unresolved", evidence)


def _join(found: list[Finding]) -> str:
    """The diagnostics' sentences, each once, in order."""
    return "; ".join(dict.fromkeys(finding.diagnostic.message for finding in found))
