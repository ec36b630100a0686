"""One trial: the per-trial database copy, the row overlay, the MCP transports, the runner and its grading."""

from passhat.sandbox.trial._curtailed import Curtailment, Outcome, is_settled, run_curtailed
from passhat.sandbox.trial._database import Sandbox, TrialDatabase, build_database
from passhat.sandbox.trial._details import TrialDetails
from passhat.sandbox.trial._overlay import OverlayError, RowImage, apply_overlay
from passhat.sandbox.trial._parking import release_copies_to_the_system
from passhat.sandbox.trial._retry import broken_by_harness, run_trial_with_retries
from passhat.sandbox.trial._runner import RunConfig, TrialResult, gather_trials, run_trial, run_trials
from passhat.sandbox.trial._serve import TOKEN_ENV, TRANSPORTS, connect, main, new_token, require_bearer, serve
from passhat.sandbox.trial._session import GradedSession, SessionTurn

__all__ = [
    "TOKEN_ENV",
    "TRANSPORTS",
    "Curtailment",
    "GradedSession",
    "Outcome",
    "OverlayError",
    "RowImage",
    "RunConfig",
    "Sandbox",
    "SessionTurn",
    "TrialDatabase",
    "TrialDetails",
    "TrialResult",
    "apply_overlay",
    "broken_by_harness",
    "build_database",
    "connect",
    "gather_trials",
    "is_settled",
    "main",
    "new_token",
    "release_copies_to_the_system",
    "require_bearer",
    "run_curtailed",
    "run_trial",
    "run_trial_with_retries",
    "run_trials",
    "serve",
]
