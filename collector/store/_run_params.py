"""A replay run's parameters, typed once: what the run replayed, how, and with which agent.

A run stores them as JSON (`ReplayRun.params`); `RunParams.of(run)` reads them back, with the one place that
says what a run recorded before a parameter existed (older rows ran k trials a ticket, over every task type,
under the fixed design). Keys another version wrote and this one does not know are kept as they were.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from passhat.collector.store._not_replayable import NotReplayable
from passhat.collector.store._rows import ReplayRun

DesignName = Literal["fixed", "curtailed"]


@dataclass(frozen=True)
class RunDesign:
    """The trial design: k trials a ticket (fixed), or curtailed (a ticket stops once it is settled, after at
    least ``min_trials``)."""

    name: DesignName = "fixed"
    k: int = 1
    min_trials: int | None = None

    @classmethod
    def fixed(cls, k: int) -> RunDesign:
        return cls("fixed", k)

    @classmethod
    def curtailed(cls, k: int, min_trials: int) -> RunDesign:
        return cls("curtailed", k, min(min_trials, k))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, k: int) -> RunDesign:
        """Read a stored design; a run recorded before designs were kept ran the fixed one."""
        if not isinstance(data, Mapping):
            return cls.fixed(k)
        name: DesignName = "curtailed" if data.get("name") == "curtailed" else "fixed"
        minimum = data.get("min_trials")
        return cls(name, int(data.get("k", k)), None if minimum is None else int(minimum))

    def to_dict(self) -> dict[str, Any]:
        """As stored with the run and stated in the report."""
        if self.name == "fixed":
            return {"name": "fixed", "k": self.k}
        return {"name": "curtailed", "k": self.k, "min_trials": self.min_trials}


@dataclass(frozen=True)
class RunParams:
    """A replay run's parameters. The identity fields say which runs are the same run (`same_run_as`); the rest
    record what its planning found (the sampled tickets, their population, the unreplayable ones, why it is a
    one-off)."""

    period: str | None
    k: int
    trials: int
    agent: str = ""
    agent_version: str = ""
    simulated: bool = False
    tickets_per_task_type: int = 0
    sizes: Mapping[str, int] = field(default_factory=dict)
    seed: int = 0
    size: str = "small"
    task_types: tuple[str, ...] = ()
    design: RunDesign = RunDesign()
    compare_to: str | None = None
    tickets: tuple[str, ...] = ()
    population: Mapping[str, int] = field(default_factory=dict)
    not_replayable: tuple[NotReplayable, ...] = ()
    exploratory: tuple[str, ...] = ()
    intents: Mapping[str, Any] = field(default_factory=dict)
    """Intents inferred for tickets that recorded none: ticket id -> source, task type, intent, evidence."""
    classified_traffic: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """Tickets intent inference classified, per day: {"unnamed->task_type": tickets}."""
    other: Mapping[str, Any] = field(default_factory=dict)
    """Keys this version does not know (written by another one): kept as they were."""

    IDENTITY = (
        "period", "k", "trials", "agent", "agent_version", "tickets_per_task_type", "sizes", "seed", "size",
        "task_types", "compare_to", "design",
    )  # fmt: skip

    @classmethod
    def of(cls, run: ReplayRun) -> RunParams:
        """The parameters a stored run recorded."""
        return cls.from_dict(run.params, run.k)

    @classmethod
    def from_dict(cls, params: Mapping[str, Any], k: int) -> RunParams:
        """Read stored parameters, with the defaults of rows recorded before a parameter was kept."""
        known = {f.name for f in dataclasses.fields(cls)}
        period = params.get("period")
        return cls(
            period=None if period is None else str(period),
            k=int(params.get("k", k)),
            trials=int(params.get("trials", k)),
            agent=str(params.get("agent", "")),
            agent_version=str(params.get("agent_version", "")),
            simulated=bool(params.get("simulated", False)),
            tickets_per_task_type=int(params.get("tickets_per_task_type", 0)),
            sizes={str(name): int(size) for name, size in dict(params.get("sizes") or {}).items()},
            seed=int(params.get("seed", 0)),
            size=str(params.get("size", "small")),
            task_types=tuple(sorted(str(name) for name in params.get("task_types") or ())),
            design=RunDesign.from_dict(params.get("design"), k),
            compare_to=params.get("compare_to"),
            tickets=tuple(map(str, params.get("tickets") or ())),  # a run can sample 50,000 tickets
            population={str(name): int(count) for name, count in dict(params.get("population") or {}).items()},
            not_replayable=tuple(
                NotReplayable.from_dict(item) for item in params.get("not_replayable") or () if isinstance(item, dict)
            ),
            exploratory=tuple(str(reason) for reason in params.get("exploratory") or ()),
            intents=dict(params.get("intents") or {}),
            classified_traffic={
                str(day): {str(move): int(n) for move, n in dict(moves).items()}
                for day, moves in dict(params.get("classified_traffic") or {}).items()
            },
            other={key: value for key, value in params.items() if key not in known},
        )

    def to_dict(self) -> dict[str, Any]:
        """As stored in `ReplayRun.params` (JSON values)."""
        return {
            **self.other,
            "period": self.period,
            "k": self.k,
            "agent": self.agent,
            "agent_version": self.agent_version,
            "simulated": self.simulated,
            "tickets_per_task_type": self.tickets_per_task_type,
            "sizes": dict(self.sizes),
            "seed": self.seed,
            "size": self.size,
            "trials": self.trials,
            "task_types": list(self.task_types),
            "design": self.design.to_dict(),
            "compare_to": self.compare_to,
            "tickets": list(self.tickets),
            "population": dict(self.population),
            "not_replayable": [item.to_dict() for item in self.not_replayable],
            "exploratory": list(self.exploratory),
            "intents": dict(self.intents),
            "classified_traffic": {day: dict(moves) for day, moves in self.classified_traffic.items()},
        }

    def identity(self) -> tuple[Any, ...]:
        """What makes two runs the same run (the period, the agent and version, k, trials, the sample, design)."""
        return tuple(getattr(self, name) for name in self.IDENTITY)

    def same_run_as(self, other: RunParams) -> bool:
        """Whether ``other`` replays the same thing the same way (then it is reused or resumed, not re-run)."""
        return self.identity() == other.identity()
