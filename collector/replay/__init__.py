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
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._run import (
    AgentSpec,
    NothingToReplayError,
    ProgressCallback,
    ReplayOutcome,
    ReplaySettings,
    find_resumable,
    production_tickets,
    replay_period,
    runs_for_period,
    trial_row,
)
from passhat.collector.replay._sampling import StratumSample, sample_tickets
from passhat.collector.store import NotReplayable

__all__ = [
    "AgentSpec",
    "DomainAdapter",
    "NotReplayable",
    "NotReplayableError",
    "NothingToReplayError",
    "ProgressCallback",
    "ReplayOutcome",
    "ReplaySettings",
    "ReplayTicket",
    "SandboxPool",
    "ScenarioAdapter",
    "StratumSample",
    "adapters_for",
    "find_resumable",
    "prepare",
    "production_attempt",
    "production_tickets",
    "replay_period",
    "restore_redacted",
    "row_images",
    "runs_for_period",
    "sample_tickets",
    "trial_row",
]
