"""`passhat report --send`: which channels the report goes to, and sending it with each outcome printed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from passhat.collector.cli._console import console, error_console, fail

if TYPE_CHECKING:  # imported where used: `passhat --help` stays light
    from passhat.collector.alerts import DeliveryAttempt
    from passhat.collector.config import PasshatConfig
    from passhat.collector.loop import DeliveryOutcome
    from passhat.collector.report import Report, UnreplayedReport
    from passhat.collector.store import Store


def send_targets(config: PasshatConfig, channel: list[str] | None) -> list[str]:
    """The channels `report --send` sends to: those named with --channel, else `[report] send_to`."""
    names = list(dict.fromkeys(channel)) if channel else list(config.report.send_to)
    if not names:
        fail(
            'nothing to send the report to: set [report] send_to = ["<channel>", ...] in the config '
            "(channels are [alerts.channels.<name>] tables), or pass --channel NAME"
        )
    unknown = [n for n in names if n not in config.alerts.channels]
    if unknown:
        known = ", ".join(sorted(config.alerts.channels)) or "none configured"
        fail(f"unknown channel(s) {', '.join(unknown)}; configured: {known}")
    return names


def send_period_report(
    store: Store,
    project: str,
    built: Report | UnreplayedReport,
    config: PasshatConfig,
    names: list[str],
    run_id: str,
    resend: bool,
    *,
    quiet: bool,
) -> DeliveryOutcome:
    """Send the report, printing each failed try as it happens and then each channel's outcome."""
    from passhat.collector.alerts import failure_text, retry_line
    from passhat.collector.loop import report_delivery, send_report

    delivery = report_delivery(config, names)
    out = error_console if quiet else console

    def show(attempt: DeliveryAttempt) -> None:
        line = retry_line(attempt, delivery.retry)  # a channel's last failure is said once, with its outcome
        if line is not None:
            out.print(escape(f"  {line}"), highlight=False, soft_wrap=True)

    outcome = send_report(store, project, built, delivery, run_id=run_id, trigger="cli", resend=resend, on_attempt=show)
    for channel in outcome.skipped:
        out.print(f"  {escape(channel)}: already sent for {built.period} (--resend sends it again)", highlight=False)
    for channel, result in outcome.sent.items():
        last = [a for a in outcome.attempts if a.channel == channel][-1]
        if result == "ok":
            count = f"{last.attempt} attempt{'' if last.attempt == 1 else 's'}"
            out.print(f"  {escape(channel)}: [green]sent[/] ({count})", highlight=False)
        else:
            failed = escape(failure_text(last)).removeprefix("failed")
            out.print(f"  {escape(channel)}: [red]failed[/]{failed}", highlight=False, soft_wrap=True)
    return outcome
