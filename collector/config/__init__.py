"""passhat.toml: the configuration of the replay loop, its schedule, reports and alerts, validated with pydantic."""

from passhat.collector.config._load import DEFAULT_CONFIG, ConfigError, load_config, validate_config
from passhat.collector.config._model import (
    AgentConfig,
    AlertsConfig,
    ChannelConfig,
    EmailChannelConfig,
    PasshatConfig,
    ReplayConfig,
    ReportConfig,
    RetryConfig,
    RuleConfig,
    ScheduleConfig,
    SlackChannelConfig,
    StoreConfig,
    WebhookChannelConfig,
)

__all__ = [
    "DEFAULT_CONFIG",
    "AgentConfig",
    "AlertsConfig",
    "ChannelConfig",
    "ConfigError",
    "EmailChannelConfig",
    "PasshatConfig",
    "ReplayConfig",
    "ReportConfig",
    "RetryConfig",
    "RuleConfig",
    "ScheduleConfig",
    "SlackChannelConfig",
    "StoreConfig",
    "WebhookChannelConfig",
    "load_config",
    "validate_config",
]
