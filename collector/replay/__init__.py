"""Replaying real tickets: from a period's production traffic to k graded sandbox trials per sampled ticket."""

from passhat.collector.replay._adapters import (
    DomainAdapter,
    NotReplayableError,
    ReplayTicket,
    ScenarioAdapter,
    adapters_for,
    prepare,
    production_attempt,
    restore_redacted,
    row_images,
)
from passhat.collector.replay._compare import (
    RunComparison,
    TaskTypeComparison,
    compare_runs,
    compare_tallies,
    compare_trials,
    trials_per_ticket,
)
from passhat.collector.replay._generated import GeneratedTrials, run_generated_on_ray
from passhat.collector.replay._grade import (
    ON_DEMAND,
    GradingOutcome,
    TicketGrader,
    Ungradable,
    grade_period,
    grade_tickets,
)
from passhat.collector.replay._intent import (
    INFER_MODES,
    IntentInference,
    customer_messages,
    intent_inference,
)
from passhat.collector.replay._local import profile_for
from passhat.collector.replay._plan import find_resumable, find_reusable, lost_to_the_harness, production_tickets
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._processes import (
    NotSendableError,
    TrialProfile,
    WorkerProcesses,
    default_workers,
)
from passhat.collector.replay._relay import SpanSnapshot, relay
from passhat.collector.replay._run import ReplayOutcome, replay_period, run_params
from passhat.collector.replay._sampling import StratumSample, sample_tickets
from passhat.collector.replay._settings import (
    AgentSpec,
    ExecutorError,
    NothingToReplayError,
    ProgressCallback,
    ReplaySettings,
)
from passhat.collector.replay._trials import run_tickets, trial_row
from passhat.collector.store import (
    NotReplayable,
    RunListing,
    RunRole,
    choose_official,
    exploratory_reasons,
    keep_promotion,
    list_runs,
    official_run,
    official_since,
    period_runs,
    promote_run,
    promoted_at,
    role_of,
)

__all__ = [
    "INFER_MODES",
    "ON_DEMAND",
    "AgentSpec",
    "DomainAdapter",
    "ExecutorError",
    "GeneratedTrials",
    "GradingOutcome",
    "IntentInference",
    "NotReplayable",
    "NotReplayableError",
    "NotSendableError",
    "NothingToReplayError",
    "ProgressCallback",
    "ReplayOutcome",
    "ReplaySettings",
    "ReplayTicket",
    "RunComparison",
    "RunListing",
    "RunRole",
    "SandboxPool",
    "ScenarioAdapter",
    "SpanSnapshot",
    "StratumSample",
    "TaskTypeComparison",
    "TicketGrader",
    "TrialProfile",
    "Ungradable",
    "WorkerProcesses",
    "adapters_for",
    "choose_official",
    "compare_runs",
    "compare_tallies",
    "compare_trials",
    "customer_messages",
    "default_workers",
    "exploratory_reasons",
    "find_resumable",
    "find_reusable",
    "grade_period",
    "grade_tickets",
    "intent_inference",
    "keep_promotion",
    "list_runs",
    "lost_to_the_harness",
    "official_run",
    "official_since",
    "period_runs",
    "prepare",
    "production_attempt",
    "production_tickets",
    "profile_for",
    "promote_run",
    "promoted_at",
    "relay",
    "replay_period",
    "restore_redacted",
    "role_of",
    "row_images",
    "run_generated_on_ray",
    "run_params",
    "run_tickets",
    "sample_tickets",
    "trial_row",
    "trials_per_ticket",
]
