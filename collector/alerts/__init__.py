"""Alerts on pass^k: rules evaluated per period, delivered to webhooks, Slack and email, recorded in the Store."""

from passhat.collector.alerts._channels import (
    Channel,
    ChannelType,
    DeliveryError,
    EmailChannel,
    SlackChannel,
    WebhookChannel,
    email_message,
    slack_body,
)
from passhat.collector.alerts._counts import counts_from_tallies, counts_from_trials
from passhat.collector.alerts._delivery import (
    DeliveryAttempt,
    RetryPolicy,
    deliver,
    deliver_to,
    failure_text,
    outcomes,
    retry_line,
    retrying,
)
from passhat.collector.alerts._evaluate import evaluate
from passhat.collector.alerts._from_config import channels_from_config, retry_from_config, rules_from_config
from passhat.collector.alerts._mail import mail_message
from passhat.collector.alerts._record import (
    NOTICE_KINDS,
    REPORT_KIND,
    REPORT_RULE,
    STATE_RULE,
    AlertLog,
    PeriodOutcome,
)
from passhat.collector.alerts._types import (
    EVERY_TASK_TYPE,
    AlertNotice,
    AlertRule,
    AlertState,
    Evaluation,
    OpenAlert,
    PeriodCounts,
    RuleDecision,
    TicketCounts,
    alert_link,
)

__all__ = [
    "EVERY_TASK_TYPE",
    "NOTICE_KINDS",
    "REPORT_KIND",
    "REPORT_RULE",
    "STATE_RULE",
    "AlertLog",
    "AlertNotice",
    "AlertRule",
    "AlertState",
    "Channel",
    "ChannelType",
    "DeliveryAttempt",
    "DeliveryError",
    "EmailChannel",
    "Evaluation",
    "OpenAlert",
    "PeriodCounts",
    "PeriodOutcome",
    "RetryPolicy",
    "RuleDecision",
    "SlackChannel",
    "TicketCounts",
    "WebhookChannel",
    "alert_link",
    "channels_from_config",
    "counts_from_tallies",
    "counts_from_trials",
    "deliver",
    "deliver_to",
    "email_message",
    "evaluate",
    "failure_text",
    "mail_message",
    "outcomes",
    "retry_from_config",
    "retry_line",
    "retrying",
    "rules_from_config",
    "slack_body",
]
