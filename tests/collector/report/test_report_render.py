"""report.json against its shipped schema; write_report's three files; the HTML needs nothing but itself."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from passhat.collector.report import (
    BackendChange,
    Report,
    ReportWriteError,
    TrialResult,
    build_report,
    render_html,
    render_markdown,
    report_schema,
    write_report,
)
from passhat.collector.report._format import ci, paired_interval, when
from tests.collector.report.report_synthetic import synthetic_input

ISSUE_KEYS = {"period", "k", "overall", "unweighted", "task_types", "not_replayable", "alerts"}
OVERALL_KEYS = {"pass_at_1", "pass_at_k", "pass_hat_k", "expected_failed_tickets_per_day"}
TASK_TYPE_KEYS = {
    "domain",
    "task_type",
    "daily_volume",
    "tickets_sampled",
    "trials_per_ticket",
    "pass_at_1",
    "pass_at_k",
    "pass_hat_k",
    "pass_hat_k_ci",
    "signatures",
}


def _validator() -> jsonschema.Draft202012Validator:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _round_trip(report: Report) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json.dumps(report.to_json()))
    return document


def test_report_json_has_the_issue_keys(synthetic_report: Report) -> None:
    document = _round_trip(synthetic_report)
    assert document.keys() >= ISSUE_KEYS
    assert document["overall"].keys() >= OVERALL_KEYS
    assert {"pass_at_1", "pass_at_k", "pass_hat_k"} <= document["unweighted"].keys()
    assert len(document["task_types"]) == 6
    for row in document["task_types"]:
        assert row.keys() >= TASK_TYPE_KEYS


def test_report_json_satisfies_the_shipped_schema(synthetic_report: Report) -> None:
    _validator().validate(_round_trip(synthetic_report))


def test_report_without_traffic_or_history_satisfies_the_schema() -> None:
    bare = dataclasses.replace(
        synthetic_input(k=3, resamples=30), traffic=[], previous=[], alerts=[], not_replayable=[]
    )
    document = _round_trip(build_report(bare))
    assert document["overall"]["pass_at_1"] is None
    _validator().validate(document)


def test_a_report_of_perfect_task_types_stays_within_probabilities() -> None:
    base = synthetic_input(k=3, resamples=30)
    perfect = [dataclasses.replace(t, passed=True, signature=None) for t in base.trials]
    document = _round_trip(build_report(dataclasses.replace(base, trials=perfect)))
    _validator().validate(document)
    assert document["overall"]["pass_hat_k"] == 1.0


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("overall", "pass_hat_k"), 1.2),
        (("task_types", 0, "pass_hat_k_ci"), [0.1]),
        (("period",), "week 48"),
        (("alerts", 0, "fired_at"), "yesterday"),
    ],
)
def test_schema_rejects_a_broken_report(synthetic_report: Report, path: tuple[str | int, ...], value: object) -> None:
    document = _round_trip(synthetic_report)
    target: Any = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        _validator().validate(document)


def test_schema_requires_every_issue_key(synthetic_report: Report) -> None:
    for key in ISSUE_KEYS:
        document = _round_trip(synthetic_report)
        del document[key]
        with pytest.raises(jsonschema.ValidationError, match=key):
            _validator().validate(document)


def test_write_report_writes_the_three_files(synthetic_report: Report, tmp_path: Path) -> None:
    paths = write_report(synthetic_report, tmp_path / "out" / "2026-W48")
    assert {kind: p.name for kind, p in paths.items()} == {
        "html": "report.html",
        "json": "report.json",
        "md": "report.md",
    }
    assert json.loads(paths["json"].read_text(encoding="utf-8")) == _round_trip(synthetic_report)
    assert paths["html"].read_text(encoding="utf-8").startswith("<!doctype html>")
    assert paths["md"].read_text(encoding="utf-8").startswith("# Reliability report 2026-W48")
    assert sorted(p.name for p in paths["html"].parent.iterdir()) == ["report.html", "report.json", "report.md"]


def test_write_report_into_a_file_path_is_one_clear_error(synthetic_report: Report, tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(ReportWriteError, match=f"cannot create the report folder {blocker}"):
        write_report(synthetic_report, blocker)


def test_html_references_nothing_outside_itself(synthetic_report: Report) -> None:
    page = render_html(synthetic_report)
    assert not re.search(r"""\b(?:src|href|action|poster)\s*=""", page, re.IGNORECASE)
    assert "@import" not in page and "url(" not in page
    # The only URL is the SVG namespace name, which is an identifier, never fetched.
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in page


def test_html_escapes_what_came_from_tickets(synthetic_report: Report) -> None:
    base = synthetic_input(k=3, resamples=30)
    hostile = "</script><script>alert(1)</script>"
    trials = [dataclasses.replace(t, final_response=hostile) if isinstance(t, TrialResult) else t for t in base.trials]
    page = render_html(build_report(dataclasses.replace(base, trials=trials, agent="<b>agent</b>")))
    assert hostile not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in page  # inside the embedded JSON
    assert "&lt;b&gt;agent&lt;/b&gt;" in page
    assert page.count("<script") == 2


def test_html_has_every_section(synthetic_report: Report) -> None:
    page = render_html(synthetic_report)
    for section in (
        "headline",
        "curve",
        "domains",
        "task-types",
        "signatures",
        "attempts",
        "trend",
        "calculator",
        "not-replayable",
        "alerts",
    ):
        assert f'<section id="{section}">' in page
    assert 'id="k-range"' in page and 'id="curve-chart"' in page
    assert "Simulated agent" not in page


def test_simulated_figures_are_said_plainly(simulated_report: Report) -> None:
    page = render_html(simulated_report)
    assert "These figures come from a simulated agent, not from your production agent" in page
    assert "simulated agent" in render_markdown(simulated_report)
    assert simulated_report.to_json()["simulated"] is True


def test_markdown_lists_the_figures(synthetic_report: Report) -> None:
    text = render_markdown(synthetic_report)
    weighted = synthetic_report.overall.weighted
    assert f"**pass^20** (traffic-weighted): {100 * (weighted.pass_hat_k or 0):.1f}%" in text
    assert "| retail/refund |" in text
    assert "## insurance/claim_intake: 20 attempts side by side" in text or "attempts side by side" in text
    assert "| refund-917 | refund | no before-image of the order was captured |" in text
    assert "pass_hat_k_drop" in text


def test_markdown_shows_what_came_from_tickets_as_text() -> None:
    base = synthetic_input(k=3, resamples=30)
    hostile = "<img src=x onerror=alert(1)> | [click](javascript:alert(1)) *bold* \\| `code`"
    trials = [dataclasses.replace(t, final_response=hostile) if isinstance(t, TrialResult) else t for t in base.trials]
    text = render_markdown(build_report(dataclasses.replace(base, trials=trials, agent="<b>agent</b>")))
    assert "<img" not in text and "<b>" not in text
    escaped = "&lt;img src=x onerror=alert(1)&gt; \\| \\[click\\](javascript:alert(1)) \\*bold\\* \\\\\\| \\`code\\`"
    assert escaped in text
    assert "agent &lt;b&gt;agent&lt;/b&gt;" in text
    side_by_side = text.split("attempts side by side", 1)[1].split("## Week over week", 1)[0]
    rows = [line for line in side_by_side.splitlines() if line.startswith("| ")]
    # every row keeps the header's six cells: no pipe of the response ends a cell
    assert {len(re.findall(r"(?<!\\)\|", row.replace("\\\\", ""))) for row in rows} == {7}


def test_partly_simulated_trials_are_counted_in_the_statement() -> None:
    base = synthetic_input(k=3, resamples=30)
    trials = [dataclasses.replace(t, simulated=t.task_type == "refund") for t in base.trials]
    page = render_html(build_report(dataclasses.replace(base, trials=trials)))
    assert "60 of the 294 trials were run by a simulated agent" in page


def test_a_period_without_traffic_says_why_the_weighted_figures_are_blank() -> None:
    page = render_html(build_report(dataclasses.replace(synthetic_input(k=3, resamples=30), traffic=[])))
    assert "No production traffic was recorded for the measured task types this period" in page
    assert "over sampled tickets (no traffic recorded)" in page


def test_attempts_side_by_side_show_only_the_columns_that_changed() -> None:
    base = synthetic_input(resamples=50)
    change = BackendChange(
        "orders", {"order_id": "#W1"}, "update", {"status": "delivered", "plan_id": "basic"},
        {"status": "refunded", "plan_id": "basic"},
    )  # fmt: skip
    trials = [dataclasses.replace(t, changes=[change]) for t in base.trials]
    text = render_markdown(build_report(dataclasses.replace(base, trials=trials)))
    assert 'status: "delivered" → "refunded"' in text
    assert "plan_id" not in text


def test_the_header_names_the_agent_version_and_the_run_shown() -> None:
    report_input = dataclasses.replace(
        synthetic_input(resamples=50),
        agent="support-agent",
        agent_version="2.1",
        run_id="run-W48-1",
        run_role="official",
    )
    report = build_report(report_input)
    assert report.to_json()["run"] == {"run_id": "run-W48-1", "role": "official"}
    assert "agent support-agent version 2.1" in render_markdown(report)
    assert "support-agent 2.1 · official run run-W48-1" in render_html(report)


def test_trials_the_harness_broke_are_listed_by_cause_in_json_markdown_and_html() -> None:
    from passhat.collector.reliability import HarnessFailure

    broken = HarnessFailure(
        "infra_error", "UserError", "a tool name conflicts with existing tool: 'get_order'", 3,
        "the agent already has a tool named get_order: ...",
    )  # fmt: skip
    report = build_report(dataclasses.replace(synthetic_input(), harness_failures=[broken]))
    document = _round_trip(report)
    _validator().validate(document)
    assert document["harness_failures"] == [broken.to_dict()]
    markdown, page = render_markdown(report), render_html(report)
    assert "## Trials the harness broke (3)" in markdown and "the agent already has a tool named get_order" in markdown
    assert 'id="harness-failures"' in page and "UserError: a tool name conflicts with existing tool" in page
    assert "harness broke" not in render_markdown(build_report(synthetic_input()))  # only when there were any


def test_every_figure_has_its_interval_and_count_and_times_read_as_dates(synthetic_report: Report) -> None:
    html, markdown = render_html(synthetic_report), render_markdown(synthetic_report)
    assert when(synthetic_report.generated_at) == "30 Nov 2026, 06:05 UTC"
    assert '<time datetime="2026-11-30T06:05:00+00:00">30 Nov 2026, 06:05 UTC</time>' in html
    assert "generated 30 Nov 2026, 06:05 UTC" in markdown
    assert "2026-11-30T06:05:00" not in markdown
    for domain in synthetic_report.domains:  # pass@k of each domain, with its interval
        assert ci(domain.weighted.pass_at_k_ci) in html and ci(domain.weighted.pass_at_k_ci) in markdown
    now = synthetic_report.trend[-1]  # week over week: the figure's interval, the change's interval, the tickets
    assert now.pass_hat_k_change_ci is not None and now.tickets == synthetic_report.overall.tickets_sampled
    change = paired_interval(list(now.pass_hat_k_change_ci))
    assert change in html and change in markdown
    assert ci(now.pass_hat_k_ci) in html
    # Signatures as shares of the failed trials with their counts, and an all-task-types row.
    refund = next(t for t in synthetic_report.task_types if t.task_type == "refund")
    label, count = next(iter(refund.signatures.items()))
    assert f"{label} {count / refund.failed_trials:.0%} ({count})" in html
    assert "all task types" in html
