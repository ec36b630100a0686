"""The data of alerting: rules, per-period ticket counts, the open-alert state and the notices sent out."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from passhat.collector.reliability import ArrayLike, Correction

RuleKind = Literal["threshold", "drop"]
NoticeKind = Literal["fired", "resolved", "test"]

#: `task_type` of a rule that applies to every task type separately (one alert per task type).
EVERY_TASK_TYPE = "*"
#: Periods kept per rule and scope as "in alert" (left out of drop baselines).
EXCLUDED_KEPT = 52


@dataclass(frozen=True)
class AlertRule:
    """One alert rule: pass^k of a task type (or overall) below a threshold, or dropped against a baseline.

    ``task_type`` None means the overall pass^k; ``"*"`` means each task type on its own. A drop rule over every
    task type treats the period's task types as one family of tests, corrected by ``correction`` (``holm``: the
    chance of any false alert in a quiet period is at most 1 - confidence; ``bh``: the expected share of false
    alerts among those raised is; ``none``). An open drop alert resolves only when a period is above the periods
    in alert beyond noise at ``resolve_confidence``.
    """

    name: str
    kind: RuleKind
    task_type: str | None = None
    threshold: float | None = None
    baseline_periods: int = 4
    min_tickets: int = 20
    confidence: float = 0.99
    min_drop: float = 0.0
    permutations: int = 2000
    cooldown_periods: int = 1
    resolve_margin: float = 0.0
    resolve_confidence: float = 0.95
    correction: Correction = "holm"
    severity: str = "warning"
    channels: tuple[str, ...] = ()  # empty: every configured channel

    def __post_init__(self) -> None:
        if self.kind == "threshold" and self.threshold is None:
            raise ValueError(f"rule {self.name!r}: a threshold rule needs a threshold")
        if self.threshold is not None and not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"rule {self.name!r}: threshold must lie in [0, 1], got {self.threshold}")
        if self.baseline_periods < 1 or self.min_tickets < 1 or self.cooldown_periods < 0:
            raise ValueError(f"rule {self.name!r}: baseline_periods and min_tickets must be >= 1, cooldown >= 0")


@dataclass(frozen=True)
class TicketCounts:
    """Per-ticket trial counts of one task type in one period: ticket i had n[i] trials, c[i] of them passed."""

    n: ArrayLike
    c: ArrayLike


@dataclass(frozen=True)
class PeriodCounts:
    """One period's counts per task type, and optionally each task type's weight (e.g. daily traffic)."""

    period: str
    task_types: Mapping[str, TicketCounts]
    weights: Mapping[str, float] | None = None


@dataclass(frozen=True)
class OpenAlert:
    """An alert that fired and has not resolved yet."""

    alert_id: str
    rule: str
    task_type: str | None
    fired_period: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "alert_id": self.alert_id,
            "rule": self.rule,
            "task_type": self.task_type,
            "fired_period": self.fired_period,
            "details": dict(self.details),
        }


@dataclass(frozen=True)
class AlertState:
    """What evaluation remembers between periods, keyed by rule and scope (`rule` or `rule/task_type`).

    ``open``: alerts fired and not resolved. ``cooldown``: periods left before a resolved alert may fire again.
    ``excluded``: periods in which the scope was in alert, left out of later drop baselines so a regression
    does not become the new normal.
    """

    last_period: str | None = None
    open: Mapping[str, OpenAlert] = field(default_factory=dict)
    cooldown: Mapping[str, int] = field(default_factory=dict)
    excluded: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, for storage."""
        return {
            "last_period": self.last_period,
            "open": {key: alert.to_dict() for key, alert in sorted(self.open.items())},
            "cooldown": dict(sorted(self.cooldown.items())),
            "excluded": {key: list(periods[-EXCLUDED_KEPT:]) for key, periods in sorted(self.excluded.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AlertState:
        """Rebuild the state written by `to_dict`."""
        return cls(
            last_period=data.get("last_period"),
            open={key: OpenAlert(**value) for key, value in dict(data.get("open", {})).items()},
            cooldown={key: int(value) for key, value in dict(data.get("cooldown", {})).items()},
            excluded={key: tuple(value) for key, value in dict(data.get("excluded", {})).items()},
        )


@dataclass(frozen=True)
class AlertNotice:
    """A message to deliver: an alert firing, resolving, or a test."""

    alert_id: str
    kind: NoticeKind
    rule: str
    task_type: str | None
    period: str
    severity: str
    title: str
    text: str
    details: Mapping[str, Any] = field(default_factory=dict)
    channels: tuple[str, ...] = ()  # empty: every configured channel
    project: str = ""  # the store project it is about (`AlertLog` sets it): every message names it
    link: str | None = None  # its page in the web UI, when `[report] ui_url` is set (`alert_link`)

    @property
    def scope(self) -> str:
        """What the alert is about: a task type, or ``overall``."""
        return self.task_type if self.task_type is not None else "overall"

    def addressed(self, project: str, ui_url: str | None) -> AlertNotice:
        """The notice as sent for ``project``: naming it, and linking to its page under ``ui_url`` (if any)."""
        return replace(self, project=project, link=alert_link(ui_url, self.task_type, self.period))

    def payload(self) -> dict[str, Any]:
        """The generic webhook body (documented in docs/alerts.md)."""
        return {
            "source": "passhat",
            "event": f"alert.{self.kind}",
            "project": self.project or None,
            "alert_id": self.alert_id,
            "rule": self.rule,
            "scope": self.scope,
            "task_type": self.task_type,
            "period": self.period,
            "severity": self.severity,
            "title": self.title,
            "text": self.text,
            "details": dict(self.details),
            "link": self.link,
        }


def alert_link(ui_url: str | None, task_type: str | None, period: str) -> str | None:
    """An alert's page in the web UI: its task type's page at its period, or the alerts page for an overall alert;
    None without a UI address."""
    if not ui_url:
        return None
    base = ui_url if ui_url.endswith("/") else ui_url + "/"
    if task_type is None:
        return f"{base}alerts"
    query = urllib.parse.urlencode({"period": period})
    return f"{base}task-types/{urllib.parse.quote(task_type, safe='')}?{query}"


@dataclass(frozen=True)
class RuleDecision:
    """What one rule concluded for one scope this period (fired, resolved, open, quiet, cooldown, no data)."""

    rule: str
    task_type: str | None
    outcome: Literal["fired", "resolved", "still_open", "quiet", "cooldown", "insufficient"]
    reason: str
    value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "task_type": self.task_type,
            "outcome": self.outcome,
            "reason": self.reason,
            "value": self.value,
        }


@dataclass(frozen=True)
class Evaluation:
    """The result of evaluating the rules on one period: notices to send and the state to keep."""

    fire: list[AlertNotice]
    resolve: list[AlertNotice]
    state: AlertState
    decisions: list[RuleDecision]
    repeated: bool = False  # the period had been evaluated already: nothing new

    @property
    def notices(self) -> list[AlertNotice]:
        return [*self.fire, *self.resolve]
