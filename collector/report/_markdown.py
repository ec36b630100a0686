"""`report.md`: the report as Markdown, for a pull request, a wiki page or a chat message."""

from __future__ import annotations

from passhat.collector.report._fidelity_text import fidelity_markdown
from passhat.collector.report._format import (
    agent_text,
    change_lines,
    ci,
    markdown_cell,
    markdown_text,
    paired_interval,
    pct,
    points,
    verdict,
    volume,
    volume_interval,
    when,
)
from passhat.collector.report._model import Report

# Every value interpolated below goes through one of these (the short names keep the tables readable).
_user = markdown_text
_cell = markdown_cell


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _with_ci(value: float | None, interval: tuple[float, float] | None) -> str:
    return f"{pct(value)} {ci(interval)}".strip()


def _change(change: float | None, interval: tuple[float, float] | None) -> str:
    return points(change) + ("" if interval is None else f" {paired_interval(list(interval))}")


def _design(report: Report) -> str:
    d = report.design or {}
    if d.get("name") != "curtailed":
        return f"{report.k} trials a ticket"
    return (
        f"curtailed (at least {d['min_trials']} attempts a ticket, stopped once one passed and one failed; pass@1 "
        f"from the first {d['min_trials']}): {d['trials']} trials instead of {d['trials_fixed_design']}"
    )


def _comparison(report: Report) -> list[str]:
    data = report.comparison
    if data is None:
        return []
    k, level = data["k"], data["level"]
    out = [
        f"## Compared with run {_user(data['baseline']['run_id'])} on the same tickets",
        "",
        f"Candidate minus baseline, {100 * level:g}% paired interval; *worse* when the whole interval is below zero.",
        "",
    ]
    return out + _table(
        ["task type", "tickets", "pass@1 change", f"pass^{k} change", "interval", "verdict"],
        [
            [
                _user(row["task_type"]), str(row["tickets"]),
                f"{points(row['pass_at_1']['difference'])} {paired_interval(row['pass_at_1']['interval'])}",
                points(row["pass_hat_k"]["difference"]), paired_interval(row["pass_hat_k"]["interval"]),
                verdict(row["pass_hat_k"]),
            ]
            for row in data["task_types"]
        ],
    )  # fmt: skip


def render_markdown(report: Report) -> str:
    """The report's figures and lists as Markdown tables (the HTML's interactive parts are left out)."""
    k, o = report.k, report.overall
    w, u = o.weighted, o.unweighted
    out = [f"# Reliability report {_user(report.period)}", ""]
    agent = f", agent {_user(report.agent)}" if report.agent else ""
    agent += f" version {_user(report.agent_version)}" if report.agent_version else ""
    run = f" From {_user(report.run_role)} run {_user(report.run_id)}." if report.run_id else ""
    out += [
        f"{report.first_day} to {report.last_day}{agent}, k = {k}, generated {when(report.generated_at)}.{run}",
        "",
    ]
    if report.simulated:
        out += ["> **Simulated agent.** These figures come from a simulated agent, not from your production agent.", ""]
    out += [
        f"- **pass@1** (traffic-weighted): {_with_ci(w.pass_at_1, w.pass_at_1_ci)}",
        f"- **pass^{k}** (traffic-weighted): {_with_ci(w.pass_hat_k, w.pass_hat_k_ci)}",
        f"- **pass@{k}** (traffic-weighted): {_with_ci(w.pass_at_k, w.pass_at_k_ci)}",
        f"- **expected failed tickets per day**: {volume(o.expected_failed_tickets_per_day)} "
        f"{volume_interval(o.expected_failed_tickets_per_day_ci)} of {volume(o.measured_daily_volume)}",
        f"- plain mean over {o.tickets_sampled} sampled tickets: pass@1 {_with_ci(u.pass_at_1, u.pass_at_1_ci)}, "
        f"pass@{k} {_with_ci(u.pass_at_k, u.pass_at_k_ci)}, pass^{k} {_with_ci(u.pass_hat_k, u.pass_hat_k_ci)}",
        f"- intervals: {report.confidence_level:.0%} continuity-corrected Wilson over tickets (± half-width in "
        f"points); widest: {_user(report.sample_size)}",
        f"- design: {_design(report)}",
        "",
    ]
    if o.unmeasured_task_types:
        names = ", ".join(f"{_user(d)}/{_user(t)} ({volume(v)}/day)" for d, t, v in o.unmeasured_task_types)
        out += [f"Traffic with no replayed tickets this period: {names}.", ""]
    out += ["## Domains", ""]
    out += _table(
        ["domain", "task types", "tickets/day", "sampled", "pass@1", f"pass@{k}", f"pass^{k}", "failed/day"],
        [
            [
                _user(d.domain),
                str(d.task_types),
                volume(d.daily_volume),
                str(d.tickets_sampled),
                _with_ci(d.weighted.pass_at_1, d.weighted.pass_at_1_ci),
                _with_ci(d.weighted.pass_at_k, d.weighted.pass_at_k_ci),
                _with_ci(d.weighted.pass_hat_k, d.weighted.pass_hat_k_ci),
                f"{volume(d.expected_failed_tickets_per_day)} {volume_interval(d.expected_failed_tickets_per_day_ci)}",
            ]
            for d in report.domains
        ],
    )
    out += ["## Task types", ""]
    out += _table(
        ["task type", "tickets/day", "sampled", "trials/ticket", "pass@1", f"pass@{k}", f"pass^{k}", "failed/day"],
        [
            [
                _user(t.name),
                volume(t.daily_volume),
                str(t.tickets_sampled),
                str(t.trials_per_ticket),
                _with_ci(t.figures.pass_at_1, t.figures.pass_at_1_ci),
                _with_ci(t.figures.pass_at_k, t.figures.pass_at_k_ci),
                _with_ci(t.figures.pass_hat_k, t.figures.pass_hat_k_ci),
                f"{volume(t.expected_failed_tickets_per_day)} {volume_interval(t.expected_failed_tickets_per_day_ci)}",
            ]
            for t in report.task_types
        ],
    )
    out += ["## Failure signatures", ""]
    out += _table(
        ["task type", "failed trials", "share of failed trials by signature (count)"],
        [
            [
                _user(t.name),
                f"{t.failed_trials} of {t.trials}",
                ", ".join(
                    f"{_user(label)} {count / t.failed_trials:.0%} ({count})" for label, count in t.signatures.items()
                )
                or "none",
            ]
            for t in report.task_types
        ],
    )
    side = report.least_reliable
    if side is not None:
        out += [
            f"## {_user(side.domain)}/{_user(side.task_type)}: {len(side.attempts)} attempts side by side",
            "",
            markdown_text(side.why, line_start=True) + ".",
            "",
        ]
        out += _table(
            ["attempt", "verdict", "signature", "ended", "backend changes", "final response"],
            [
                [
                    str(a.attempt),
                    "PASS" if a.passed else "FAIL",
                    _user(a.signature or ""),
                    _user(a.termination_reason),
                    "; ".join(_user(" ".join(change_lines(ch))) for ch in a.changes) or "none",
                    _user(a.final_response[:160]),
                ]
                for a in side.attempts
            ],
        )
    out += ["## Week over week", ""]
    out += _table(
        ["period", "k", "tickets", "pass@1", "change", "pass^k", "change", "failed/day", "agent"],
        [
            [
                _user(p.period),
                str(p.k),
                "–" if p.tickets is None else str(p.tickets),
                _with_ci(p.pass_at_1, p.pass_at_1_ci),
                _change(p.pass_at_1_change, p.pass_at_1_change_ci),
                _with_ci(p.pass_hat_k, p.pass_hat_k_ci),
                _change(p.pass_hat_k_change, p.pass_hat_k_change_ci),
                volume(p.expected_failed_tickets_per_day),
                _user(agent_text(p.agent, p.agent_version)),
            ]
            for p in report.trend
        ],
    )
    out += _comparison(report)
    out += fidelity_markdown(report, _user)
    out += [f"## Not replayable ({len(report.not_replayable)})", ""]
    if report.not_replayable:
        out += _table(
            ["ticket", "task type", "reason"],
            [
                [_user(r.ticket_id), _user(r.task_type), _user(r.reason + (f" ({r.fix})" if r.fix else ""))]
                for r in report.not_replayable
            ],
        )
    else:
        out += ["Every sampled ticket could be replayed.", ""]
    if report.harness_failures:
        total = sum(g.trials for g in report.harness_failures)
        out += [f"## Trials the harness broke ({total})", ""]
        out += ["Infrastructure or simulator errors after their retries: never the agent's, in no figure above.", ""]
        out += _table(
            ["trials", "signature", "error", "fix"],
            [
                [str(g.trials), g.signature, _user(f"{g.error_type}: {g.message}"), _user(g.fix)]
                for g in report.harness_failures
            ],
        )
    if report.inferred_intents:
        out += [f"## Inferred intents ({len(report.inferred_intents)})", ""]
        out += _table(
            ["ticket", "task type", "source", "evidence"],
            [
                [
                    _user(ticket_id),
                    _user(str(found.get("task_type", ""))),
                    _user(str(found.get("source", ""))),
                    _user("; ".join(f"{f}: {how}" for f, how in (found.get("evidence") or {}).items())),
                ]
                for ticket_id, found in report.inferred_intents.items()
            ],
        )
    out += [f"## Alerts ({len(report.alerts)})", ""]
    if report.alerts:
        out += _table(
            ["fired at", "rule", "task type", "message"],
            [
                [
                    when(a.fired_at),
                    _user(a.rule),
                    _user(a.task_type or "overall"),
                    _user(
                        a.message + ("" if a.baseline is None else f" Baseline: {pct(a.baseline)}, {a.baseline_note}.")
                    ),
                ]
                for a in report.alerts
            ],
        )
    else:
        out += ["No alert fired this period.", ""]
    return "\n".join(out).rstrip() + "\n"
