"""Sandbox fidelity, per task type: the production pass rate beside the replays' pass@1 and the overlap test."""

from __future__ import annotations

from passhat.collector.report import ProductionGrade, ReportInput, TrialResult, build_report, render_markdown
from passhat.collector.report._fidelity import sandbox_fidelity


def _grades(task_type: str, passed: int, failed: int) -> list[ProductionGrade]:
    return [ProductionGrade("retail", task_type, f"{task_type}-{n}", n < passed, None if n < passed else "wrong_entity")
            for n in range(passed + failed)]  # fmt: skip


def test_intervals_that_overlap_agree_and_apart_disagree() -> None:
    rows = sandbox_fidelity(
        _grades("refund", 18, 2) + _grades("exchange", 20, 0),
        {("retail", "refund"): (0.85, (0.6, 0.95), 8), ("retail", "exchange"): (0.1, (0.02, 0.4), 8)},
        {},
    )
    by_type = {row.task_type: row for row in rows}
    refund, exchange = by_type["refund"], by_type["exchange"]
    assert refund.production_rate == 0.9 and refund.agrees is True
    assert refund.production_ci is not None and refund.production_ci[0] < 0.9 < refund.production_ci[1]
    assert refund.production_signatures == {"wrong_entity": 2}
    assert exchange.agrees is False and exchange.difference is not None and exchange.difference > 0.8


def test_a_figure_missing_on_one_side_neither_agrees_nor_differs() -> None:
    rows = sandbox_fidelity(_grades("refund", 3, 0), {("retail", "exchange"): (0.5, (0.2, 0.8), 3)}, {})
    assert [(r.task_type, r.agrees) for r in rows] == [("exchange", None), ("refund", None)]
    assert rows[0].production_rate is None and rows[1].replay_pass_at_1 is None


def test_the_tickets_that_differ_are_those_whose_verdict_differs_from_most_attempts() -> None:
    grades = [
        ProductionGrade("retail", "refund", "T-1", True),
        ProductionGrade("retail", "refund", "T-2", False, "wrong_entity"),
        ProductionGrade("retail", "refund", "T-3", False, "unresolved"),
        ProductionGrade("retail", "refund", "T-4", True),
    ]
    attempts = {"T-1": (1, 4), "T-2": (4, 4), "T-3": (0, 4), "T-4": (2, 4)}
    (row,) = sandbox_fidelity(grades, {("retail", "refund"): (0.4, (0.1, 0.8), 4)}, attempts)
    assert [(d.ticket_id, d.production, d.replays_passed) for d in row.differing] == [
        ("T-1", "passed", 1),
        ("T-2", "wrong_entity", 4),
    ]


def test_a_report_without_production_verdicts_has_no_fidelity_section() -> None:
    trials = [TrialResult("retail", "refund", "T-1", a, passed=True) for a in range(1, 3)]
    report = build_report(ReportInput(period="2026-W48", k=2, trials=trials))
    assert report.to_json()["sandbox_fidelity"]["task_types"] == []
    assert "Sandbox fidelity" not in render_markdown(report)
