"""passhat.checks: executable checks on a backend's terminal state, and failure signatures.

Needs SQLAlchemy (``pip install 'passhat[sqlalchemy]'``).
"""

try:
    import sqlalchemy as _sqlalchemy  # noqa: F401
except ImportError as _missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("passhat.checks needs SQLAlchemy: pip install 'passhat[sqlalchemy]'") from _missing

# The one tool-outcome rule lives in the SDK (the lowest layer, which must use it); checks re-export it.
from passhat import ToolKind, ToolOutcome, outcome_of
from passhat.checks._changelog import ChangeLog, record_changes
from passhat.checks._compose import all_of, any_of
from passhat.checks._consent import confirmed_before, with_consent
from passhat.checks._conversation import ANY_ACTION, ToolCallRecord, Turn
from passhat.checks._diff import RowChange, StateDiff
from passhat.checks._primitives import deleted, inserted, no_other_writes, unchanged, updated
from passhat.checks._registry import (
    ENTRY_POINT_GROUP,
    BuiltCheck,
    SpecError,
    build_check,
    check,
    evaluate,
    registered_checks,
    rerun,
)
from passhat.checks._response import normalize_text, response_contains, response_omits
from passhat.checks._signatures import (
    ERROR_CATEGORIES,
    NOT_AGENT_FAULT,
    REFUSAL_CATEGORIES,
    SIGNATURES,
    TERMINATION_REASONS,
    FailureSignature,
    TrialRecord,
    classify_failure,
)
from passhat.checks._snapshot import Snapshot, SnapshotError, TableSnapshot, diff_snapshots, take_snapshot
from passhat.checks._touched import ChangeLogError, StartingState, install_change_log
from passhat.checks._values import Unordered, unordered, values_equal
from passhat.checks._verdict import ROLES, Check, CheckContext, Claim, Diagnostic, Verdict

# ruff's RUF022 order (constants, classes, then functions), checked by tests/test_public_api.py.
__all__ = [
    "ANY_ACTION",
    "ENTRY_POINT_GROUP",
    "ERROR_CATEGORIES",
    "NOT_AGENT_FAULT",
    "REFUSAL_CATEGORIES",
    "ROLES",
    "SIGNATURES",
    "TERMINATION_REASONS",
    "BuiltCheck",
    "ChangeLog",
    "ChangeLogError",
    "Check",
    "CheckContext",
    "Claim",
    "Diagnostic",
    "FailureSignature",
    "RowChange",
    "Snapshot",
    "SnapshotError",
    "SpecError",
    "StartingState",
    "StateDiff",
    "TableSnapshot",
    "ToolCallRecord",
    "ToolKind",
    "ToolOutcome",
    "TrialRecord",
    "Turn",
    "Unordered",
    "Verdict",
    "all_of",
    "any_of",
    "build_check",
    "check",
    "classify_failure",
    "confirmed_before",
    "deleted",
    "diff_snapshots",
    "evaluate",
    "inserted",
    "install_change_log",
    "no_other_writes",
    "normalize_text",
    "outcome_of",
    "record_changes",
    "registered_checks",
    "rerun",
    "response_contains",
    "response_omits",
    "take_snapshot",
    "unchanged",
    "unordered",
    "updated",
    "values_equal",
    "with_consent",
]
