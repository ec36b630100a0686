"""A replay run's settings and the agent it replays: what `replay_period` is asked to do."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from passhat.collector.replay._intent import INFER_MODES
from passhat.sandbox import AgentFactory
from passhat.sandbox.inference import ModelSettings

ProgressCallback = Callable[[int, int], None]
"""Called with (trials done, trials planned) as the run goes."""


class NothingToReplayError(ValueError):
    """The period has no production tickets in the store (nothing was sampled, no run was created)."""


class ExecutorError(RuntimeError):
    """The executor chosen cannot run the trials (Ray's cluster unreachable, a secret to forward unset...)."""


@dataclass(frozen=True)
class AgentSpec:
    """The agent under test: how to build it per trial, what to call it, and which version it is."""

    factory: AgentFactory
    label: str
    version: str = ""
    simulated: bool = False


@dataclass(frozen=True)
class ReplaySettings:
    """How a period is replayed."""

    k: int = 20
    tickets_per_task_type: int = 20
    sizes: Mapping[str, int] = field(default_factory=dict)
    parallel: int = 8
    seed: int = 0
    size: str = "small"
    flush_every: int = 256  # trials written to the store together (or every 2 s, whichever comes first)
    trials: int | None = None  # trials per ticket (default: k); pass^k is estimated from all of them
    task_types: tuple[str, ...] = ()  # only these task types (default: every one)
    stop_early: bool = False
    min_trials: int = 2
    executor: str = "local"  # "local" (worker processes on this machine) or "ray" (workers of a Ray cluster)
    workers: int = 0  # local worker processes (0: one per core); trials run in this process when none can be sent
    ray_address: str = "local"  # a running cluster's address ("auto", "ray://head:10001"), or "local" to start one
    ray_workers: int = 0  # worker actors, one CPU each (0: one per CPU of the cluster)
    ray_concurrency: int = 4  # trials in flight per worker
    ray_env: tuple[str, ...] = ()  # driver environment variables given to the workers (by name)
    harness_retries: int = 2  # times a trial the harness broke (infra_error, simulator_error) is run again
    infer_intent: str = "rules"  # how a ticket without a recorded intent gets one: "rules" | "model" | "off"
    intent_model: ModelSettings | None = None  # the model extractor's endpoint ([intent] in passhat.toml)

    def __post_init__(self) -> None:
        if self.infer_intent not in INFER_MODES:
            raise ValueError(f"infer_intent must be one of {', '.join(INFER_MODES)}, got {self.infer_intent!r}")
        if self.infer_intent == "model" and self.intent_model is None:
            raise ValueError("infer_intent = 'model' needs the model's settings ([intent] provider, model, base_url)")
        if self.executor not in ("local", "ray"):
            raise ValueError(f"executor must be 'local' or 'ray', got {self.executor!r}")
        if self.workers < 0:
            raise ValueError(f"workers must be 0 (one per core) or more, got {self.workers}")
        if self.ray_workers < 0 or self.ray_concurrency < 1:
            raise ValueError(
                f"ray_workers must be 0 (one per CPU) or more and ray_concurrency at least 1, got "
                f"{self.ray_workers} and {self.ray_concurrency}"
            )
        if not self.ray_address.strip():
            raise ValueError("ray_address must be 'local' or a Ray cluster's address, got an empty string")
        if self.min_trials < 1:
            raise ValueError(f"min_trials must be at least 1, got {self.min_trials}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.stop_early and self.trials is not None and self.trials > self.k:
            raise ValueError(
                f"stop_early runs at most k ({self.k}) trials per ticket, not {self.trials}: "
                "drop replay.trials or replay.stop_early"
            )
        if self.trials is not None and self.trials < self.k:
            raise ValueError(f"trials per ticket ({self.trials}) must be at least k ({self.k}): pass^k needs k trials")
        if self.tickets_per_task_type < 1:
            raise ValueError(f"tickets per task type must be at least 1, got {self.tickets_per_task_type}")
        if self.parallel < 1:
            raise ValueError(f"parallel must be at least 1, got {self.parallel}")
        if self.harness_retries < 0:
            raise ValueError(f"harness_retries must be 0 or more, got {self.harness_retries}")

    @property
    def trials_per_ticket(self) -> int:
        """How many trials each sampled ticket gets (at least k)."""
        return self.trials if self.trials is not None else self.k
