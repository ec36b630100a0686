"""passhat.toml: the configuration of the replay loop, its schedule, reports and alerts, validated with pydantic."""

from passhat.collector.config._load import DEFAULT_CONFIG, ConfigError, load_config, validate_config
from passhat.collector.config._model import (
    AgentConfig,
    AlertsConfig,
    ChannelConfig,
    EmailChannelConfig,
    IntentConfig,
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
from passhat.collector.config._objects import ObjectImportError, add_to_import_path, import_object

__all__ = [
    "DEFAULT_CONFIG",
    "AgentConfig",
    "AlertsConfig",
    "ChannelConfig",
    "ConfigError",
    "EmailChannelConfig",
    "IntentConfig",
    "ObjectImportError",
    "PasshatConfig",
    "ReplayConfig",
    "ReportConfig",
    "RetryConfig",
    "RuleConfig",
    "ScheduleConfig",
    "SlackChannelConfig",
    "StoreConfig",
    "WebhookChannelConfig",
    "add_to_import_path",
    "import_object",
    "load_config",
    "validate_config",
]
