"""The shape of passhat.toml: pydantic models with defaults and bounds, one per table."""

from __future__ import annotations

import datetime as dt
import pathlib
import re
import zoneinfo
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from passhat.collector.config._tables import Table, refuse

_IDENT = r"^[a-z][a-z0-9_]*$"
_RULE_NAME = r"^[a-z0-9][a-z0-9_-]*$"
_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_SERVICE = re.compile(r"^https?://[^\s/]+(/\S*)?$", re.IGNORECASE)
_TIME = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Severity = Literal["info", "warning", "critical"]


def _matches(pattern: str, value: str, what: str) -> str:
    if not re.match(pattern, value):
        raise ValueError(f"must be {what}, got {value!r}")
    return value


_SQLITE_FILE = re.compile(r"^(?P<scheme>sqlite(?:\+\w+)?):///(?P<path>[^?]*)(?P<query>\?.*)?$", re.IGNORECASE)
_CHDB_RELATIVE = re.compile(r"^chdb://(?P<path>[^/].*)$", re.IGNORECASE)  # chdb://data/ch, not chdb:///abs/data
_RULE_WHAT = "lowercase letters, digits, '-' or '_' (no dots or spaces)"
PROJECT_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""What a project may be called (passhat.toml's `project`, `passhat keys create --project`): at most 100 of these."""
PROJECT_NAME_WHAT = "letters, digits, '.', '-' or '_'"
PROJECT_NAME_MAX = 100
_IDENT_WHAT = "a lowercase identifier such as 'retail' (letters, digits, '_')"


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"must be an http:// or https:// URL, got {value!r}")
    return value


class AgentConfig(Table):
    """Which agent the replays run: the offline reference agent, Claude, or your own factory."""

    factory: str = "reference"
    model: str | None = None
    base_url: str | None = None
    version: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("factory")
    @classmethod
    def _factory(cls, value: str) -> str:
        if value in ("reference", "anthropic", "openai") or _FACTORY.match(value) or _SERVICE.match(value):
            return value
        raise ValueError(
            f"must be 'reference', 'anthropic', 'openai', an agent service's 'http(s)://host:port/path' or "
            f"'module:function', got {value!r}"
        )

    @model_validator(mode="after")
    def _model_for_a_model_agent(self, info: ValidationInfo) -> AgentConfig:
        given = [key for key in ("model", "base_url") if getattr(self, key) is not None]
        if given and self.factory not in ("anthropic", "openai"):
            keys = " and ".join(f"agent.{key}" for key in given)
            what = (
                "the reference agent, an offline simulation that calls no model"
                if self.factory == "reference"
                else f"{self.factory!r}, which calls its own model"
            )
            verb = "apply" if len(given) > 1 else "applies"
            refuse(
                info,
                f"{keys} {verb} to factory = 'anthropic' or 'openai' only, not to {what}: remove {keys}, or set "
                "factory to a model agent",
                "factory",
                "model",
                "base_url",
            )
        return self


class StoreConfig(Table):
    """Where passhat keeps traces, trials and alert history."""

    url: str | None = None
    data_dir: str = "~/.passhat"


class ReplayConfig(Table):
    """How many tickets are replayed per task type and period, and how many times each."""

    k: int = Field(default=5, ge=1, le=1000)
    trials: int | None = Field(default=None, ge=1, le=1000)
    tickets_per_task_type: int = Field(default=50, ge=1, le=100_000)
    concurrency: int = Field(default=4, ge=1, le=256)
    #: Curtailed replay: a ticket's trials stop once one passed and one failed (its pass^k and pass@k settled).
    stop_early: bool = False
    #: Attempts every ticket runs under stop_early; pass@1 is taken from them.
    min_trials: int = Field(default=2, ge=1, le=1000)
    #: Where trials run: "local" (worker processes on this machine, `concurrency` at once in all) or "ray"
    #: (worker actors of a Ray cluster).
    executor: Literal["local", "ray"] = "local"
    #: Local worker processes running trials; 0 starts one per core. An agent factory that cannot be sent to
    #: another process (a closure, a client object) runs its trials in the collector's process instead.
    workers: int = Field(default=0, ge=0, le=1024)
    #: With executor = "ray": "local" starts a cluster in this process; else a running cluster's address.
    ray_address: str = Field(default="local", min_length=1)
    #: Ray worker actors, one CPU each; 0 starts one per CPU of the cluster.
    ray_workers: int = Field(default=0, ge=0, le=100_000)
    #: Trials in flight per Ray worker.
    ray_concurrency: int = Field(default=4, ge=1, le=256)
    #: Names of environment variables (secrets such as ANTHROPIC_API_KEY) given to the Ray workers.
    ray_env: list[str] = Field(default_factory=list)
    #: Times a trial the harness broke (infra_error, simulator_error) is run again before it is left out of the
    #: figures and reported by cause.
    harness_retries: int = Field(default=2, ge=0, le=20)
    #: How a ticket without a recorded intent gets one: "rules" (offline: the customer's words and the rows they
    #: lead to), "model" (the [intent] model reads them), or "off" (such tickets are not replayable).
    infer_intent: Literal["rules", "model", "off"] = "rules"

    @model_validator(mode="after")
    def _trials_cover_k(self, info: ValidationInfo) -> ReplayConfig:
        if self.trials is not None and self.trials < self.k:
            refuse(
                info,
                f"trials ({self.trials}) must be at least k ({self.k}): pass^k needs k trials per ticket",
                "trials",
                "k",
            )
        return self

    @property
    def trials_per_ticket(self) -> int:
        return self.trials if self.trials is not None else self.k


class IntentConfig(Table):
    """The model the ``model`` intent extractor asks (``replay.infer_intent = "model"``): any Anthropic or
    OpenAI-compatible endpoint. Its key comes from ANTHROPIC_API_KEY / OPENAI_API_KEY (none for a local server)."""

    provider: Literal["anthropic", "openai"] | None = None
    model: str | None = Field(default=None, min_length=1)
    base_url: str | None = Field(default=None, min_length=1)


class ScheduleConfig(Table):
    """When the scheduler in `passhat serve` replays, reports and evaluates alerts."""

    enabled: bool = True
    every: Literal["daily", "weekly"] = "weekly"
    weekday: Weekday = "monday"
    time: str = "06:00"
    timezone: str = "UTC"

    @field_validator("time")
    @classmethod
    def _time(cls, value: str) -> str:
        if not _TIME.match(value):
            raise ValueError(f"must be a 24-hour time HH:MM, got {value!r}")
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value!r} (use an IANA name such as 'UTC' or 'Europe/Paris')"
            ) from None
        return value

    def at(self) -> dt.time:
        """The time of day, in `timezone`."""
        hour, minute = self.time.split(":")
        return dt.time(int(hour), int(minute), tzinfo=zoneinfo.ZoneInfo(self.timezone))


ReportFormat = Literal["html", "json", "md"]


def _all_formats() -> list[ReportFormat]:
    return ["html", "json", "md"]


class ReportConfig(Table):
    """Where reports are written and in which formats, and which channels each period's report is sent to."""

    out_dir: str = "reports"
    formats: list[ReportFormat] = Field(default_factory=_all_formats, min_length=1)
    #: Channels of [alerts.channels] that get each period's report when its official run finishes.
    send_to: list[str] = Field(default_factory=list)
    #: The web UI's address as your team reaches it (e.g. https://passhat.example.com/ui/): messages link to it.
    ui_url: str | None = None
    #: A generic webhook gets the whole report.json up to this size, else its summary and the link.
    webhook_max_bytes: int = Field(default=256 * 1024, ge=1024, le=64 * 1024 * 1024)

    @field_validator("send_to")
    @classmethod
    def _send_to(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"names a channel twice: {value}")
        return value

    @field_validator("ui_url")
    @classmethod
    def _ui_url(cls, value: str | None) -> str | None:
        return None if value is None else _http_url(value)


class RetryConfig(Table):
    """Delivery retries per channel: bounded attempts with exponential backoff."""

    attempts: int = Field(default=3, ge=1, le=20)
    backoff_seconds: float = Field(default=2.0, ge=0.0, le=3600.0)
    multiplier: float = Field(default=2.0, ge=1.0, le=10.0)
    max_backoff_seconds: float = Field(default=60.0, ge=0.0, le=3600.0)
    timeout_seconds: float = Field(default=10.0, gt=0.0, le=300.0)


class WebhookChannelConfig(Table):
    """A generic JSON webhook."""

    type: Literal["webhook"]
    url: str
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value)


class SlackChannelConfig(Table):
    """A Slack (or Slack-compatible) incoming webhook."""

    type: Literal["slack"]
    url: str

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value)


class EmailChannelConfig(Table):
    """Email over SMTP."""

    type: Literal["email"]
    host: str = Field(min_length=1)
    port: int = Field(default=25, ge=1, le=65535)
    sender: str
    to: list[str] = Field(min_length=1)
    username: str | None = None
    password: str | None = None
    starttls: bool = False
    ssl: bool = False
    ca_file: str | None = None

    @field_validator("sender")
    @classmethod
    def _sender(cls, value: str) -> str:
        if "@" not in value:
            raise ValueError(f"must be an email address, got {value!r}")
        return value

    @field_validator("to")
    @classmethod
    def _to(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if "@" not in v]
        if bad:
            raise ValueError(f"must be email addresses, got {bad!r}")
        return value

    @model_validator(mode="after")
    def _tls(self, info: ValidationInfo) -> EmailChannelConfig:
        if self.starttls and self.ssl:
            refuse(
                info,
                "choose one of starttls (upgrade a plain connection) and ssl (TLS from the start)",
                "starttls",
                "ssl",
            )
        if self.password is not None and self.username is None:
            refuse(info, "password is set without username", "password", "username")
        return self


ChannelConfig = Annotated[WebhookChannelConfig | SlackChannelConfig | EmailChannelConfig, Field(discriminator="type")]


class RuleConfig(Table):
    """One alert rule (see docs/alerts.md)."""

    name: str = Field(max_length=80)
    kind: Literal["threshold", "drop"]
    task_type: str | None = Field(default=None, min_length=1)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    baseline_periods: int = Field(default=4, ge=1, le=104)
    min_tickets: int = Field(default=20, ge=1)
    confidence: float = Field(default=0.99, ge=0.5, le=0.9999)
    min_drop: float = Field(default=0.0, ge=0.0, lt=1.0)
    permutations: int = Field(default=2000, ge=100, le=100_000)
    cooldown_periods: int = Field(default=1, ge=0, le=52)
    resolve_margin: float = Field(default=0.0, ge=0.0, le=1.0)
    resolve_confidence: float = Field(default=0.95, ge=0.5, le=0.9999)
    correction: Literal["holm", "bh", "none"] = "holm"
    severity: Severity = "warning"
    channels: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _matches(_RULE_NAME, value, _RULE_WHAT)

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> RuleConfig:
        if self.kind == "threshold" and self.threshold is None:
            refuse(info, "a threshold rule needs `threshold` (pass^k below it fires)", "kind", "threshold")
        if self.kind == "drop" and self.threshold is not None:
            refuse(
                info,
                "a drop rule takes no `threshold` (it compares against a baseline of earlier periods)",
                "kind",
                "threshold",
            )
        if (self.permutations + 1) * (1.0 - self.confidence) < 1.0:
            refuse(
                info,
                f"{self.permutations} permutations are too few for confidence {self.confidence}",
                "permutations",
                "confidence",
            )
        if self.resolve_confidence > self.confidence:
            refuse(
                info,
                "resolve_confidence must not exceed confidence (it is the looser, resolving level)",
                "resolve_confidence",
                "confidence",
            )
        return self


class AlertsConfig(Table):
    """Alert rules, the channels they go to, and delivery retries."""

    rules: list[RuleConfig] = Field(default_factory=list)
    channels: dict[str, ChannelConfig] = Field(default_factory=dict)
    retry: RetryConfig = Field(default_factory=RetryConfig)

    @field_validator("channels")
    @classmethod
    def _channel_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            _matches(_RULE_NAME, name, f"channel names of {_RULE_WHAT}")
        return value

    @model_validator(mode="after")
    def _references(self, info: ValidationInfo) -> AlertsConfig:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.name in seen:
                refuse(info, f"two rules are named {rule.name!r}; rule names must be unique", "rules")
            seen.add(rule.name)
            unknown = [c for c in rule.channels if c not in self.channels]
            if unknown:
                known = ", ".join(sorted(self.channels)) or "none configured"
                refuse(
                    info, f"rule {rule.name!r} names unknown channel(s) {unknown} (known: {known})", "rules", "channels"
                )
        return self


class PasshatConfig(Table):
    """The whole passhat.toml."""

    project: str = Field(default="default", max_length=PROJECT_NAME_MAX)
    domains: list[str] = Field(default_factory=lambda: ["retail"], min_length=1)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    replay: ReplayConfig = Field(default_factory=ReplayConfig)
    intent: IntentConfig = Field(default_factory=IntentConfig)
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    report: ReportConfig = Field(default_factory=ReportConfig)
    alerts: AlertsConfig = Field(default_factory=AlertsConfig)

    _base_dir: pathlib.Path = PrivateAttr(default_factory=pathlib.Path.cwd)

    @model_validator(mode="after")
    def _intent_model(self, info: ValidationInfo) -> PasshatConfig:
        if self.replay.infer_intent == "model" and (self.intent.provider is None or self.intent.model is None):
            refuse(
                info,
                'replay.infer_intent = "model" needs the model: add an [intent] table with provider '
                '("anthropic" or "openai"), model, and base_url for a local or compatible endpoint',
                "replay.infer_intent",
                "intent",
            )
        return self

    @model_validator(mode="after")
    def _report_channels(self, info: ValidationInfo) -> PasshatConfig:
        unknown = [name for name in self.report.send_to if name not in self.alerts.channels]
        if unknown:
            known = ", ".join(sorted(self.alerts.channels)) or "none"
            refuse(
                info,
                f"report.send_to: unknown channel(s) {', '.join(unknown)} (configured: {known}); "
                "send_to names [alerts.channels.<name>] tables",
                "report.send_to",
                "alerts.channels",
            )
        return self

    @field_validator("project")
    @classmethod
    def _project(cls, value: str) -> str:
        return _matches(PROJECT_NAME, value, PROJECT_NAME_WHAT)

    @field_validator("domains")
    @classmethod
    def _domains(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _FACTORY.match(name):
                _matches(_IDENT, name, f"{_IDENT_WHAT}, or module:attribute naming your own Domain or adapter")
        if len(set(value)) != len(value):
            raise ValueError(f"lists a domain twice: {value}")
        return value

    @property
    def base_dir(self) -> pathlib.Path:
        """The folder relative paths are resolved against: the config file's folder."""
        return self._base_dir

    def resolve_path(self, value: str) -> pathlib.Path:
        """A path from the config (``~`` expanded, relative to the config file's folder)."""
        path = pathlib.Path(value).expanduser()
        return path if path.is_absolute() else (self._base_dir / path).resolve()

    def data_dir(self) -> pathlib.Path:
        return self.resolve_path(self.store.data_dir)

    def report_dir(self) -> pathlib.Path:
        return self.resolve_path(self.report.out_dir)

    def report_dir_for(self, project: str) -> pathlib.Path:
        """Where ``project``'s reports go: the report folder for the config's own project, a folder of the
        project's name in it for any other (`--project`), so two projects' reports of a period never overwrite
        each other."""
        base = self.report_dir()
        return base if project == self.project else base / project

    def store_url(self) -> str:
        """The store URL: `store.url`, or a SQLite file in the data dir. A relative SQLite file or chdb data
        directory in `store.url` is resolved against the config file's folder, as `data_dir` is."""
        if not self.store.url:
            return f"sqlite:///{self.data_dir() / 'passhat.db'}"
        url = self.store.url
        sqlite = _SQLITE_FILE.match(url)
        if sqlite is not None:
            path, query = sqlite["path"], sqlite["query"] or ""
            if path and path != ":memory:" and not path.startswith(("/", "file:")):
                return f"{sqlite['scheme']}:///{self.resolve_path(path)}{query}"
            return url
        chdb = _CHDB_RELATIVE.match(url)
        if chdb is not None and chdb["path"] not in ("memory", "") and not chdb["path"].startswith("memory?"):
            path, _, query = chdb["path"].partition("?")
            return f"chdb://{self.resolve_path(path)}{'?' + query if query else ''}"
        return url
